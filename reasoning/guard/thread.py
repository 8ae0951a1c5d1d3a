"""A conversation judged turn by turn against what the thread has already made known (issue 28).

:func:`conversation` (``Guard.conversation``) judges each turn of the covered entity's side
with what was said before it: a turn that adds, for a patient the thread has identified,
what the purpose does not let its recipient know is stopped, with why and a safer turn.

An identifier given in pieces ("her social starts 219", "then 09", "and ends 9999") is put
together: the numbers each recipient has been told are kept in order, and a turn whose number
completes, with the pieces told before it, a number the readers take for an identifier (a
social security, phone, record or account number) is judged as if it carried the whole
number, so it is stopped at the piece that completes it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from privacy_checklist.reasoning.guard.normalise import normalise
from privacy_checklist.reasoning.guard.phi_data import _nearest_context, _word_at, phi_data

if TYPE_CHECKING:
    from privacy_checklist.reasoning.guard.message import Guard, Guarded
    from privacy_checklist.reasoning.guard.purpose import SpanDecision

#: a number as written, its digits and the hyphens, spaces or dots between them
_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?!\d)|\d(?:[\d.\s-]*\d)?")
#: identifier types that are numbers (a date or an age is not put together from pieces)
NUMBERS = frozenset(
    {
        "SSN",
        "PHONE",
        "FAX",
        "MRN",
        "ACCOUNT_NUMBER",
        "HEALTH_PLAN_NUMBER",
        "LICENSE",
        "DEVICE_ID",
        "VEHICLE",
        "OTHER_ID",
    }
)
#: the numbers whose shape alone says what they are, by their groups of digits: pieces that
#: fall on a shape's groups ("912", then "55", then "0193") make that number though no word
#: names it (a piece may hold more than one group: "503555", then "0119")
SHAPES = (
    ("SSN", (3, 2, 4)),
    ("PHONE", (3, 3, 4)),
    ("PHONE", (1, 3, 3, 4)),
    ("PHONE", (3, 4)),
)
#: the fewest digits a number put together from pieces has, and the most pieces it takes
MIN_DIGITS = 7
MAX_PIECES = 4
#: a turn with more numbers than this lists values; it gives no pieces
MAX_IN_TURN = 3
#: the words before a number as long as a whole identifier that say it is only its first part
_PART = re.compile(
    r"(?i)\b(?:starts?|begins?|first|part|chunk|half|then|continues)\b\W*(?:\w+\W+){0,2}$"
)
#: the most digits an identifying number has
MAX_DIGITS = 12
#: what the readers read as a value, not an identifying number: no piece of one
VALUES = frozenset({"DATE", "AGE"})
#: a number that counts digits ("the first 3 are 5 3 1", "it's 10 digits") is no piece
_COUNT = re.compile(r"(?i)\b(?:first|last|middle|next|other|remaining)\s*$")
_COUNTED = re.compile(r"(?i)\s*(?:more\s+)?(?:digits?|numbers?|characters?|total)\b")
#: after a number, what makes it a value: a time, a share, a measure ("2:14", "35%",
#: "6-month", "40 units"); before it, money ("$85")
_UNIT = re.compile(
    r"(?i)(?::\d|\s*(?:%|percent\b)|(?:\s*[\u2013-]\s*\d+)?[\s-]?(?:business\s+)?(?:mo|months?|days?|weeks?|wks?|years?|yrs?|hours?"
    r"|hrs?|min|mg|mcg|ml|l|cc|units?|kg|lbs?|pm|am|a\.m\.|p\.m\.)\b)"
)


@dataclass(frozen=True)
class Piece:
    """A number as written in a turn: its range there, its digits, the identifier type the
    words just before it name ("" when none) and the turn."""

    start: int
    end: int
    digits: str
    named: str
    turn: int = 0


@dataclass
class Told:
    """What one recipient has been told: the numbers, in order."""

    pieces: list[Piece] = field(default_factory=list)


@dataclass(frozen=True)
class Completed:
    """A number a turn completes: its last piece, the whole number, its type, and the earlier
    turns that gave the other pieces."""

    piece: Piece
    whole: str
    type: str
    turns: tuple[int, ...]
    shaped: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"number": self.whole, "type": self.type, "with_turns": list(self.turns)}


def numbers(text: str, turn: int = 0, read: list[Any] | None = None) -> list[Piece]:
    """The numbers in ``text`` that could be a piece of one (digits said in words count: the
    text is read through :func:`.normalise.normalise`), each typed by the words just before
    it. Not a piece: a number the readers read as something other than an identifying number
    (``read``: a date, an age, a code, a dose), a time, a year, or one as long as a whole
    identifier."""
    found = normalise(text)
    out = []
    for match in _NUMBER.finditer(found.text):
        start, end = found.original(*match.span())
        digits = re.sub(r"\D", "", match.group())
        named = _nearest_context(found.text[: match.start()])[0]
        if (
            len(digits) > MAX_DIGITS
            or "," in match.group()
            or (len(digits) >= MIN_DIGITS and not _PART.search(found.text[: match.start()]))
            or (not named and re.fullmatch(r"(?:19|20)\d\d", digits))
            or found.text[max(0, match.start() - 1) : match.start()] in ("$", ":")
            or _UNIT.match(found.text[match.end() :])
            or _COUNT.search(found.text[: match.start()])
            or _COUNTED.match(found.text[match.end() :])
            or any(
                s.start < end
                and start < s.end
                and ((s.kind == "health" and s.type != "CODE") or s.type in VALUES)
                for s in read or ()
            )
        ):
            continue
        out.append(Piece(start, end, digits, named, turn))
    if len(out) > MAX_IN_TURN:
        return []  # a list of values (doses, vitals, times), not a number told in parts
    later = _named_anywhere(found.text.lower())  # "21 - it's her MRN, not the insurance one"
    return [replace(p, named=p.named or later) for p in out]


def _named_anywhere(text: str) -> str:
    """The identifier type the last context word anywhere in ``text`` names ("" when none)."""
    kind, where = "", -1
    for context in phi_data()["codes"]["contexts"]:
        for word in context["words"]:
            at = _word_at(text, word.strip())
            if at > where and context["type"] in NUMBERS:
                kind, where = context["type"], at
    return kind


def shaped(pieces: Sequence[Piece]) -> str:
    """The number type whose groups the pieces fall on ("" when none)."""
    cuts: set[int] = set()
    at = 0
    for piece in pieces[:-1]:
        at += len(piece.digits)
        cuts.add(at)
    total = at + len(pieces[-1].digits)
    for kind, groups in SHAPES:
        bounds = {sum(groups[: i + 1]) for i in range(len(groups) - 1)}
        if sum(groups) == total and cuts <= bounds:
            return kind
    return ""


def completed(told: Told, now: list[Piece]) -> list[Completed]:
    """The numbers this turn completes with the pieces told before it (at most
    :data:`MAX_PIECES` in all, at least :data:`MIN_DIGITS` digits): a number is an identifier
    when the words of its first piece's turn name an identifier type, or when its pieces fall on
    the groups of a social security or phone number (:data:`SHAPES`). A number this turn gives
    whole is the turn's own."""
    out = []
    for piece in now:
        found = _complete(told.pieces, piece)
        if found:
            out.append(found)
    return out


def _complete(told: list[Piece], piece: Piece) -> Completed | None:
    """The longest run of pieces told before ``piece`` that ``piece`` completes into a number:
    named by its first piece's turn, or shaped. (Named by any of its pieces' turns, it also
    took numbers before the first piece in: more stops where none was labelled.)"""
    for size in range(MAX_PIECES - 1, 0, -1):
        earlier = told[-size:]
        if len(earlier) < size:
            continue
        pieces = [*earlier, piece]
        if not MIN_DIGITS <= sum(len(p.digits) for p in pieces) <= MAX_DIGITS:
            continue
        shape = shaped(pieces)
        kind = pieces[0].named if pieces[0].named in NUMBERS else shape
        if kind:
            whole = "-".join(p.digits for p in pieces)
            turns = tuple(sorted({p.turn for p in earlier}))
            return Completed(piece, whole, kind, turns, bool(shape))
    return None


def conversation(
    guard: Guard, turns: Sequence[dict[str, Any]], purpose: str | None = None
) -> list[dict[str, Any]]:
    """Each turn of the covered entity's side judged against what the thread has already
    made known (the module docstring). A patient is identified by anyone's words (a caller
    naming the patient is enough); a permission stated earlier in the thread ("he signed the
    release this morning") counts. A thread is one exchange: what was said in it is known to
    its parties."""
    from privacy_checklist.reasoning.guard.message import check_message

    earlier: list[str] = []
    identity: list[str] = []
    told: dict[str, Told] = {}
    out: list[dict[str, Any]] = []
    assert guard.phi is not None
    for number, turn in enumerate(turns, start=1):
        speaker = str(turn.get("speaker", "")).strip()
        recipient = str(turn.get("recipient", "")).strip()
        text = check_message(turn.get("text"), f"turn {number}")
        result: dict[str, Any] = {"turn": number, "speaker": speaker, "recipient": recipient}
        judged = covered_side(guard, speaker)
        if not judged:
            result.update(judged=False, stop=False, why="not the covered entity's turn")
            out.append(result)
        read = guard.phi.find(text)
        if judged:
            thread = told.setdefault(recipient.lower(), Told())
            now = numbers(text, number, read)
            pieces = completed(thread, now)
            out.append(_judge_turn(guard, result, text, purpose, earlier, identity, pieces))
            thread.pieces += now
            for done in pieces:  # a number whose shape is whole has spent its pieces
                if done.shaped:
                    thread.pieces = thread.pieces[thread.pieces.index(done.piece) + 1 :]
        earlier.append(text)
        # what identifies the patient: the turns' words, and the parties' own names
        # ("reviewer Dana K.", "caller who says she is Rick Hensley's ex-wife")
        identity += [s.text for s in read if s.kind == "identifier"]
        for words in (speaker, recipient):
            identity += [s.text for s in guard.phi.find(words) if s.kind == "identifier"]
    return out


def _judge_turn(
    guard: Guard,
    result: dict[str, Any],
    text: str,
    purpose: str | None,
    earlier: list[str],
    identity: list[str],
    pieces: list[Completed],
) -> dict[str, Any]:
    known = ", ".join(dict.fromkeys(identity))
    read = text
    for done in sorted(pieces, key=lambda c: c.piece.start, reverse=True):
        # judged as if it said the whole number
        read = read[: done.piece.start] + done.whole + read[done.piece.end :]
    guarded = guard.check(
        read,
        to=result["recipient"],
        purpose=purpose,
        sender=result["speaker"],
        known=known,
        earlier=" ".join(earlier),
    )
    added = list(guarded.unneeded)
    identified = (
        bool(known)
        or any(d.span.kind == "identifier" for d in guarded.decisions)
        or bool(guarded.purpose.spec.get("identified"))
    )
    stop = bool(added) and (identified or any(d.span.kind == "identifier" for d in added))
    unread = (
        guarded.purpose.key is None
        and identified
        and any(d.span.kind == "health" for d in guarded.decisions)
    )
    if unread:
        added = [d for d in guarded.decisions if d.span.kind == "health"]
        stop = True
    result.update(
        judged=True,
        stop=stop,
        verdict=guarded.verdict,
        purpose=guarded.purpose.to_json(),
        spans=[d.to_json() for d in guarded.decisions],
    )
    if pieces:
        result["completed"] = [c.to_json() for c in pieces]
    if not stop:
        result["why"] = guarded.explanation
        return result
    return _stopped(result, guarded, added, pieces, text, unread)


def _stopped(
    result: dict[str, Any],
    guarded: Guarded,
    added: list[SpanDecision],
    pieces: list[Completed],
    text: str,
    unread: bool,
) -> dict[str, Any]:
    """A stopped turn's why (what it would disclose, and the earlier turns a number it
    completes was put together with) and its safer turn."""
    what = "; ".join(f"'{d.span.text}' ({d.why})" for d in added[:4])
    whole = [c for c in pieces if any(c.whole in d.span.text for d in added)]
    if whole:
        turns = sorted({t for c in whole for t in c.turns})
        what += f" (put together with what turn{'s' * (len(turns) > 1)} {_and(turns)} told)"
    if unread:
        what += f"; hold it until the recipient is known ({guarded.purpose.how})"
    who = result["recipient"] or "the recipient"
    result["why"] = f"Stopped: with what {who} already knows, this turn would disclose {what}."
    safer = guarded.rewrite
    for done in pieces if safer else ():  # a needed number goes as it was written
        safer = (safer or "").replace(done.whole, text[done.piece.start : done.piece.end])
    result["safer"] = safer
    return result


def _and(numbers: list[int]) -> str:
    words = [str(n) for n in numbers]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def covered_side(guard: Guard, speaker: str) -> bool:
    """Whether ``speaker`` speaks for the covered entity (its roles or its staff's words)."""
    from privacy_checklist.reasoning.guard.message import COVERED

    if not speaker:
        return False
    roles = guard._roles(speaker)
    if roles & COVERED or "workforce" in roles:
        return True
    if roles:
        return False  # an employer, a relative, a lawyer: someone the norms give a role
    return bool(re.search(guard._staff_words, speaker))
