"""The ``checklist-llm`` method: the checklist, and a model asked for the facts it cannot read.

The same reader and rule as the ``checklist`` method, without its learned layer (fitted on the
rules' reading, not on an LLM's answers): the facts reader reads the flows and their facts,
:func:`~privacy_checklist.reasoning.checklist.decide.decide` judges each flow. Then, for each fact
left unknown that matters (:func:`open_questions`: the facts the verdict turns on, the
applicability questions, the exceptions of a prohibition met, the other conditions of the top
candidates, the presumed conditions of the permission it rests on), the model gets one short
question: the narrative fenced as data (``<<<CASE ... CASE>>>``), the flow it is about (fenced too:
it is made of the narrative's words), and the condition kind's question from the catalogue (never
from the case). Its answer must be one JSON object ``{"answer": "yes" | "no" | "unknown",
"evidence": "words quoted from the case"}``.

An answer is accepted only when it parses and, for yes or no, its evidence is words of the
narrative (found in it, whitespace and quote marks aside): the fact is then set, with that span
and source ``llm``, and the same rule decides again. Any other answer leaves the fact unknown
and its problem is recorded (``checklist["asked"]``); it is never a parse failure of the
verdict, since the checklist still decides. A fact the case states is never asked about nor
overridden. At most :data:`MAX_QUESTIONS` questions per case, asked at once through the LLM
layer (cache, retries, concurrency). A request that failed (refused, timeout, HTTP error, an
empty answer) gives no verdict: ``request_failure``, as for the other LLM methods, and an
evaluation asks again.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from privacy_checklist.reasoning.checklist.asked import Answer, Question
from privacy_checklist.reasoning.checklist.decide import (
    Checklist,
    NormCheck,
    combine,
    decide,
    presumed_kinds,
)
from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner
from privacy_checklist.reasoning.llm.client import Client, Message
from privacy_checklist.reasoning.llm.prompting import (
    Call,
    Trace,
    client_name,
    fence,
    last_object_with,
    messages,
    text_field,
)
from privacy_checklist.reasoning.llm.prompting import field as json_field
from privacy_checklist.reasoning.reading.types import Fact, Flow
from privacy_checklist.reasoning.verdict import REQUEST_FAILURE, Verdict

NAME = "checklist-llm"
STEP = "checklist_fact"  # the prompt file reasoning/prompts/checklist_fact.v1.txt
MAX_QUESTIONS = 8  # per case
TOP_CANDIDATES = 5  # the candidates whose open conditions are asked about
ANSWERS = {"yes": True, "no": False, "unknown": None}
#: the applicability questions (the condition kinds' questions are the catalogue's)
APPLICABILITY_QUESTIONS = {
    "sender_covered": "Is the sender (who used or disclosed the information) a covered entity "
    "(a health care provider, a health plan or a health care clearinghouse), a business "
    "associate of one, or a member of their workforce?",
    "acting_in_role": "Was the sender acting in that role, for their work for the covered "
    "entity or business associate, rather than for their own ends (curiosity, a personal "
    "matter, a campaign, a sale) or as a private person?",
    "information_is_phi": "Is the information protected health information: individually "
    "identifiable health information held by a covered entity or business associate (not the "
    "individual's own disclosure, employment records held as an employer, education records, "
    "de-identified data, or about a person dead for more than 50 years)?",
}
#: the questions about a party's role: any word that names a role bears on them
PARTY_QUESTIONS = ("sender_covered", "acting_in_role")
#: why a question was asked, in the order questions are kept under the cap
TIERS = (
    "the verdict turns on it",
    "applicability",
    "an exception to the prohibition",
    "a condition of a candidate",
    "presumed",
)
_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "`": "'"})
_WORD = re.compile(r"[A-Za-z0-9]{2,}")


# --------------------------------------------------------------------------- which questions


def _open_conditions(check: NormCheck, presumed: bool) -> list[str]:
    """The kinds of ``check``'s conditions the case leaves unknown and that could still change
    it: not an exception, not in a one_of group another condition already meets; ``presumed``:
    those met by presumption, else those left unknown."""
    met_groups = {
        c.condition.group
        for c in check.conditions
        if c.condition.mode == "one_of" and c.status == "met" and not c.presumed
    }
    out = []
    for c in check.conditions:
        if c.fact.value is not None or c.condition.mode == "exception":
            continue
        if c.condition.mode == "one_of" and c.condition.group in met_groups:
            continue
        if (c.presumed if presumed else c.status == "unknown") and c.condition.kind not in out:
            out.append(c.condition.kind)
    return out


def flow_questions(checklist: Checklist, question: Callable[[str], str]) -> list[tuple[int, str]]:
    """The open facts of one flow's checklist as (tier, key), most telling first (``question``
    gives a key's question; a key it gives none for is left out)."""
    flow = checklist.flow
    found: list[tuple[int, str]] = []

    def add(tier: int, key: str) -> None:
        if flow.fact(key).value is None and key not in {k for _, k in found}:
            found.append((tier, key))

    if not checklist.applicability.applies:
        return []  # the case states that HIPAA does not govern the flow
    for turn in checklist.turns:
        for key in turn.kind.split(","):
            add(0, key)
    for key in APPLICABILITY_QUESTIONS:
        add(1, key)
    for prohibition in checklist.prohibitions:
        for c in prohibition.conditions:
            if c.condition.mode == "exception":
                add(2, c.condition.kind)
    top = [c for c in checklist.candidates if c.status != "unmet"][:TOP_CANDIDATES]
    for check in top:
        for key in _open_conditions(check, presumed=False):
            add(3, key)
    if checklist.label == "permit":
        best = next((c for c in checklist.candidates if c.status == "met"), None)
        if best is not None:
            for key in _open_conditions(best, presumed=True):
                add(4, key)
    return [(tier, key) for tier, key in found if question(key)]


def open_questions(
    checklists: Sequence[Checklist], question: Callable[[str], str], limit: int = MAX_QUESTIONS
) -> list[Question]:
    """The questions to ask for a case, at most ``limit``: by tier, the deciding flow's first
    within a tier (a prohibited flow decides a case, then a permitted one)."""
    case = combine(checklists)
    first = next((n for n, c in enumerate(checklists) if c is case), 0)
    ranked: list[tuple[int, int, int, Question]] = []
    for number, checklist in enumerate(checklists):
        for order, (tier, key) in enumerate(flow_questions(checklist, question)):
            ranked.append(
                (
                    tier,
                    0 if number == first else 1 + number,
                    order,
                    Question(number, key, question(key), TIERS[tier]),
                )
            )
    ranked.sort(key=lambda item: item[:3])
    return [item[3] for item in ranked[:limit]]


# --------------------------------------------------------------------------- answers


def evidence_span(narrative: str, evidence: str) -> tuple[int, int] | None:
    """Where ``evidence`` is in the narrative, its words in order (whitespace, case and the kind
    of quote marks aside; surrounding quotes and an ellipsis dropped); None when it is not there
    or holds no word."""
    cleaned = evidence.translate(_QUOTES).strip().strip("\"'").strip()
    cleaned = cleaned.removesuffix("...").removesuffix("…").removeprefix("...").strip()
    cleaned = cleaned.rstrip(".").strip() or cleaned
    words = cleaned.split()
    if not words or not _WORD.search(cleaned):
        return None
    parts = [re.escape(w).replace('"', '["“”]').replace("'", "['‘’`]") for w in words]
    match = re.search(r"\s+".join(parts), narrative, re.IGNORECASE)
    return (match.start(), match.end()) if match else None


@cache
def _fact_words() -> tuple[dict[str, frozenset[str]], dict[str, tuple[re.Pattern[str], ...]]]:
    """Per fact key, the stems of the words that can state it (its question, label and hints
    in the catalogue, the literal words of the reader's cues for it, and for the applicability
    questions the words that name a party's role, the role graph's among them) less the stems
    common to many keys; and the
    reader's cues for it, compiled."""
    from privacy_checklist.kg.kb import builtin_path
    from privacy_checklist.kg.lexicon import FUNCTION_WORDS, STOP_WORDS
    from privacy_checklist.kg.store import condition_kinds
    from privacy_checklist.reasoning.text import data_path
    from privacy_checklist.retrieval.text import stem

    cues = json.loads(data_path("fact_cues.json").read_text(encoding="utf-8"))
    kinds = condition_kinds()
    roles = json.loads((builtin_path() / "roles.json").read_text(encoding="utf-8"))
    party_words = " ".join(
        [
            f"{k} {v}"
            for group in ("parties", "org_words", "titles")
            for k, v in cues[group].items()
            if k != "about"
        ]
        + [" ".join([n.get("name", ""), *n.get("aliases", [])]) for n in roles["nodes"]]
    )
    raw: dict[str, set[str]] = {}
    patterns: dict[str, tuple[re.Pattern[str], ...]] = {}
    for key in set(cues["facts"]) | set(kinds) | set(APPLICABILITY_QUESTIONS):
        found = cues["facts"].get(key, {})
        cued = [p for value in ("true", "false") for p in found.get(value, [])]
        # a cue that holds only for some parties is a word of the fact, not a match alone
        patterns[key] = tuple(re.compile(p, re.IGNORECASE) for p in cued if isinstance(p, str))
        sources = [p if isinstance(p, str) else str(p.get("re", "")) for p in cued]
        kind = kinds.get(key)
        text = " ".join(
            [APPLICABILITY_QUESTIONS.get(key, ""), *sources]
            + ([kind.question, kind.label, kind.cues_hint] if kind else [])
        )
        parties = party_words if key in PARTY_QUESTIONS else ""
        raw[key] = {
            stem(w)
            for w in re.findall(r"[a-z]{3,}", text.lower()) + re.findall(r"[a-z]{4,}", parties)
            if w not in FUNCTION_WORDS and w not in STOP_WORDS
        }
    spread = Counter(w for words in raw.values() for w in words)
    common = {w for w, n in spread.items() if n > len(raw) // 6}
    return {k: frozenset(v - common) for k, v in raw.items()}, patterns


def bears_on(key: str, evidence: str, question: str = "") -> bool:
    """Whether quoted ``evidence`` could state the fact ``key``: one of the reader's cues for
    it matches, or it holds a word (by its stem) of the words that state that fact. A word
    every question shares ("the", "patient", "information") bears on none; a key the
    catalogue does not know is read from ``question``'s own words."""
    from privacy_checklist.retrieval.text import stem

    vocabulary, patterns = _fact_words()
    if any(p.search(evidence) for p in patterns.get(key, ())):
        return True
    words = vocabulary.get(key)
    if words is None:
        words = frozenset(stem(w) for w in re.findall(r"[a-z]{4,}", question.lower()))
    said = {stem(w) for w in re.findall(r"[a-z]{3,}", evidence.lower())}
    return bool(said & words)


def read_answer(narrative: str, question: Question, call: Call) -> Answer:
    """The model's answer to one question, accepted or not (see the module docstring)."""

    def rejected(problem: str, answer: str | None = None, evidence: str = "") -> Answer:
        return Answer(question, answer, evidence, None, problem)

    if call.text is None:
        return rejected(f"request failed: {call.error}")
    data = last_object_with(call.text, "answer")
    if data is None:
        return rejected("no JSON object with an 'answer' field")
    raw = json_field(data, "answer")
    said = str(raw).strip().strip(".!\"'").strip().lower() if isinstance(raw, str) else None
    evidence = text_field(data, "evidence").strip()
    if said not in ANSWERS:
        return rejected(f"the answer {str(raw)[:40]!r} is not yes, no or unknown", None, evidence)
    value = ANSWERS[said]
    if value is None:
        return Answer(question, said, evidence, None, None)
    if not evidence:
        return rejected(f"'{said}' without evidence quoted from the case", said)
    span = evidence_span(narrative, evidence)
    if span is None:
        return rejected(f"the evidence {evidence[:80]!r} is not words of the case", said, evidence)
    start, end = span
    if not bears_on(question.key, narrative[start:end], question.question):
        return rejected(
            f"the evidence {evidence[:80]!r} holds no word that bears on {question.key}",
            said,
            evidence,
        )
    fact = Fact(question.key, value, start, end, narrative[start:end], "llm")
    return Answer(question, said, evidence, fact, None)


def contradictions(answers: Sequence[Answer]) -> list[Answer]:
    """The answers with those that contradict another accepted answer of the same flow set
    aside (both stay unknown): a kind and the kind derived from it answered so that they
    disagree (both "the minimum necessary" and "more than the minimum necessary"; an agreement
    documented that was not given)."""
    from privacy_checklist.kg.store import condition_kinds

    kinds = condition_kinds()
    said = {(a.question.flow, a.question.key): a for a in answers if a.fact is not None}
    clash: dict[tuple[int, str], str] = {}
    for (flow, key), answer in said.items():
        kind = kinds.get(key)
        if kind is None or not kind.derived_from:
            continue
        other = said.get((flow, kind.derived_from))
        assert answer.fact is not None
        if other is None or other.fact is None:
            continue
        if (
            answer.fact.value == other.fact.value  # "more than the minimum" and "the minimum"
            if kind.negate
            else answer.fact.value and not other.fact.value  # documented, yet not agreed
        ):
            clash[(flow, key)] = kind.derived_from
            clash[(flow, kind.derived_from)] = key
    return [
        replace(a, fact=None, problem=f"contradicts the answer to {clash[k]}")
        if (k := (a.question.flow, a.question.key)) in clash
        else a
        for a in answers
    ]


def with_facts(flow: Flow, facts: Sequence[Fact]) -> Flow:
    """``flow`` with the facts it leaves unknown set (a stated fact is never overridden)."""
    merged = dict(flow.facts)
    for fact in facts:
        if flow.fact(fact.key).value is None:
            merged[fact.key] = fact
    return replace(flow, facts=merged)


# --------------------------------------------------------------------------- the method


@dataclass
class ChecklistLLMReasoner(ChecklistReasoner):
    """The ``checklist-llm`` method (see the module docstring).

    Args:
        client: the LLM client (required: :func:`~privacy_checklist.reasoning.methods.
            build_method` refuses to build the method without one).
        max_questions: at most this many questions per case.
    """

    client: Client | None = None
    max_questions: int = MAX_QUESTIONS
    name: str = field(default=NAME, init=False)
    blend: bool = False

    def question(self, key: str) -> str:
        """A key's question: an applicability question, or the condition kind's."""
        assert self.catalogue is not None
        if key in APPLICABILITY_QUESTIONS:
            return APPLICABILITY_QUESTIONS[key]
        return self.catalogue.question(key) if key in self.catalogue.kinds else ""

    def request(self, text: str, flow: Flow, question: Question) -> list[Message]:
        """The messages of one question: the case and the flow fenced, the question not."""
        return messages(
            STEP,
            case=fence(text),
            flow=fence(
                flow.summary or "(the flow's parts were not read)",
                "FLOW",
                "The information flow the question is about, as read from the narrative",
            ),
            question=question.question,
        )

    def check(self, text: str) -> Verdict:
        """The verdict on a narrative.

        Raises:
            QueryError: the text is empty or not text (as for every method).
        """
        from privacy_checklist.reasoning.methods import llm_location
        from privacy_checklist.retrieval.base import check_query

        assert self.reader is not None and self.catalogue is not None and self.client is not None
        text = check_query(text)
        flows = self.reader.read(text).flows
        first = [decide(self.catalogue, flow, self.rule) for flow in flows]
        questions = open_questions(first, self.question, self.max_questions)
        trace = Trace(self.client)
        calls = trace.ask_all([(q.step, self.request(text, flows[q.flow], q)) for q in questions])
        answers = contradictions(
            [read_answer(text, q, c) for q, c in zip(questions, calls, strict=True)]
        )
        llm = client_name(self.client)
        failed = [c for c in calls if c.text is None]
        if failed:
            failure = (
                f"{failed[0].step}: LLM request failed: {failed[0].error or 'no answer'} at "
                f"{llm_location(self.client)}"
            )
            return Verdict(
                label=REQUEST_FAILURE,
                method=self.name,
                reasoning=[
                    f"{len(failed)} of {len(calls)} questions to the model failed; the "
                    "checklist cannot decide without them.",
                    failure.split(": ", 1)[1],
                ],
                raw=_raw(calls),
                llm=llm,
                calls=trace.calls,
                failure=failure,
            )
        accepted: dict[int, list[Fact]] = {}
        for answer in answers:
            if answer.fact is not None:
                accepted.setdefault(answer.question.flow, []).append(answer.fact)
        decided = [
            decide(self.catalogue, with_facts(flow, accepted.get(n, [])), self.rule)
            if n in accepted
            else first[n]
            for n, flow in enumerate(flows)
        ]
        verdict = self.verdict(decided, text)
        before = combine(first)
        before_llm = before.label if before is not None else None
        verdict.reasoning.insert(-1, _summary(answers, before_llm or "not_applicable"))
        verdict.raw, verdict.llm, verdict.calls = _raw(calls), llm, trace.calls
        if verdict.checklist is not None:
            verdict.checklist = replace(
                verdict.checklist, asked=tuple(answers), before_llm=before_llm
            )
        verdict.details = {"asked": [a.to_json() for a in answers]}
        return verdict

    def settings(self) -> dict[str, Any]:
        """The checklist's settings and what this method adds (the cap, its questions, the
        model and its endpoint, the prompts)."""
        from privacy_checklist.reasoning.evaluation.digests import llm_settings

        return (
            super().settings()
            | llm_settings(self.client, self.kb)
            | {
                "max_questions": self.max_questions,
                "top_candidates": TOP_CANDIDATES,
                "applicability_questions": dict(sorted(APPLICABILITY_QUESTIONS.items())),
                "presumed": sorted(presumed_kinds()),
            }
        )


def _raw(calls: Sequence[Call]) -> str:
    return "\n\n".join(
        f"[{c.step}]\n" + (c.text if c.text is not None else f"(no answer: {c.error})")
        for c in calls
    )


def _summary(answers: Sequence[Answer], before: str) -> str:
    if not answers:
        return "The model was asked nothing: no fact left unknown bears on the verdict."
    kept = [a for a in answers if a.fact is not None]
    unknown = [a for a in answers if a.answer == "unknown"]
    rejected = [a for a in answers if a.problem]
    parts = [
        f"The model was asked {len(answers)} question{'s' if len(answers) > 1 else ''} the "
        f"reader left open: {len(kept)} answered with evidence from the case"
        + (" (" + ", ".join(f"{a.question.key} {a.answer}" for a in kept) + ")" if kept else ""),
        f"{len(unknown)} unknown",
        f"{len(rejected)} not accepted"
        + (
            " (" + "; ".join(f"{a.question.key}: {a.problem}" for a in rejected) + ")"
            if rejected
            else ""
        ),
    ]
    return ", ".join(parts) + f". Before the answers the checklist said {before}."
