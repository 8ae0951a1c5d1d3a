"""Minimum necessary before a message leaves: guard a draft, a prompt, a conversation.

:class:`Guard` ``.check(text, to=..., purpose=..., sender=...)`` reads

1. the purpose, from the words a person types for it and for the recipient (through the
   purposes of ``reasoning/data/guard_purposes.json`` and the role graph); one that cannot be
   read is reported (``purpose.key`` None), never guessed;
2. the flow and its verdict from the checklist reasoner: the sender (default: the user's own
   covered entity), the recipient's roles, the condition the purpose states (treatment,
   payment, to the individual ...) and the condition it needs (an authorization, a court
   order, a waiver, a business associate agreement) read from the options, the message and
   what a conversation said before, stated or denied;
3. every span of protected health information (:mod:`privacy_checklist.reasoning.guard.phi`),
   and for each whether the purpose needs it and why, naming the norm: nothing is flagged
   where minimum necessary does not apply (164.502(b)(2): treatment, the individual, an
   authorization, required by law);
4. the rewrite: unneeded identifiers generalised (names to roles, dates to the year, ages
   over 89 to "90 or older", addresses to the state) or removed, sentences carrying only
   unneeded health information dropped, a message with no permission at all replaced by a
   decline; then re-checked (no unneeded identifier left, every needed span kept, the
   verdict recomputed).

:meth:`Guard.conversation` stops the turn that would complete a prohibited disclosure (a thread:
:mod:`.thread`); :meth:`Guard.fluent_rewrite` asks an LLM for a rewrite held to the same re-check.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from privacy_checklist.reasoning.checklist.decide import decide
from privacy_checklist.reasoning.guard.beside import MINIMUM_NECESSARY, condition_read, judge
from privacy_checklist.reasoning.guard.need import SURE, NeedModels
from privacy_checklist.reasoning.guard.need import shipped as shipped_need
from privacy_checklist.reasoning.guard.normalise import html_text
from privacy_checklist.reasoning.guard.phi import PhiReader, PhiSpan
from privacy_checklist.reasoning.guard.phi_data import identifier_types, own_parties
from privacy_checklist.reasoning.guard.purpose import (
    PurposeReading,
    SpanDecision,
    has_words,
    health_rule,
    purposes_data,
    recipient_parts,
    word_list,
)
from privacy_checklist.reasoning.guard.thread import conversation
from privacy_checklist.reasoning.reading.types import Fact, Flow
from privacy_checklist.reasoning.text import sentence_spans

if TYPE_CHECKING:
    from privacy_checklist.kg.kb import KnowledgeBase
    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner
    from privacy_checklist.reasoning.verdict import Verdict

#: who sends when the person does not say: the user's own covered entity
DEFAULT_SENDER = "our practice's staff"
COVERED = frozenset({"covered entity", "business associate", "health care provider", "health plan"})
#: the most characters one message may hold
MAX_CHARS = 20_000
PERMIT, PROHIBIT = "permit", "prohibit"
#: what an identifier that has no general form becomes in a rewrite
MARKERS = {"PHOTO": "[photo removed]", "BIOMETRIC": "[biometric removed]", "URL": "[link removed]"}
DECLINE = (
    "We can't share information about a patient without the patient's written authorization "
    "or a court order; please send either and we will respond."
)


class GuardError(ValueError):
    """The input cannot be guarded (empty, too long, not text); the message says why."""


@dataclass(frozen=True)
class Recheck:
    """The rewrite checked again: identifiers the purpose does not need that are still there,
    needed spans that went missing, and the verdict on the rewrite."""

    leaked: list[dict[str, Any]]
    dropped: list[dict[str, Any]]
    verdict: str
    explanation: str

    @property
    def passed(self) -> bool:
        return not self.leaked and not self.dropped

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "leaked": self.leaked,
            "dropped": self.dropped,
            "verdict": self.verdict,
            "explanation": self.explanation,
        }


@dataclass
class Guarded:
    """A draft message guarded: the flow, the spans and what each is for, the rewrite."""

    text: str
    sender: str
    recipient: str
    purpose: PurposeReading
    flow: dict[str, Any]
    minimum_necessary: str
    verdict: str
    explanation: str
    decisions: list[SpanDecision]
    rewrite: str | None = None
    recheck: Recheck | None = None
    notes: list[str] = field(default_factory=list)
    #: the LLM's fluent rewrite, when one was asked for: its text, whether the re-check
    #: accepted it, and why not
    fluent: dict[str, Any] | None = None
    context: Any = field(default=None, repr=False, compare=False)

    @property
    def unneeded(self) -> list[SpanDecision]:
        return [d for d in self.decisions if d.needed is False]

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "explanation": self.explanation,
            "text": self.text,
            "sender": self.sender,
            "recipient": self.recipient,
            "purpose": self.purpose.to_json(),
            "minimum_necessary": self.minimum_necessary,
            "flow": self.flow,
            "spans": [d.to_json() for d in self.decisions],
            "rewrite": self.rewrite,
            "recheck": self.recheck.to_json() if self.recheck else None,
            "notes": self.notes,
            **({"fluent": self.fluent} if self.fluent is not None else {}),
        }


def check_message(text: Any, what: str = "the message") -> str:
    """The message as text, or a :class:`GuardError` saying in one line why not."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise GuardError(f"{what} is not UTF-8 text (byte {exc.start})") from exc
    if not isinstance(text, str):
        raise GuardError(f"{what} must be text, not {type(text).__name__}")
    if "\x00" in text:
        raise GuardError(f"{what} is binary, not text")
    if not text.strip():
        raise GuardError(f"{what} is empty")
    if len(text) > MAX_CHARS:
        raise GuardError(
            f"{what} has {len(text):,} characters; the guard reads one message of at most "
            f"{MAX_CHARS:,}"
        )
    if re.search(r"<(?:html|body|p|div|br|span)\b", text, re.I):
        text = html_text(text)
        if not text.strip():
            raise GuardError(f"{what} is HTML with no text in it")
    return str(text)


def json_lines(lines: Iterable[str], name: str, keys: Sequence[str]) -> list[dict[str, Any]]:
    """One JSON object a line, each with the text fields ``keys``; a ValueError names the line
    at fault and what it needs. Blank lines are skipped; a file with none is an error."""
    out: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if "\x00" in line:
            raise ValueError(f"{name}:{number}: binary, not JSON lines")
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name}:{number}: not JSON ({exc.msg}); one object a line") from exc
        if not isinstance(row, dict) or not all(
            isinstance(row.get(k), str) and row[k].strip() for k in keys
        ):
            wanted = ", ".join(f'"{k}": "..."' for k in keys)
            raise ValueError(f"{name}:{number}: needs {{{wanted}}}")
        out.append(row)
    if not out:
        raise ValueError(f"{name}: nothing in the file")
    return out


@dataclass(frozen=True)
class _Context:
    """The flow a message is judged in (kept for the re-check of its rewrite)."""

    sender: str
    to: str
    purpose: PurposeReading
    flow: Flow
    verdict: Verdict
    permitted: bool | None
    rests: str
    known: str = ""


@dataclass
class Guard:
    """The guard (see the module docstring).

    Args:
        kb: the knowledge base.
        reasoner: the checklist reasoner (default: one on ``kb``, the checklist alone).
        phi: the span reader (default: one on ``kb``, with spaCy when installed).
        presidio: also run Presidio's analyzer for names and places ("auto": when installed).
    """

    kb: KnowledgeBase
    reasoner: ChecklistReasoner | None = None
    phi: PhiReader | None = None
    presidio: Any = False
    #: the purpose and need models (:mod:`.need`): "shipped", others fitted apart, or None for
    #: the data file's words alone and no sentence judged beside the purpose
    need: NeedModels | str | None = "shipped"

    def __post_init__(self) -> None:
        need = shipped_need() if self.need == "shipped" else self.need
        if isinstance(need, str):
            raise GuardError(f"need: {need!r} is not a model; use 'shipped' or None")
        self._need: NeedModels | None = need
        if self.reasoner is None:
            from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner

            self.reasoner = ChecklistReasoner(self.kb, blend=False)
        if self.phi is None:
            self.phi = PhiReader(self.kb, presidio=self.presidio)
        data = purposes_data()
        self._purposes: dict[str, dict[str, Any]] = data["purposes"]
        dig = data["digression"]
        self._digression = re.compile(
            rf"(?i)(?<![\w-])(?:{'|'.join(re.escape(c) for c in dig['cues'])})(?![\w-])"
            rf"|{dig['years']}"
        )
        self._justified = re.compile(rf"(?i)(?:{'|'.join(re.escape(c) for c in dig['justified'])})")
        self._instruction = re.compile(
            rf"(?i)\b(?:{'|'.join(re.escape(c) for c in dig['instructions'])})\b"
        )
        self._birth = re.compile(data["dates"]["birth"])
        from privacy_checklist.reasoning.guard.phi_data import phi_data

        names = phi_data()["names"]
        self._kin_words = sorted(names["kin"], key=len, reverse=True)
        self._staff_words = re.compile(
            rf"(?i)\b(?:{'|'.join(re.escape(w) for w in data['staff_words'])})\b"
        )
        cut = "|".join(re.escape(w) for w in phi_data()["places"]["cut_before_place"])
        self._place_lead = re.compile(rf"(?:\b(?:{cut})\s+)$")
        persons = sorted({*names["kin"], *names["lead_words"][:18]}, key=len, reverse=True)
        self._person_before = re.compile(
            rf"(?i)\b(?:{'|'.join(re.escape(w) for w in persons)})\s*[:,]?\s*$"
        )
        self._denied = re.compile(
            r"(?i)\b(?:without|no|not|never|until|pending|before|once|lacks?|missing|"
            r"don't|doesn't|didn't|haven't|hasn't|can't|cannot|won't)\b[^.;]*$"
        )
        self._labels = re.compile(data["labels"])

    # ----------------------------------------------------------------- purpose

    def read_purpose(self, purpose: str | None, to: str | None, text: str = "") -> PurposeReading:
        """The purpose from what the person typed. The purpose model reads the recipient and
        the purpose's words into a purpose the law names (:mod:`.need`); below its floor, or
        below :data:`.need.SURE` when the data file's words (:meth:`read_by_words`) read
        another guard purpose, the words decide; reading nothing, it asks what to state."""
        models = self._need
        guess = models.purpose.read(to, purpose) if models and (purpose or to) else None
        law = purposes_data()["law"]
        sure = guess.probability if guess is not None else -1.0
        words = self.read_by_words(purpose, to, text) if sure < SURE else None
        other = bool(words and words.key and guess and words.key != law[guess.key]["base"])
        if models is None or guess is None or sure < models.floor or other:
            reading = words or self.read_by_words(purpose, to, text)
            # the words decide the guard purpose; the model, which of the law's it is
            within = {k for k, v in law.items() if v["base"] == reading.key}
            best = guess.best_of(within) if guess and within else None
            if best is None:
                return reading
            how = f"{reading.how}; within it, {law[best]['label']} ({law[best]['paragraph']})"
            return replace(reading, how=how, law=best)
        assert guess is not None
        named = law[guess.key]
        how = (
            f"read as {named['label']} ({named['paragraph']}) from what was typed, "
            f"p={guess.probability:.2f} (next: {guess.second}, p={guess.second_probability:.2f})"
        )
        return PurposeReading(named["base"], how, purpose or "", law=guess.key)

    def read_by_words(self, purpose: str | None, to: str | None, text: str = "") -> PurposeReading:
        """The purpose from the data file's words: the purpose's and the recipient's (its head
        counting more than what follows it or is in brackets; a recipient that defines the flow,
        such as an outside model, decides it), the message's only when neither is given. None,
        with why, when nothing reads."""
        scores: dict[str, float] = {}
        how: dict[str, list[str]] = {}
        head, rest = recipient_parts(to or "")
        plain = recipient_parts(re.sub(r"\([^)]*\)", " ", to or ""))[0]
        roles = self._roles(plain) if plain else frozenset()
        for key, spec in self._purposes.items():
            hits: list[str] = []
            score = 0.0
            if purpose:
                found = has_words([*spec.get("words", []), *key.split("_")], purpose)
                score += 4 * len(found)
                hits += [f"purpose '{w}'" for w in found]
            if head or rest:
                found = has_words(spec.get("recipient_words", []), head)
                score += 3 * len(found)
                hits += [f"recipient '{w}'" for w in found]
                decisive = has_words(spec.get("recipient_decides", []), head)
                if decisive:
                    score += 8
                    hits.append("the recipient decides the purpose")
                also = has_words([] if spec.get("head_only") else spec["recipient_words"], rest)
                score += len(also)
                hits += [f"recipient's words '{w}'" for w in also]
                by_role = sorted(set(spec.get("roles", [])) & roles)
                score += len(by_role)
                hits += [f"recipient's role '{r}'" for r in by_role]
            named = self._named_recipient(key, plain, text)
            if named:
                score += 3
                hits.append(named)
            if not purpose and not to and text:
                found = has_words([*spec.get("words", []), *spec["recipient_words"]], text[:300])
                score += len(found)
                hits += [f"message '{w}'" for w in found]
            if score:
                scores[key], how[key] = score, hits
        if not scores:
            said = " / ".join(w for w in (purpose, to) if w) or "the message"
            return PurposeReading(
                None,
                f"no purpose read in {said!r}; say it as one of: "
                + ", ".join(s["label"] for s in self._purposes.values()),
                purpose or "",
            )
        best = max(scores, key=lambda k: scores[k])
        tied = [k for k, v in scores.items() if v == scores[best] and k != best]
        note = f" (tied with {', '.join(tied)}: the first listed wins)" if tied else ""
        if purpose and not any(h.startswith("purpose") for h in how[best]):
            note += f"; the purpose's words {purpose!r} were not read: the recipient decides"
        return PurposeReading(best, "; ".join(how[best]) + note, purpose or "")

    def _named_recipient(self, key: str, head: str, text: str) -> str:
        """For a recipient that is only a person's name ("Lorraine", "Mr. Pike by phone"),
        whom the message speaks to: a relative ("your mom") or the person themself ("your",
        "Hi Lorraine"); "" when it says neither or the recipient has a role."""
        if key not in ("individual", "family") or not head or not self._bare_name(head):
            return ""
        kin = word_list(tuple(self._kin_words)).search(text.lower())
        relative = kin is not None and (
            re.search(rf"(?i)\byour\s+{re.escape(kin.group(0))}\b", text) is not None
        )
        greeted = re.escape(head.split()[-1])
        second = re.search(r"(?i)\byou(?:r|'re|'ll)?\b", text) or re.search(
            rf"(?i)^\W*(?:hi|hello|hey|dear|good \w+)\W+(?:\w+\.?\s+)?{greeted}\b", text
        )
        if key == "family" and relative:
            return "the recipient is named without a role and the message speaks of their relative"
        if key == "individual" and second and not relative:
            return "the recipient is named without a role and the message speaks to them"
        return ""

    def _bare_name(self, head: str) -> bool:
        """A recipient that is only a person's name (with a title, a channel): "Ana",
        "Mr. Pike by phone", "Kevin Abara (mailed statement)"."""
        words = word_list(tuple(purposes_data()["channels"])).sub(" ", head.lower())
        words = re.sub(r"[^\w\s'.-]", " ", words)
        original = [w for w in re.findall(r"[A-Za-z][\w'.-]*", head)]
        names = [w for w in original if w.lower() in words.split()]
        if not names or len(names) > 3:
            return False
        titles = {"mr", "mrs", "ms", "miss", "mx", "mr.", "mrs.", "ms."}
        return all(w[:1].isupper() or w.lower() in titles for w in names) and not self._roles(
            " ".join(names)
        )

    def _roles(self, phrase: str) -> frozenset[str]:
        """The roles (with ancestors) the role graph reads in a party's words; in brackets only
        when the rest names none ("Dana (St. Brigid registration)")."""
        assert self.reasoner is not None and self.reasoner.reader is not None
        read = self.reasoner.reader.roles_of
        roles: frozenset[str] = read(re.sub(r"\([^)]*\)", "", phrase).strip() or phrase)[0]
        return roles or frozenset().union(*(read(b)[0] for b in re.findall(r"\((.*?)\)", phrase)))

    # ----------------------------------------------------------------- the flow

    def flow(
        self, sender: str, to: str, purpose: PurposeReading, identifiers: bool
    ) -> tuple[Verdict, Flow]:
        """The flow the message makes and the checklist reasoner's verdict on it: the sender's
        and the recipient's roles from the role graph (the sender, unless the person says
        otherwise, is their own covered entity), the condition the purpose states (treatment,
        payment, to the individual ...), and whether the message names an identifier (without
        one it is de-identified, not protected health information). The conditions a purpose
        needs (an authorization, a waiver) are read from the words by :meth:`permission`, and
        the checklist decides again with them."""
        assert self.reasoner is not None and self.reasoner.catalogue is not None
        spec = purpose.spec
        facts = {
            kind: Fact(kind, True, evidence=f"the purpose: {spec['label']}", source="guard")
            for kind in spec.get("states", [])
        }
        facts["sender_covered"] = Fact(
            "sender_covered", True, evidence=f"{sender} (the user's covered entity)", source="guard"
        )
        facts["information_is_phi"] = Fact(
            "information_is_phi",
            identifiers,
            evidence="an identifier names the patient"
            if identifiers
            else "no identifier: de-identified (164.514(b)(2))",
            source="guard",
        )
        sender_roles = self._roles(sender) or frozenset({"health care provider"})
        recipient_roles = self._roles(to) if to else frozenset()
        if purpose.key == "individual":
            recipient_roles |= {"individual"}
        said = purpose.words or spec.get("label") or "purpose not read"
        flow = Flow(
            sender_roles=sender_roles | {"covered entity"},
            recipient_roles=recipient_roles,
            information_types=frozenset({"protected health information"}),
            facts=facts,
            summary=f"{sender} -> {to or '(recipient not given)'}: {said}",
        )
        checklist = decide(self.reasoner.catalogue, flow, self.reasoner.rule)
        return self.reasoner.verdict([checklist]), flow

    def permission(
        self, purpose: PurposeReading, flow: Flow, text: str = ""
    ) -> tuple[bool | None, str, str]:
        """Whether a condition the purpose needs is stated (None: it needs none), the norm
        it rests on and its kind: a fact of the flow, its words in what the person typed or in
        the message, not denied ("without her authorization"), else the condition model's
        reading (:func:`.beside.condition_read`); a purpose that presumes its condition has it
        unless it is denied or the recipient is unverified."""
        spec = purpose.spec
        kinds = spec.get("permission")
        if not kinds:
            return None, spec.get("norm", ""), ""
        said, denied = f"{purpose.words} ; {text}", False
        for kind in kinds:
            stated = flow.fact(kind).value
            if stated is None:
                stated = self._stated(kind, said)
            if stated is True:
                return True, spec.get("norms_by_permission", {}).get(kind, spec["norm"]), kind
            denied = denied or stated is False
        if not denied and (read := condition_read(self._need, purpose, text)):
            return read  # the condition model read it where the word lists did not
        unverified = has_words(spec.get("presume_unless", []), f"{purpose.words} ; {text[:400]}")
        if spec.get("presume") and not denied and not unverified:
            return True, f"{spec['norm']} (presumed: confirm it holds)", kinds[0]
        return False, spec.get("deidentify") or "164.502(a)", ""

    def _stated(self, kind: str, said: str) -> bool | None:
        """Whether the words state the condition: the last of its words decides ("no
        authorization yet" ... "he signed it this morning"); one with a denial before it in its
        sentence states it false. None when the words do not name it."""
        words = purposes_data()["permission_words"].get(kind, [])
        last: tuple[int, bool] | None = None
        for found in word_list(tuple(words)).finditer(said.lower()):
            denied = bool(self._denied.search(said[max(0, found.start() - 45) : found.start()]))
            if last is None or found.start() >= last[0]:
                last = (found.start(), not denied)
        return None if last is None else last[1]

    def decide_spans(
        self,
        text: str,
        spans: Sequence[PhiSpan],
        purpose: PurposeReading,
        permitted: bool | None,
        recipient_roles: frozenset[str],
        rests: str = "",
        to: str = "",
    ) -> tuple[list[SpanDecision], str]:
        """Each span needed or not, and whether minimum necessary applies (its paragraph, or
        the exemption that lifts it)."""
        spec = purpose.spec
        if purpose.key is None:
            return [
                SpanDecision(s, None, "the purpose was not read, so what it needs is unknown", "")
                for s in spans
            ], "unknown: the purpose was not read"
        if spec.get("exempt"):
            why = (
                f"minimum necessary does not apply to a disclosure for {spec['label']} "
                f"({spec['exempt']})"
            )
            return [SpanDecision(s, True, why, spec["exempt"]) for s in spans], (
                f"does not apply: {spec['exempt']}"
            )
        auth = ""
        if permitted is True and rests.startswith("164.508"):
            auth = " under the authorization (164.502(b)(2)(iii)) within what it covers"
        sentences = sentence_spans(text, lines=True)
        out: list[SpanDecision] = []
        family = bool(recipient_roles & {"family member", "relative", "friend"})
        for span in spans:
            if span.addressee and span.kind == "identifier":
                if purpose.key not in ("individual", "public", "reminder", "family") and not family:
                    continue  # the recipient's own name ("Dear Ms. Castellano,"): no one's PHI
                if family or purpose.key == "family":
                    span = replace(span, type="RELATIVE_NAME")
            sentence = next(((a, b) for a, b in sentences if a <= span.start < b), (0, len(text)))
            out.append(self._decide(text, span, sentence, purpose, permitted, auth, to))
        applies = f"applies: {MINIMUM_NECESSARY}{auth}"
        if self._need is None or not sentences or (permitted is False and spec.get("deidentify")):
            return out, applies  # no need model, or the rewrite de-identifies: not PHI then
        return judge(self._need.need, text, sentences, out, purpose, to), applies

    def _decide(
        self,
        text: str,
        span: PhiSpan,
        sentence: tuple[int, int],
        purpose: PurposeReading,
        permitted: bool | None,
        auth: str,
        to: str = "",
    ) -> SpanDecision:
        spec = purpose.spec
        label = spec["label"]
        if permitted is False and not spec.get("deidentify"):
            return SpanDecision(
                span,
                False,
                f"no permission for {label} is stated (one of: "
                f"{', '.join(spec.get('permission', []))}), so nothing about the patient may go",
                spec.get("norm", "164.502(a)")
                if spec.get("norm") == "164.502(a)"
                else "164.502(a)",
            )
        said = text[sentence[0] : sentence[1]]
        line = text[: span.start].rsplit("\n", 1)[-1]
        if span.type in ("EMAIL", "PHONE", "FAX") and re.search(r"(?i)\bto:\s*$", line):
            return SpanDecision(span, True, "the address the message is sent to", spec["norm"])
        if span.kind == "identifier":
            wanted = spec.get("identifiers", "*")
            if permitted and auth and "identifiers_authorized" in spec:
                wanted = spec["identifiers_authorized"]
            deidentify = permitted is False and spec.get("deidentify")
            if deidentify:
                return SpanDecision(
                    span,
                    False,
                    f"{label}: de-identified information only, and "
                    f"{identifier_types()[span.type]['label']} is one of the 18 identifiers",
                    spec.get("deidentify", "164.514(b)(2)"),
                )
            if (
                span.type == "DATE"
                and "birth" in spec.get("drop_dates", [])
                and self._is_birth(text, span)
            ):
                return SpanDecision(
                    span, False, f"{label} does not need the date of birth", MINIMUM_NECESSARY
                )
            if wanted == "*" or span.type in wanted:
                if wanted == "*" and self._aside(said):
                    return SpanDecision(
                        span, False, f"beside the purpose ({label}){auth}", MINIMUM_NECESSARY
                    )
                return SpanDecision(
                    span, True, f"{label}: {spec.get('needs', 'needed')}", spec.get("norm", "")
                )
            return SpanDecision(
                span,
                False,
                f"{label} does not need {identifier_types()[span.type]['label']} "
                f"({spec.get('needs', '')})",
                MINIMUM_NECESSARY,
            )
        rule = health_rule(spec, bool(auth), to)
        if rule == "none":
            return SpanDecision(span, False, f"{label}: {spec.get('needs', '')}", spec["norm"])
        if rule == "instructions":
            if self._instruction.search(said):
                return SpanDecision(
                    span, True, f"{label}: what the patient must do to prepare", spec["norm"]
                )
            return SpanDecision(span, False, f"{label}: {spec.get('needs', '')}", MINIMUM_NECESSARY)
        if rule == "relevant" and auth and self._beyond_scope(spec, span, to, text):
            return SpanDecision(
                span,
                False,
                f"beyond what the authorization covers ({label}: "
                f"{spec['scope']['about'].split(':')[0].lower()})",
                "164.508(c)(1)(i)",
            )
        if rule == "relevant" and self._aside(said):
            return SpanDecision(
                span,
                False,
                f"beside the purpose ({label}){auth}: the sentence adds what the purpose does "
                "not need",
                MINIMUM_NECESSARY,
            )
        return SpanDecision(
            span, True, f"{label}: {spec.get('needs', 'what it is about')}", spec.get("norm", "")
        )

    def _beyond_scope(self, spec: dict[str, Any], span: PhiSpan, to: str, text: str) -> bool:
        """An authorization whose words limit it to work status ("a release for work
        restrictions") does not cover a diagnosis, a medicine or a procedure."""
        scope = spec.get("scope")
        if not scope or span.source not in ("lexicon", "context") or span.type == "TEST":
            return False
        for found in re.finditer(scope["lead"], f"{to} ; {text}"):
            after = f"{to} ; {text}"[found.end() : found.end() + 60]
            if has_words(scope["scope_words"], after):
                return True
        return False

    def _aside(self, sentence: str) -> bool:
        """The span's sentence turns aside from the purpose (a digression cue, not tied back by
        a justifying word)."""
        found = self._digression.search(sentence)
        if not found:
            return False
        return not any(
            not re.search(
                r"(?i)(?:\bnot|n't|in case it'?s|in case it is|if it'?s|might be|may be)\s+"
                r"(?:\w+\s+)?$",
                sentence[: hit.start()],
            )
            for hit in self._justified.finditer(sentence)
        )  # "not relevant to this claim", "in case it's relevant" tie nothing back

    def _is_birth(self, text: str, span: PhiSpan) -> bool:
        return bool(self._birth.search(text[max(0, span.start - 20) : span.start]))

    # ----------------------------------------------------------------- checking

    def check(
        self,
        text: Any,
        *,
        to: str | None = None,
        purpose: str | None = None,
        sender: str | None = None,
        rewrite: bool = True,
        known: str = "",
        doc: Any = None,
        earlier: str = "",
    ) -> Guarded:
        """Guard one message (see the module docstring).

        Args:
            known: what the recipient knows already (earlier turns), naming the patient.
            doc: the message's spaCy document, when parsed already (:meth:`check_many`).
            earlier: what was said before it (a conversation), a permission stated there.

        Raises:
            GuardError: the message is empty, too long or not text.
        """
        assert self.phi is not None
        text = check_message(text)
        sender = (sender or "").strip() or DEFAULT_SENDER
        to = (to or "").strip()
        reading = self.read_purpose((purpose or "").strip() or None, to or None, text)
        parse = not reading.spec.get("deidentify")  # a de-identifying rewrite keeps health
        spans = self.phi.find(text, doc if doc is not None and doc.text == text else None, parse)
        identifiers = any(s.kind == "identifier" for s in spans) or bool(known)
        verdict, flow = self.flow(sender, to, reading, identifiers)
        permitted, rests, kind = self.permission(reading, flow, f"{to} ; {earlier} ; {text}")
        if permitted and kind and flow.fact(kind).value is not True:
            # the condition read in the words (or presumed) is a fact of the flow too
            assert self.reasoner is not None and self.reasoner.catalogue is not None
            why = "presumed by the purpose" if "presumed" in rests else "stated in the words"
            facts = {**flow.facts, kind: Fact(kind, True, evidence=why, source="guard")}
            flow = replace(flow, facts=facts)
            verdict = self.reasoner.verdict(
                [decide(self.reasoner.catalogue, flow, self.reasoner.rule)]
            )
        unverified = purposes_data()["unverified"]
        if reading.key is not None and has_words(unverified["words"], f"{to} ; {reading.words}"):
            # an unverified caller: no purpose lets anything go until who they are is known
            how = f"{reading.how}; the recipient is not verified"
            reading = replace(reading, how=how, unverified=unverified["norm"])
            permitted, rests = False, unverified["norm"]
        context = _Context(sender, to, reading, flow, verdict, permitted, rests, known)
        guarded = self._judge(text, spans, context)
        guarded.context = context
        if rewrite and reading.key is not None:
            guarded.rewrite = self.rewrite(guarded, permitted)
            guarded.recheck = self.recheck(guarded, context, known)
            for _ in range(2):  # what the re-read finds that the first read missed, out too
                if not guarded.recheck.leaked:
                    break
                found = self.phi.find(guarded.rewrite, parse=parse)
                again = self._judge(guarded.rewrite, found, context)
                again.rewrite = self.rewrite(again, permitted)
                guarded.rewrite = again.rewrite
                guarded.recheck = self.recheck(guarded, context, known)
        return guarded

    def _judge(self, text: str, spans: list[PhiSpan], context: _Context) -> Guarded:
        """The spans' decisions and the message's verdict, in a flow already read."""
        reading, verdict = context.purpose, context.verdict
        spans = own_parties(text, spans, context)
        decisions, applies = self.decide_spans(
            text,
            spans,
            reading,
            context.permitted,
            context.flow.recipient_roles,
            context.rests,
            context.to,
        )
        unneeded = [d for d in decisions if d.needed is False]
        notes: list[str] = []
        if reading.key is None:
            notes.append(reading.how)
            label, why = PROHIBIT if unneeded else verdict.label.value, reading.how
        elif unneeded:
            kinds = sorted({d.span.kind for d in unneeded})
            label = PROHIBIT
            why = (
                f"Not as written: {len(unneeded)} span(s) of {' and '.join(kinds)} "
                f"information that {reading.spec['label']} does not need "
                f"({MINIMUM_NECESSARY}; {context.rests or reading.spec.get('norm', '')})."
            )
        elif (
            reading.spec.get("deidentify")
            and not context.known
            and not any(d.span.kind == "identifier" for d in decisions)
        ):
            label = PERMIT
            why = (
                f"May go: no identifier is in it, so it is de-identified "
                f"({reading.spec['deidentify']}) and {reading.spec['label']} may have it."
            )
        elif verdict.label.value == PROHIBIT and context.permitted is False and spans:
            label, why = PROHIBIT, _explanation(verdict)
        else:
            label = PERMIT
            why = (
                f"May go: every span is needed for {reading.spec['label']} "
                f"({reading.spec.get('norm', '')}); the checklist reads the flow as "
                f"{verdict.label.value}."
                if spans
                else "May go: no protected health information is left in it."
            )
        return Guarded(
            text=text,
            sender=context.sender,
            recipient=context.to,
            purpose=reading,
            flow=_flow_json(verdict, context.flow, context.permitted, context.rests),
            minimum_necessary=applies,
            verdict=label,
            explanation=why,
            decisions=decisions,
            notes=notes,
        )

    def check_many(self, messages: Sequence[dict[str, Any]], rewrite: bool = True) -> list[Guarded]:
        """Guard many messages (``{"text", "to", "purpose", "sender"}`` each), parsed together
        (spaCy's batches are faster than one message at a time).

        Raises:
            GuardError: a message is empty, too long or not text (naming which).
        """
        texts = [check_message(m.get("text"), f"message {n}") for n, m in enumerate(messages, 1)]
        assert self.phi is not None
        docs = self.phi.parse(texts)
        return [
            self.check(
                text,
                to=m.get("to"),
                purpose=m.get("purpose"),
                sender=m.get("sender"),
                rewrite=rewrite,
                doc=doc,
            )
            for m, text, doc in zip(messages, texts, docs, strict=True)
        ]

    # ----------------------------------------------------------------- rewriting

    def rewrite(self, guarded: Guarded, permitted: bool | None) -> str:
        """The message with what the purpose does not need taken out (see the docstring).
        Each unneeded span's decision records what became of it (``action``: generalise with
        its replacement, remove, drop-sentence, or decline when nothing may go)."""
        spec = guarded.purpose.spec
        text = guarded.text
        unneeded = guarded.unneeded
        if not unneeded:
            return text
        done: dict[int, tuple[str, str]] = {}  # id(decision) -> (action, replacement)
        decline = str(spec.get("fallback", DECLINE))
        if permitted is False and not spec.get("deidentify"):
            self._record(guarded, {id(d): ("decline", "") for d in unneeded})
            return decline
        needed = [d for d in guarded.decisions if d.needed is not False]
        deidentify = bool(spec.get("deidentify"))
        pieces: list[str] = []
        for start, end in sentence_spans(text, lines=True):
            inside = [d for d in unneeded if start <= d.span.start < end]
            keep = [d for d in needed if start <= d.span.start < end]
            if (
                inside
                and not keep
                and (any(d.span.kind == "health" for d in inside) or not deidentify)
            ):
                done.update((id(d), ("drop-sentence", "")) for d in inside)
                continue  # a sentence that only carries what the purpose does not need
            if not inside:
                pieces.append(text[start:end])
                continue
            pieces.append(self._replace(text, start, end, inside, spec, done))
        out = _tidy(" ".join(p.strip() for p in pieces if p.strip()))
        if not re.search(r"[A-Za-z]{3,}", out):
            done = {id(d): ("decline", "") for d in unneeded}
            out = decline
        self._record(guarded, done)
        return out

    @staticmethod
    def _record(guarded: Guarded, done: Mapping[int, tuple[str, str]]) -> None:
        """The rewrite's fate of each span, written into the guarded message's decisions."""
        guarded.decisions = [
            replace(d, action=done[id(d)][0], replacement=done[id(d)][1]) if id(d) in done else d
            for d in guarded.decisions
        ]

    def _replace(
        self,
        text: str,
        start: int,
        end: int,
        inside: list[SpanDecision],
        spec: dict[str, Any],
        done: dict[int, tuple[str, str]],
    ) -> str:
        """One sentence with its unneeded spans generalised or taken out, with the words that
        only label them ("member ID", "DOB") and spans joined only by "and", "+" or a comma
        taken out as one."""
        out = text[start:end]
        groups: list[list[SpanDecision]] = []
        for decision in sorted(inside, key=lambda d: d.span.start):
            if (
                groups
                and groups[-1][-1].span.kind == decision.span.kind == "health"
                and (
                    re.fullmatch(
                        r"\s*(?:,|\+|&|/|and|or|with)?\s*",
                        text[groups[-1][-1].span.end : decision.span.start],
                    )
                )
            ):
                groups[-1].append(decision)
            else:
                groups.append([decision])
        for number in range(len(groups) - 1, -1, -1):
            group = groups[number]
            first, last = group[0], group[-1]
            a, b = first.span.start - start, last.span.end - start
            span = first.span
            cut_from = a
            floor = groups[number - 1][-1].span.end - start if number else 0
            new = self._generalise(text, span)
            before = out[:a]
            if span.kind == "identifier" and span.type in ("NAME", "RELATIVE_NAME"):
                if span.addressee or self._person_before.search(before):
                    new = ""  # "patient Jane Roe", "his wife Marit", "Hi Jolene,"
            elif span.kind == "identifier" and span.type in ("ADDRESS", "FACILITY") and not new:
                lead = self._place_lead.search(before)
                label = self._labels.search(before)
                cut_from = lead.start() if lead else label.start() if label else a
            elif span.kind == "identifier" and span.type != "AGE_OVER_89":
                label = self._labels.search(before)
                if label and label.group().strip():
                    cut_from = label.start()
            elif span.kind == "health":
                stand_in = spec.get("stand_in", "")
                possessive = re.search(r"\b(?:your|his|her|their|the)\s+$", before)
                if stand_in and possessive:
                    new = stand_in
                else:
                    lead = re.search(
                        r"(?:\b(?:for|with|of|on|your|his|her|their|a|an|the)\s+)+$", before
                    )
                    cut_from = lead.start() if lead else a
                    new = ""
            cut_from = max(cut_from, floor)
            fate = ("generalise", new.strip()) if new.strip() else ("remove", "")
            done.update((id(d), fate) for d in group)
            if new and cut_from < a:
                new = " " + new
            out = out[:cut_from] + new + out[b:]
        return out

    def _generalise(self, text: str, span: PhiSpan) -> str:
        """What an unneeded identifier becomes: a role, the year, "90 or older", the state,
        a marker for what cannot be said otherwise, or nothing."""
        kind = span.type
        if kind == "NAME":
            return "the patient" + ("'s" if re.search(r"['’]s$", span.text) else "")
        if kind == "RELATIVE_NAME":
            return "a family member"
        if kind == "DATE":
            if self._is_birth(text, span):
                return ""
            year = re.search(r"\b((?:19|20)\d\d)\b", span.text)
            if year:
                return f"in {year.group(1)}"
            short = re.search(r"\d/\d{1,2}/(\d\d)$", span.text)  # 4/12/19, not 4/12
            if short:
                two = int(short.group(1))
                return f"in {2000 + two if two <= 40 else 1900 + two}"
            return ""
        if kind == "AGE_OVER_89":
            return "90-or-older" if "year-old" in span.text else "90 or older"
        if kind in ("ADDRESS", "FACILITY"):
            state = re.search(r"\b([A-Z]{2})\b(?!\d)", span.text)
            return f"in {state.group(1)}" if state else ""
        return MARKERS.get(kind, "")

    def recheck(self, guarded: Guarded, context: _Context, known: str = "") -> Recheck:
        """The rewrite read again, in the same flow: identifiers it still carries that the
        purpose does not need, needed spans it lost, and its verdict."""
        assert self.phi is not None and guarded.rewrite is not None
        rewrite = guarded.rewrite
        low = rewrite.lower()
        dropped = [
            d.to_json() for d in guarded.decisions if d.needed and d.span.text.lower() not in low
        ]
        if rewrite == guarded.text:
            again = guarded
        else:
            spans = self.phi.find(rewrite, parse=not context.purpose.spec.get("deidentify"))
            again = self._judge(rewrite, spans, context)
        leaked = [
            d.to_json()
            for d in again.decisions
            if d.needed is False and d.span.kind == "identifier"
        ]
        return Recheck(leaked, dropped, again.verdict, again.explanation)

    def fluent_rewrite(self, guarded: Guarded, client: Any) -> Guarded:
        """Ask the LLM layer for a fluent rewrite and hold it to the same re-check: one that
        leaks an identifier the purpose does not need or drops a needed span is refused and the
        offline rewrite kept (``guarded.fluent`` says which and why).

        The outside model receives the offline rewrite and the instructions, nothing else: no
        value the guard took out, and not even the identifiers the purpose needs (each is a
        neutral placeholder such as ``[ID-1]``, put back in the model's answer). An offline
        rewrite that did not pass its own re-check is not sent at all."""
        from privacy_checklist.reasoning.llm.prompting import fence, render, template

        assert self.phi is not None
        if guarded.rewrite is None or guarded.context is None:
            raise GuardError("a fluent rewrite needs the offline rewrite first (rewrite=True)")
        if not guarded.unneeded:
            return self._fluent(
                guarded, None, False, "nothing to take out: the draft goes as written"
            )
        if guarded.recheck is None or not guarded.recheck.passed:
            return self._fluent(
                guarded, None, False, "not asked: the offline rewrite failed its own re-check"
            )
        spec = guarded.purpose.spec
        keep = sorted({d.span.text for d in guarded.decisions if d.needed})
        remove = sorted({d.span.text for d in guarded.unneeded})
        masked, slots = _placeholders(guarded.rewrite, guarded.decisions)
        prompt = render(
            template("guard_rewrite"),
            purpose=str(spec.get("label", "")),
            needs=str(spec.get("needs", "")),
            draft=fence(
                masked, "DRAFT", "The draft, with what it must not carry already taken out"
            ),
            keep="; ".join(slots) or "(none)",
        )
        outcome = client.complete([{"role": "user", "content": prompt}])
        text = (getattr(outcome, "text", None) or "").strip()
        error = getattr(outcome, "error", None)
        if error or not text:
            return self._fluent(
                guarded, None, False, f"the model gave no rewrite ({error or 'empty answer'})"
            )
        text = re.sub(r"^```\w*\s*|\s*```$", "", text).strip().strip('"')
        missing = [slot for slot in slots if slot not in text]
        for slot, value in slots.items():
            text = text.replace(slot, value)
        again = self._judge(text, self.phi.find(text), guarded.context)
        leaked = [
            d.span.text
            for d in again.decisions
            if d.needed is False and d.span.kind == "identifier"
        ]
        leaked += [r for r in remove if r.lower() in text.lower() and r not in leaked]
        dropped = [slots[s] for s in missing]
        dropped += [k for k in keep if k.lower() not in text.lower() and k not in dropped]
        if leaked or dropped:
            why = "; ".join(
                part
                for part in (
                    f"it carries {', '.join(map(repr, leaked[:5]))}" if leaked else "",
                    f"it drops {', '.join(map(repr, dropped[:5]))}" if dropped else "",
                )
                if part
            )
            return self._fluent(guarded, text, False, f"refused, the offline rewrite kept: {why}")
        guarded.rewrite = text
        guarded.recheck = self.recheck(guarded, guarded.context, guarded.context.known)
        return self._fluent(guarded, text, True, "passed the same re-check")

    @staticmethod
    def _fluent(guarded: Guarded, text: str | None, accepted: bool, why: str) -> Guarded:
        guarded.fluent = {"text": text, "accepted": accepted, "why": why}
        return guarded

    def conversation(
        self, turns: Sequence[dict[str, Any]], purpose: str | None = None
    ) -> list[dict[str, Any]]:
        """Each turn judged against what the thread made known (:func:`.thread.conversation`)."""
        return conversation(self, turns, purpose)


def _placeholders(text: str, decisions: Sequence[SpanDecision]) -> tuple[str, dict[str, str]]:
    """``text`` with each needed identifier it carries replaced by a neutral placeholder
    (``[ID-1]`` ...), and the placeholders with the values they stand for, so that an outside
    model can reword a message without receiving a single identifier."""
    values = {
        d.span.text
        for d in decisions
        if d.needed and d.span.kind == "identifier" and d.span.text.strip()
    }
    if not values:
        return text, {}
    slots: dict[str, str] = {}
    numbers: dict[str, str] = {}

    def slot(match: re.Match[str]) -> str:
        value = match.group()
        if value not in numbers:
            numbers[value] = f"[ID-{len(numbers) + 1}]"
            slots[numbers[value]] = value
        return numbers[value]

    # the longer first ("Ann Lee" before "Ann"), numbered in the order they appear
    pattern = "|".join(re.escape(v) for v in sorted(values, key=lambda v: (-len(v), v)))
    return re.sub(pattern, slot, text), slots


def _tidy(text: str) -> str:
    """A rewrite's punctuation mended where spans came out (run until nothing changes)."""
    while True:
        tidied = _tidy_once(text)
        if tidied == text:
            break
        text = tidied
    return re.sub(r"([.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)


def _tidy_once(text: str) -> str:
    for pattern, new in (
        (r"\s+(['’]s)\b", r"\1"),
        (r"\(\s*[,;:]?\s*\)", ""),
        (r"\s+([,.;:!?])", r"\1"),
        (r"\.\s*,\s*", ". "),
        (r"([,;:])\s*([,;:.])", r"\2"),
        (r"\b(Hi|Hello|Hey|Dear|Thanks|Thank you)\s*,", r"\1,"),
        (r"^\s*[,;:.—–-]\s*", ""),
        (r"\s{2,}", " "),
        (r"\b(on|at|for|from|dated|of)\s*([,.;])", r"\2"),
        (r"\bDear\s*,", "Hello,"),
    ):
        text = re.sub(pattern, new, text)
    text = text.strip()
    return text[:1].upper() + text[1:] if text else text


def _explanation(verdict: Verdict) -> str:
    if verdict.checklist is not None and verdict.checklist.explanation:
        return verdict.checklist.explanation
    return (verdict.reasoning or [""])[0]


def _flow_json(verdict: Verdict, flow: Flow, permitted: bool | None, rests: str) -> dict[str, Any]:
    return {
        "summary": flow.summary,
        "verdict": verdict.label.value,
        "rests_on": [n.id for n in verdict.norms],
        "explanation": _explanation(verdict),
        "sender_roles": sorted(flow.sender_roles),
        "recipient_roles": sorted(flow.recipient_roles),
        "permission": {"stated": permitted, "norm": rests},
        "facts": {
            k: {"value": f.value, "evidence": f.evidence, "source": f.source}
            for k, f in sorted(flow.facts.items())
            if f.value is not None
        },
    }
