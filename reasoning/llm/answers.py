"""Reading what a model answers in prose: the concluding statements, their negation, hedges and
contradictions (the third layer of reading an answer, after the JSON field and the final
``Answer:`` line of :func:`~privacy_checklist.reasoning.llm.prompting.parse_answer`).

A model that does not follow the requested format usually still concludes: "Therefore, the
disclosure would not be permissible under the Privacy Rule." This reader finds the sentences that
conclude — those a conclusion marker opens ("Therefore", "In conclusion", "Overall", "The answer
is"), else the answer's last sentences, and a first sentence that answers outright ("No, ...") —
and reads in each the statements that give a verdict: a predicate ("permitted", "violates",
"does not apply") with the negation in its clause ("would *not* be permissible", "does *not*
violate", "*no* violation"). The questions researchers ask are three (:data:`QUESTIONS`): the
three-way verdict, whether the Privacy Rule applies, whether the case complies or violates.

It never guesses. An answer whose conclusion is hedged ("may or may not", "it depends"),
conditional ("would be permitted if ..., otherwise ...") or self-contradicting ("permitted ...
a violation"), that refuses, or that concludes nothing, is unreadable, with the reason.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from privacy_checklist.reasoning.llm.continuation import own_answer
from privacy_checklist.reasoning.llm.labels import COVERED as _COVERED
from privacy_checklist.reasoning.llm.labels import ELLIPSIS as _ELLIPSIS
from privacy_checklist.reasoning.llm.labels import HEDGES as _HEDGES
from privacy_checklist.reasoning.llm.labels import NEGATORS as _NEGATORS
from privacy_checklist.reasoning.llm.labels import NOT_COVERED as _NOT_COVERED
from privacy_checklist.reasoning.llm.labels import OPPOSITE as _OPPOSITE
from privacy_checklist.reasoning.llm.labels import PREDICATE as _PREDICATE
from privacy_checklist.reasoning.llm.labels import QUESTIONS as QUESTIONS
from privacy_checklist.reasoning.llm.labels import TABLES as TABLES
from privacy_checklist.reasoning.llm.labels import named_outright
from privacy_checklist.reasoning.text import sentences as split_sentences

# "would be permitted if ..., otherwise ...", "as long as", "only if", "provided that"
_CONDITION = re.compile(
    r"(?<!even )\b(?:if|unless|as long as|provided that|assuming|only when|only if)\b"
    r"|^\W*had (?:the|it|they|he|she|we|an?|this)\b|\bwould have been\b",
    re.I,
)
_OTHERWISE = re.compile(r"\botherwise\b|\bif not\b|\bbut if\b|\bon the other hand\b", re.I)
_RETRACTS = re.compile(
    r"^\W*(?:wait|actually|hmm|on second thought|on reflection|let me reconsider|correction)\b"
    r"|\b(?:wait|on second thought|let me reconsider|i was wrong|that is wrong|scratch that)\b",
    re.I,
)
_REFUSAL = re.compile(
    r"\bI (?:cannot|can't|am unable to|won't) (?:provide|give|offer|determine|answer|help)"
    r"|\bas an ai\b|\bnot (?:able|qualified) to (?:provide|give) legal advice\b"
    r"|\bconsult (?:a|an|with a|with an) (?:lawyer|attorney|legal (?:professional|expert|counsel))",
    re.I,
)
_CONCLUDES = re.compile(
    r"^\W*(?:therefore|thus|hence|so|consequently|accordingly|overall|ultimately|in conclusion|"
    r"to conclude|to summari[sz]e|in summary|in short|in sum|all in all|final (?:answer|verdict|"
    r"determination|conclusion)|conclusion|verdict|answer|the answer is|my answer is|"
    r"bottom line|based on (?:the|this|these|all|my) (?:above|analysis|facts|information|"
    r"reasoning)|given (?:the|these|all) (?:above|facts|circumstances))\b",
    re.I,
)
_OUTRIGHT = re.compile(
    r"^\W*(?:yes|no)\b(?:[,.!:—-]|\s+(?=(?:it|this|that|the|they|he|she|hipaa|you)\b))", re.I
)
_ITEM = re.compile(r"(?m)^[ \t>*•-]*\(?\d{1,2}[.)][ \t]+")
_CLAUSE = re.compile(
    r"(,?\s*\b(?:but|however|although|though|whereas|while|because|since|so that|and therefore"
    r"|which|in that|so)\b|;|—|:\s)",
    re.I,
)
_MARKUP = re.compile(r"[*_`#>]+")
_BOILERPLATE = re.compile(
    r"^\W*(?:I hope (?:this|that)|hope this helps|let me know|please let me know|feel free|"
    r"(?:please )?(?:note|remember) that|it is (?:always )?(?:important|advisable|recommended)|"
    r"(?:you )?(?:may|might|should) (?:want to )?consult|this is not legal advice|disclaimer)",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Read:
    """A label read from an answer, or None and why not, and how it was read."""

    label: str | None
    reason: str = ""
    how: str = ""  # "prose"
    evidence: str = ""  # the concluding statement the label was read from

    def to_json(self) -> dict[str, str | None]:
        keys = ("label", "reason", "how", "evidence")
        return {key: getattr(self, key) for key in keys}


def sentences(text: str) -> list[str]:
    """The answer's sentences (list items and lines count as sentences), markup removed."""
    plain = _MARKUP.sub(" ", text).replace("|", "\n")  # a table's cells
    plain = _ITEM.sub("", plain)  # "2. ", "(3) " opening a line
    out = []
    for part in split_sentences(plain, lines=True):
        part = re.sub(r"\s+", " ", part).strip(" -•\t")
        if len(part) > 1:
            out.append(part)
    return out


def _negated(clause: str, predicate: re.Match[str]) -> bool:
    """Whether a negation reaches a predicate: an odd number of negators in its clause up to the
    predicate's word ("would not be permissible", "is not a violation", "no violation"), none
    across a comma ("No, it does not apply": the answer word is not a negation of it)."""
    before = clause[max(0, predicate.start() - 60) : predicate.start()]
    before = re.split(r"[,;:]", before)[-1]
    return _negations(before + clause[predicate.start() : predicate.end()]) % 2 == 1


def _negations(text: str) -> int:
    """How many negations a text holds ("neither ... nor" is one)."""
    found = [m.group(0).lower() for m in _NEGATORS.finditer(text)]
    if "neither" in found and "nor" in found:
        found.remove("nor")
    return len(found)


@dataclass(frozen=True, slots=True)
class _Statement:
    label: str
    clause: str
    sentence: str
    hedged: bool = False
    conditional: bool = False


_CONCESSIVE = frozenset({"although", "though", "whereas", "while"})
_ADVERSATIVE = frozenset({"but", "however"})


def _statements(sentence: str, question: str) -> list[_Statement]:
    """Each statement of a verdict in a sentence, with whether it is hedged or conditional. A
    concession ("even though the receipt was lawful, ...") states nothing; what follows "but"
    or "however" outweighs what precedes it in the sentence."""
    sentence = _QUOTED.sub(" ", sentence)  # the law's words quoted are not the verdict
    opens_with_condition = bool(
        re.match(r"\W*(?:if|unless|assuming|provided|as long as)\b", sentence, re.I)
    )
    parts = _CLAUSE.split(sentence)  # clause, joiner, clause, joiner ...
    clauses = [
        (parts[i], (parts[i - 1] or "").strip().lower() if i else "")
        for i in range(0, len(parts), 2)
    ]
    per_clause: list[list[_Statement]] = []
    joiners = [joiner.split(" ")[-1] for _, joiner in clauses]
    for i, (clause, joiner) in enumerate(clauses):
        found: list[_Statement] = []
        per_clause.append(found)
        if not clause or not clause.strip() or _SAYS.search(clause):
            continue
        if joiner.split(" ")[-1] in _CONCESSIVE or re.match(
            r"\W*(?:even though|although|though|while|whereas)\b", clause, re.I
        ):
            # "even though the receipt was lawful, the use is prohibited": after the comma
            clause = clause.split(",", 1)[1] if "," in clause else ""
            if not clause.strip():
                continue
        following = clauses[i + 1][0] if i + 1 < len(clauses) else ""
        conditional = (
            bool(_CONDITION.search(clause))
            or _asks_whether(clause, question)
            or bool(
                re.match(r"\W*(?:only\s+)?(?:if|unless|provided|as long as)\b", following, re.I)
            )
            or bool(_OTHERWISE.search(sentence))
            or (opens_with_condition and not any(j in _ADVERSATIVE for j in joiners[: i + 1]))
        )
        for label, modal in _labels(clause, question):
            found.append(
                _Statement(
                    label,
                    clause.strip(),
                    sentence,
                    hedged=modal or bool(_HEDGES.search(clause)),
                    conditional=conditional,
                )
            )
    turns = [  # "but also" adds to what precedes it, it does not outweigh it
        i
        for i, (clause, joiner) in enumerate(clauses)
        if joiner.split(" ")[-1] in _ADVERSATIVE and not re.match(r"\W*also\b", clause, re.I)
    ]
    contrast = _contrasted(clauses, per_clause, question)
    if turns and any(per_clause[i:] for i in turns) and any(x for x in per_clause[turns[-1] :]):
        per_clause = per_clause[turns[-1] :]
    return [st for found in per_clause for st in found] + contrast


def _asks_whether(clause: str, question: str) -> bool:
    """Whether the verdict of a clause is asked, not stated: "whether" in its last part ("it is
    permitted, depending on whether ...") or in a part that names a label itself ("to determine
    whether HIPAA applies, ...", "the question of whether it complies ..., based on ...")."""
    parts = clause.split(",")
    return bool(re.search(r"\bwhether\b", parts[-1], re.I)) or any(
        re.search(r"\bwhether\b", part, re.I) and _labels(part, question) for part in parts[:-1]
    )


def _contrasted(
    clauses: list[tuple[str, str]], per_clause: list[list[_Statement]], question: str
) -> list[_Statement]:
    """The opposite verdicts of elliptical contrasts, for another flow than the one before."""
    out = []
    for i in range(1, len(clauses)):
        clause = clauses[i][0]
        before = per_clause[i - 1]
        if per_clause[i] or not before or not _ELLIPSIS.search(clause or ""):
            continue
        if before[-1].label in _OPPOSITE:
            out.append(_Statement(_OPPOSITE[before[-1].label], clause.strip(), before[-1].sentence))
    return out


_MODAL_HEDGE = re.compile(r"\b(?:may|might|could)\s+(?:\w+\s+){0,3}$", re.I)
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")
# a clause reporting what a text says ('164.510(a) says that a covered entity "may use ...')
_SAYS = re.compile(r"[\"“”]|\b(?:says|states|provides|reads)\b", re.I)


_LABEL_WORDS = re.compile(
    r"\b(?:(?P<permit>permitted|permit)|(?P<prohibit>prohibited|prohibit)"
    r"|(?P<na>not applicable))\b",
    re.I,
)


def _labels(clause: str, question: str) -> list[tuple[str, bool]]:
    """The labels a clause states, each with whether a modal hedges it ("could be considered a
    violation", "may violate"); two different ones are the clause contradicting itself."""
    if question == "verdict" and not re.search(r"\b(?:is|was|are|be|neither|nor)\b", clause, re.I):
        # "Permitted / Not applicable", "permitted prohibited not applicable ...": a list
        named_all = {
            {"permit": "permit", "prohibit": "prohibit", "na": "not_applicable"}[m.lastgroup or ""]
            for m in _LABEL_WORDS.finditer(clause)
        }
        if len(named_all) > 1:
            return [(label, False) for label in sorted(named_all)]
    named = named_outright(clause, question)
    if named is not None:
        return [(named, False)]
    not_covered = _NOT_COVERED.search(clause)
    if question in ("verdict", "applicability") and not_covered:
        if _negated(clause, not_covered) != (_negations(not_covered.group(0)) % 2 == 1):
            # "It cannot be said that HIPAA doesn't apply": it applies, no verdict said
            return [("applies", False)] if question == "applicability" else []
        return [("not_applicable" if question == "verdict" else "does_not_apply", False)]
    if question == "applicability":
        bare = re.match(r"^\W*(?:the answer is\s+)?(yes|no)\W*$", clause, re.I)
        if bare:  # "..., so no."
            return [("applies" if bare.group(1).lower() == "yes" else "does_not_apply", False)]
        covered = _COVERED.search(clause)
        if covered and not _negated(clause, covered):
            return [("applies", bool(_MODAL_HEDGE.search(clause[: covered.start()])))]
        return []
    out = []
    for predicate in _PREDICATE.finditer(clause):
        permits = predicate.group("permit") is not None
        if permits != _negated(clause, predicate):
            label = "permit" if question == "verdict" else "complies"
        else:
            label = "prohibit" if question == "verdict" else "violates"
        out.append((label, bool(_MODAL_HEDGE.search(clause[: predicate.start()]))))
    return out


def _question_like(sentence: str) -> bool:
    """A question, or the question restated ("permitted, prohibited, or not applicable")."""
    return sentence.rstrip().endswith("?") or bool(
        re.search(r"\bor not applicable\b|\bcomply or violate\b", sentence, re.I)
    )


def stated(text: str) -> list[str]:
    """The answer's sentences that state something: not the question, not boilerplate."""
    return [s for s in sentences(text) if not _question_like(s) and not _BOILERPLATE.search(s)]


def read_prose(text: str | None, question: str = "verdict") -> Read:
    """The verdict a prose answer concludes, or None with the reason; never a default label."""
    if question not in QUESTIONS:
        raise ValueError(f"question {question!r} is not one of {', '.join(QUESTIONS)}")
    if text is None or not text.strip():
        return Read(None, "empty answer")
    said = stated(text)
    repeated = [s for s, n in Counter(said).items() if n >= 3 and _statements(s, question)]
    if repeated:
        return Read(None, f"the answer repeats itself: {_short(repeated[0])}", "prose")
    if not said:
        return Read(None, "no statement in the answer, only the question")
    marked = [i for i, s in enumerate(said) if _CONCLUDES.search(s)]
    if marked:
        rows = marked[-2:]  # the last conclusions (what follows may only take them back)
        if len(said[rows[-1]].split()) <= 3 and rows[-1] + 1 < len(said):
            rows.append(rows[-1] + 1)  # a heading ("### Verdict") and the line under it
        where = "the concluding sentences"
    else:
        rows = list(range(max(0, len(said) - 2), len(said)))
        where = "the last sentences"
        # a verdict given first ("No, ...", "This is permitted."), read when the last
        # sentences commit to none
        first = [st for st in _statements(_OUTRIGHT.sub("", said[0]), question)]
        last_ones = [st for i in rows for st in _statements(_OUTRIGHT.sub("", said[i]), question)]
        short = len(said[0].split()) <= 10 or bool(_OUTRIGHT.search(said[0]))
        if 0 not in rows and first and short and all(st.conditional for st in last_ones):
            rows.insert(0, 0)
    rows = [i for i in rows if not _REFUSAL.search(said[i])]
    candidates = [said[i] for i in rows]
    found: list[_Statement] = []
    where_found: list[int] = []  # the sentence of each statement
    for i in rows:
        got = _statements(_OUTRIGHT.sub("", said[i]), question)
        found += got
        where_found += [i] * len(got)
    if not found and not marked:
        # a truncated answer, or one that concludes before its last sentences
        for i in reversed(range(len(said))):
            if i not in rows and _CONCLUDES.search(said[i]):
                found = _statements(said[i], question)
                where_found = [i] * len(found)
                if found:
                    break
    if not found:
        if _REFUSAL.search(text):
            return Read(None, "the model declines to answer", "prose")
        hedge = next((s for s in candidates if _HEDGES.search(s)), None)
        if hedge is not None:
            return Read(None, f"the conclusion is hedged: {_short(hedge)}", "prose", hedge)
        return Read(None, f"{where} state no verdict", "prose")
    committed = [st for st in found if not st.hedged and not st.conditional]
    last = max((i for st, i in zip(found, where_found, strict=True) if st in committed), default=0)
    if not committed:
        latest = found[-1]
        kind = "conditional" if any(st.conditional for st in found) else "hedged"
        return Read(
            None, f"the conclusion is {kind}: {_short(latest.sentence)}", "prose", latest.sentence
        )
    labels = {st.label for st in committed}
    evidence = committed[-1].sentence
    if len(labels) > 1:
        return Read(
            None,
            "the conclusion contradicts itself ("
            + " / ".join(sorted(labels))
            + f"): {_short(evidence)}",
            "prose",
            evidence,
        )
    after = " ".join(said[last + 1 :])
    if _RETRACTS.search(after) or _RETRACTS.search(evidence.split(committed[-1].clause)[-1]):
        return Read(None, f"the answer takes its conclusion back: {_short(after)}", "prose")
    hedge = next((s for s in said[last + 1 : last + 3] if _HEDGES.search(s)), None)
    if hedge is not None:
        return Read(None, f"the conclusion is hedged: {_short(hedge)}", "prose", hedge)
    return Read(labels.pop(), "", "prose", evidence)


def _short(text: str, width: int = 100) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def read_rules(text: str | None, question: str = "verdict") -> Read:
    """The label the rules read: the answer's JSON field, its final ``Answer:`` line, an answer
    that is only a label, else its prose (:func:`read_prose`); None with the reason."""
    from privacy_checklist.reasoning.llm.prompting import parse_answer

    if question not in QUESTIONS:
        raise ValueError(f"question {question!r} is not one of {', '.join(QUESTIONS)}")
    text = own_answer(text) if text else text
    parsed = parse_answer(text, table=TABLES.get(question), question=question)
    return Read(parsed.label, parsed.reason or "", parsed.how)


def read_answer(text: str | None, question: str = "verdict") -> Read:
    """The label of any answer to ``question``: a JSON field, a final line or a bare label as
    the rules read them, else the committed conclusion the learned reader finds in the prose
    (:mod:`.conclusion`); None with the reason, never a guess."""
    from privacy_checklist.reasoning.llm.conclusion import read_learned

    return read_learned(text, question)
