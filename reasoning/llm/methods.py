"""The paper's LLM methods over any OpenAI-compatible model (or a local backend), as pipelines.

Each is a :class:`~privacy_checklist.reasoning.verdict.Reasoner`;
:func:`~privacy_checklist.reasoning.methods.build_method` makes one by name. The methods:

``dp``
    Direct prompt: the case, and the question permitted / prohibited / not applicable.
``cot-auto``
    The model writes its own plan of steps, carries it out, then answers (one request).
``cot-manual``
    Our Contextual Integrity guidelines step by step: the flow and its three parties, the
    information type and purpose, their match to the law's terms (covered entity, business
    associate, protected health information ...), the permissions and prohibitions, the
    judgment.
``agent-id``
    The model names the regulation ids that bear on the case; they are normalised
    (``45 CFR 164.512(f)(1)``, ``§164.512(f)``, ``164.512 (f)(1)``, ``Section 164.502(a)``) and
    checked against the regulation tree (a missing paragraph is replaced by its nearest existing
    ancestor below its section; ids with no such ancestor are dropped); the valid ones' text goes
    into the cot-manual prompt. The verdict keeps the counts proposed / valid / dropped.
``bm25-content``
    The model explains the case in the law's terms; BM25 retrieves ``k`` paragraphs with that
    explanation; the paragraphs (ids and text) go into the cot-manual prompt.
``ci-es-content``
    The model reads the case's CI characteristics (``llm_flows.py``); CI-ES retrieves ``k``
    paragraphs for the case (its text plus the characteristics and the law's terms they
    resolve to); the same.

The two retrieval methods also run the per-rule chain of thought: for each retrieved paragraph,
is the flow within it, and does it comply, violate it, or is the paragraph unrelated? These
requests and the overall one go through ``client.map`` (concurrently). Aggregation
(:func:`aggregate`): a paragraph violated → prohibited; otherwise, when some check failed, the
overall answer decides (a failed check might have been a violation); otherwise a paragraph
complied with → permitted; when every paragraph is unrelated (or none was retrieved) the
overall answer decides, since "none of these k paragraphs" is not "HIPAA does not apply"
(retrieval may have missed the right one), and the overall answer judges applicability itself.

A verdict that could not be reached because a request failed (refused, timeout, HTTP error,
a body that is not a completion, an empty answer ...) gets the label ``request_failure`` and, in
``failure``, "<step>: LLM request failed: <cause> at <URL>"; it says nothing about the method,
and an evaluation asks it again (``retry``). An answer with no readable label gets
``parse_failure`` with the reason: the method's own failure, counted as wrong. Nothing raises
for a bad answer and nothing falls back to a default label. Every verdict keeps the prompts and
the raw answers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privacy_checklist.kg.citations import ids_in
from privacy_checklist.kg.ids import RegId
from privacy_checklist.reasoning.llm.client import Client, Message
from privacy_checklist.reasoning.llm.prompting import (
    JUDGED,
    Call,
    Parsed,
    Trace,
    answer_words,
    client_name,
    fence,
    last_object_with,
    messages,
    neutralise,
    parse_answer,
    template,
    text_field,
)
from privacy_checklist.reasoning.llm.prompting import field as json_field
from privacy_checklist.reasoning.reading.types import Flow
from privacy_checklist.reasoning.verdict import (
    PARSE_FAILURE,
    REQUEST_FAILURE,
    CitedNorm,
    Label,
    RetrievedNorm,
    Verdict,
)
from privacy_checklist.retrieval.base import Hit, SearchIndex

if TYPE_CHECKING:
    from privacy_checklist.kg.kb import KnowledgeBase
    from privacy_checklist.kg.tree import RegulationTree
    from privacy_checklist.reasoning.reading.llm_flows import LLMFlowExtractor

from privacy_checklist.reasoning.methods import DEFAULT_K, llm_location

RULE_CHARS = 2000  # of a paragraph's text (with the sections above it) in a prompt


AGENT_MAX_IDS = 8


_PARAGRAPH_LABEL = re.compile(r"^(?:[a-z]{1,2}|[0-9]{1,2}|[A-Z]|[ivxl]{1,6})$")


def find_ids(text: str) -> list[str]:
    """Every regulation id in a text, normalised by the knowledge base's one id finder
    (:func:`~privacy_checklist.kg.citations.ids_in`): ``45 CFR 164.512(f)(1)``,
    ``§164.512(f)``, ``164.512 (f)(1)`` and ``Section 164.502(a)`` become ``164.512(f)(1)``,
    ``164.512(f)``, ``164.512(f)(1)``, ``164.502(a)``."""
    return [str(found.id) for found in ids_in(text)]


def normalize_id(text: str) -> str | None:
    """The first regulation id in ``text``, normalised (see :func:`find_ids`), or None."""
    found = find_ids(text)
    return found[0] if found else None


@dataclass
class IdCheck:
    """Ids a model proposed, checked against the regulation tree."""

    proposed: list[str] = field(default_factory=list)
    valid: list[str] = field(default_factory=list)  # tree node ids, in order, no repeats
    repaired: dict[str, str] = field(default_factory=dict)  # proposed id -> existing ancestor
    dropped: list[dict[str, str]] = field(default_factory=list)  # {"id", "reason"}

    def to_json(self) -> dict[str, Any]:
        return {
            "proposed": len(self.proposed),
            "valid": len(self.proposed) - len(self.dropped),
            "dropped": len(self.dropped),
            "ids": self.valid,
            "proposed_ids": self.proposed,
            "repaired": self.repaired,
            "dropped_ids": self.dropped,
        }


def check_ids(tree: RegulationTree, proposed: Sequence[str]) -> IdCheck:
    """Normalise each proposed id and keep those of the tree (see the module docstring)."""
    result = IdCheck()
    for raw in proposed:
        found = ids_in(str(raw))
        if not found:
            result.proposed.append(str(raw))
            result.dropped.append({"id": str(raw), "reason": "not a regulation id"})
            continue
        for mention in found:
            wanted = str(mention.id)
            result.proposed.append(wanted)
            node, reason = _existing(tree, mention.id)
            if node is None:
                result.dropped.append({"id": wanted, "reason": reason})
                continue
            if node != wanted:
                result.repaired[wanted] = node
            if node not in result.valid:
                result.valid.append(node)
    return result


def _existing(tree: RegulationTree, wanted: RegId) -> tuple[str | None, str]:
    section = wanted.section
    if section is None or section not in tree:
        return None, f"no section {section} in the regulations"
    node, exact = tree.resolve(wanted)
    if exact or node != section:
        return node, ""
    # only the section exists: a paragraph label that is not there is a wrong id; prose in
    # parentheses after a section ("164.512 (the public interest exceptions)") is the section
    if _PARAGRAPH_LABEL.match(wanted.labels[0]):
        return None, f"no paragraph ({wanted.labels[0]}) in {section}"
    return section, ""


def _listed(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, str | int | float) and str(v).strip()]
    return []


def rule_text(kb: KnowledgeBase, node: str, limit: int = RULE_CHARS) -> str:
    """A paragraph as a prompt shows it: its full specification, then its sub-paragraphs."""
    tree = kb.tree
    text = tree.full_specification(node)
    below = tree.subtree_text(node).split("\n")[1:]
    if below:
        text += "\n" + "\n".join(below)
    return text if len(text) <= limit else text[:limit].rstrip() + " […]"


def norm_type(kb: KnowledgeBase, node: str) -> str:
    norm = kb.norms.get(node) if kb.has_norms else None
    return norm.norm_type if norm is not None else "not annotated"


def norm_entry(kb: KnowledgeBase, node: str) -> CitedNorm:
    item = kb.tree[node]
    return CitedNorm(
        id=node,
        text=item.text or item.title or rule_text(kb, node, 300),
        norm_type=norm_type(kb, node),
    )


def regulations_block(kb: KnowledgeBase, nodes: Sequence[str]) -> str:
    """Paragraphs (ids and text) for a prompt, fenced; '' for none."""
    if not nodes:
        return ""
    parts = [
        f"[{node}] ({norm_type(kb, node)})\n{neutralise(rule_text(kb, node))}" for node in nodes
    ]
    return (
        "Paragraphs of the HIPAA regulations that may bear on the case, each after its id and "
        "our annotation (permit, prohibit or definition), quoted from the law between the markers "
        "<<<RULES and RULES>>>. Use those that apply; they may not all apply.\n<<<RULES\n"
        + "\n\n".join(parts)
        + "\nRULES>>>\n"
    )


@dataclass(kw_only=True)
class Result:
    """What a pipeline decided, before it becomes a verdict."""

    label: str | None
    failure: str | None = None
    norms: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    flows: list[Flow] = field(default_factory=list)
    retrieved: list[RetrievedNorm] | None = None


def raw_answers(calls: Sequence[Call]) -> str:
    """The answers of a verdict's requests, as one text (one request: its answer alone)."""

    def one(call: Call) -> str:
        return call.text if call.text is not None else f"(no answer: {call.error})"

    if len(calls) == 1:
        return one(calls[0])
    return "\n\n".join(f"[{c.step}]\n{one(c)}" for c in calls)


#: The per-rule judgments by the words an answer gives them in (``answer_words.json``).
JUDGMENTS = {
    word: judgment for judgment, words in answer_words()["judgments"].items() for word in words
}


def parse_judgment(call: Call) -> Parsed:
    """A per-rule answer: comply / violate / unrelated (``within_scope: no`` → unrelated)."""
    if call.text is None:
        return Parsed(label=None, reason=f"request failed: {call.error}")
    parsed = parse_answer(
        call.text,
        "judgment",
        JUDGMENTS,
        ("judgment", "answer"),
        question="compliance",
        translate=JUDGED,
    )
    scope = (
        str(json_field(parsed.data, "within_scope") or "").strip().lower() if parsed.data else ""
    )
    if parsed.label is not None and scope in ("no", "false"):
        return Parsed(label="unrelated", data=parsed.data)
    return parsed


def aggregate(judgments: Sequence[str | None], overall: str | None) -> tuple[str | None, str]:
    """One label from the per-rule judgments and the overall answer (module docstring)."""
    if "violate" in judgments:
        return "prohibit", "a retrieved paragraph is violated: prohibited"
    if None in judgments:
        return (
            overall,
            "some paragraph checks failed and none found a violation: the overall answer",
        )
    if "comply" in judgments:
        return "permit", "no paragraph violated and at least one complied with: permitted"
    if judgments:
        return overall, "every retrieved paragraph is unrelated: the overall answer"
    return overall, "no paragraph retrieved: the overall answer"


class LLMMethod:
    """A pipeline of LLM requests ending in a verdict (subclasses define ``run``)."""

    name = ""

    def __init__(
        self,
        kb: KnowledgeBase,
        index: SearchIndex | None,
        client: Client,
        *,
        k: int = DEFAULT_K,
        per_rule: bool = True,
        restate: bool = True,
    ) -> None:
        self.kb, self.index, self.client = kb, index, client
        self.k, self.per_rule = k, per_rule
        self.restate = restate

    def settings(self) -> dict[str, Any]:
        """The model, its endpoint and parameters, the prompts, the knowledge base, whether a
        restating question is asked, and (a local model) its file's size."""
        from privacy_checklist.reasoning.evaluation.digests import llm_settings

        out = llm_settings(self.client, self.kb) | {"restate": self.restate}
        path = getattr(getattr(self.client, "config", None), "model_path", None)
        if path is not None and Path(path).is_file():
            out["model_bytes"] = Path(path).stat().st_size
        return out

    def check(self, text: str) -> Verdict:
        """The verdict on a case.

        Raises:
            QueryError: the text is empty or not text (as for every method).
        """
        from privacy_checklist.retrieval.base import check_query

        text = check_query(text)
        trace = Trace(self.client)
        result = self.run(text, trace)
        failed = [c for c in trace.calls if c.text is None and not c.step.startswith("restate")]
        reasoning = list(result.reasoning)
        failure = None
        if result.label is not None:
            label = Label(result.label)
        elif failed:  # no verdict because a request failed: not the method's doing
            label = REQUEST_FAILURE
            failure = self.failed(failed[0].step, failed[0].error)
            reasoning.append(failure.split(": ", 1)[1])
        else:
            label = PARSE_FAILURE
            failure = result.failure or "no label"
            reasoning.append(f"Parse failure: {failure}")
        return Verdict(
            label=label,
            method=self.name,
            norms=[norm_entry(self.kb, node) for node in result.norms],
            reasoning=reasoning,
            raw=raw_answers(trace.calls),
            flows=result.flows,
            retrieved=result.retrieved,
            llm=client_name(self.client),
            calls=trace.calls,
            failure=failure,
            details=result.details,
        )

    def failed(self, step: str, error: str | None) -> str:
        """A failed request, as every verdict and report words it."""
        return f"{step}: LLM request failed: {error or 'no answer'} at {llm_location(self.client)}"

    def run(self, text: str, trace: Trace) -> Result:
        raise NotImplementedError

    # ---------------------------------------------------------------- helpers
    def ask_again(self, call: Call, parsed: Parsed, trace: Trace) -> Parsed:
        """The restating question: the model's own answer and a request to state its verdict
        as one word of the allowed labels (the paper's judge step), read as any answer."""
        request = [
            *call.messages,
            {"role": "assistant", "content": call.text or ""},
            {"role": "user", "content": template("restate").strip()},
        ]
        again = trace.ask(f"restate {call.step}", request)
        if again.text is None:
            return Parsed(
                label=None,
                reason=f"{parsed.reason}; the restating question failed: {again.error}",
                data=parsed.data,
            )
        second = parse_answer(again.text)
        if second.label is None:
            return Parsed(
                label=None,
                reason=f"{parsed.reason}; asked to restate: {second.reason}",
                data=parsed.data,
            )
        return Parsed(label=second.label, data=parsed.data, how="restated")

    def decide(self, call: Call, trace: Trace | None = None) -> Result:
        """A final answer read into a result: label, the ids it cites, its reasoning. When the
        answer holds no readable verdict and ``trace`` is given, the model is asked once more,
        in the same conversation, to state its verdict in one word (:meth:`restate`)."""
        if call.text is None:
            return Result(label=None, failure=self.failed(call.step, call.error))
        parsed = parse_answer(call.text)
        if parsed.label is None and trace is not None and self.restate:
            parsed = self.ask_again(call, parsed, trace)
        reasoning = []
        plan = text_field(parsed.data, "plan")
        if plan:
            reasoning.append(f"Plan: {plan}")
        said = text_field(parsed.data, "reasoning")
        if said:
            reasoning.append(f"Model ({call.step}): {said}")
        if parsed.label is None:
            return Result(label=None, failure=f"{call.step}: {parsed.reason}", reasoning=reasoning)
        cited = check_ids(self.kb.tree, _listed(json_field(parsed.data or {}, "regulations")))
        if parsed.how == "restated":
            reasoning.append(
                "The verdict was read from the model's answer to the restating question"
            )
        return Result(
            label=parsed.label,
            norms=cited.valid,
            reasoning=reasoning,
            details={"cited": cited.to_json()} if cited.proposed else {},
        )

    def final(self, text: str, context: str = "", nodes: Sequence[str] = ()) -> list[Message]:
        """The cot-manual request, with context (fenced) and paragraphs when given."""
        return messages(
            "cot_manual",
            case=fence(text),
            context=context,
            regulations=regulations_block(self.kb, nodes),
        )


class DirectPrompt(LLMMethod):
    name = "dp"

    def run(self, text: str, trace: Trace) -> Result:
        return self.decide(trace.ask("dp", messages("dp", case=fence(text))), trace)


class CotAuto(LLMMethod):
    name = "cot-auto"

    def run(self, text: str, trace: Trace) -> Result:
        return self.decide(trace.ask("cot_auto", messages("cot_auto", case=fence(text))), trace)


class CotManual(LLMMethod):
    name = "cot-manual"

    def run(self, text: str, trace: Trace) -> Result:
        return self.decide(trace.ask("cot_manual", self.final(text)), trace)


class AgentId(LLMMethod):
    name = "agent-id"

    def run(self, text: str, trace: Trace) -> Result:
        call = trace.ask("agent_id", messages("agent_id", case=fence(text)))
        if call.text is None:
            return Result(label=None, failure=self.failed("agent_id", call.error))
        data = last_object_with(call.text, "regulations")
        proposed = _listed(json_field(data, "regulations")) if data else find_ids(call.text)
        ids = check_ids(self.kb.tree, proposed[: AGENT_MAX_IDS * 2])
        valid = ids.valid[:AGENT_MAX_IDS]
        result = self.decide(trace.ask("cot_manual", self.final(text, nodes=valid)), trace)
        result.details = {**result.details, "agent_ids": ids.to_json()}
        result.reasoning.insert(
            0,
            f"Agent ids: {len(ids.proposed)} proposed, {len(valid)} used "
            f"({', '.join(valid) or 'none'}), {len(ids.dropped)} dropped"
            + (" (" + ", ".join(d["id"] for d in ids.dropped) + ")" if ids.dropped else ""),
        )
        if not result.norms and result.label is not None:
            result.norms = valid  # the answer cited none: the paragraphs it was given
        return result


@dataclass(kw_only=True)
class Retrieved:
    """What a retrieval method found before the verdict."""

    hits: list[Hit]
    context: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    reasoning: list[str] = field(default_factory=list)
    flows: list[Flow] = field(default_factory=list)
    failure: str | None = None


class RetrievalMethod(LLMMethod):
    """Retrieve ``k`` paragraphs, then the overall answer and the per-rule checks."""

    retrieval = ""

    def prepare(self, text: str, trace: Trace) -> Retrieved:
        raise NotImplementedError

    def settings(self) -> dict[str, Any]:
        """An LLM method's settings and how many paragraphs are retrieved and checked."""
        return super().settings() | {"k": self.k, "per_rule": self.per_rule}

    def search(self, query: str, method: str) -> list[Hit]:
        """The top ``k`` hits of the retrieval index (:func:`build_method` gives it one)."""
        if self.index is None:
            raise ValueError(f"method {self.name!r} needs a retrieval index")
        return self.index.search(query, method, self.k)

    def run(self, text: str, trace: Trace) -> Result:
        found = self.prepare(text, trace)
        if found.failure is not None:
            return Result(
                label=None,
                failure=found.failure,
                reasoning=found.reasoning,
                details=found.details,
            )
        nodes = [hit.node for hit in found.hits]
        steps: list[tuple[str, list[Message]]] = [
            ("cot_manual", self.final(text, found.context, nodes))
        ]
        if self.per_rule:
            steps += [
                (
                    f"rule_check {node}",
                    messages(
                        "rule_check",
                        case=fence(text),
                        context=found.context,
                        rule_id=node,
                        norm_type=norm_type(self.kb, node),
                        rule=neutralise(rule_text(self.kb, node)),
                    ),
                )
                for node in nodes
            ]
        calls = trace.ask_all(steps)
        overall = self.decide(calls[0], trace)
        checks = [
            (node, parse_judgment(call)) for node, call in zip(nodes, calls[1:], strict=False)
        ]
        if self.per_rule:
            label, how = aggregate([p.label for _, p in checks], overall.label)
        else:
            label, how = overall.label, "the overall answer (per-rule checks off)"
        judgments = [p.label for _, p in checks]
        if self.per_rule and "violate" in judgments:
            norms = [node for node, p in checks if p.label == "violate"]
        elif self.per_rule and None not in judgments and "comply" in judgments:
            norms = [node for node, p in checks if p.label == "comply"]
        else:
            norms = overall.norms
        retrieved = [
            RetrievedNorm(id=h.node, score=round(float(h.score), 6), method=h.method, via=h.via)
            for h in found.hits
        ]
        rule_checks = [
            {
                "id": node,
                "judgment": p.label,
                "failure": p.reason if p.label is None else None,
                "reasoning": text_field(p.data, "reasoning"),
            }
            for node, p in checks
        ]
        reasoning = [
            *found.reasoning,
            f"Retrieved ({self.retrieval}, k={self.k}): " + (", ".join(nodes) or "nothing"),
            *overall.reasoning,
            f"Overall answer: {overall.label or 'none (' + str(overall.failure) + ')'}",
        ]
        if checks:
            reasoning.append(
                "Paragraph checks: "
                + "; ".join(f"{node} {p.label or 'failed'}" for node, p in checks)
            )
        reasoning.append(f"Aggregation: {how}")
        failure = None
        if label is None:
            failure = overall.failure or "no label"
        return Result(
            label=label,
            failure=failure,
            norms=norms,
            reasoning=reasoning,
            details={
                **found.details,
                "overall": overall.label,
                "rule_checks": rule_checks,
                "aggregation": how,
                **({"cited": overall.details["cited"]} if "cited" in overall.details else {}),
            },
            flows=found.flows,
            retrieved=retrieved,
        )


class Bm25Content(RetrievalMethod):
    name = "bm25-content"
    retrieval = "bm25"

    def prepare(self, text: str, trace: Trace) -> Retrieved:
        call = trace.ask("explain", messages("explain", case=fence(text)))
        if call.text is None:
            return Retrieved(hits=[], failure=self.failed("explain", call.error))
        data = last_object_with(call.text, "explanation")
        explanation = (text_field(data, "explanation") if data else "") or call.text.strip()
        hits = self.search(explanation, "bm25")
        return Retrieved(
            hits=hits,
            context=fence(
                explanation,
                "EXPLANATION",
                "An explanation of the case in the law's terms, written earlier by a model from "
                "the narrative",
            )
            + "\n",
            details={"explanation": explanation},
            reasoning=[f"Explanation: {explanation}"],
        )


class CiEsContent(RetrievalMethod):
    name = "ci-es-content"
    retrieval = "ci-es"

    _extractor: LLMFlowExtractor | None = None

    def extractor(self) -> LLMFlowExtractor:
        if self._extractor is None:
            from privacy_checklist.reasoning.reading.llm_flows import LLMFlowExtractor

            self._extractor = LLMFlowExtractor(
                self.client,
                self.kb.role_resolver(embeddings=False),
                self.kb.attribute_resolver(embeddings=False),
            )
        return self._extractor

    def prepare(self, text: str, trace: Trace) -> Retrieved:
        extractor = self.extractor()
        call = extractor.ask(text, trace)
        flows: list[Flow] = []
        found: list[dict[str, str]] = []
        note = ""
        if call.text is None:
            note = f"CI extraction failed ({call.error}): retrieval reads the case alone"
        else:
            try:
                flows, found = extractor.from_answer(text, call.text)
            except ValueError as exc:
                note = f"CI extraction unreadable ({exc}): retrieval reads the case alone"
        terms: list[str] = []
        for flow in flows:
            for name in ("sender", "recipient", "subject", "information", "purpose"):
                part = getattr(flow, name)
                if part is not None and part.resolved and part.resolved != "none":
                    terms.append(part.resolved)
        for chars in found:
            terms += [chars[k] for k in ("sender_role", "recipient_role", "information_type")]
            terms.append(chars["purpose"])
        terms = list(dict.fromkeys(t for t in terms if t))
        query = text + ("\n" + "; ".join(terms) if terms else "")
        hits = self.search(query, "ci-es")
        context = (
            fence(
                json.dumps(found, ensure_ascii=False, indent=1),
                "FLOWS",
                "The case's information flows, as a model read them earlier from the narrative",
            )
            + "\n"
            if found
            else ""
        )
        summary = " | ".join(
            ", ".join(f"{key} {value}" for key, value in chars.items() if value) for chars in found
        )
        reasoning = [note or f"CI characteristics: {summary or 'none'}"]
        return Retrieved(
            hits=hits,
            context=context,
            details={"characteristics": found, "ci_query_terms": terms},
            reasoning=reasoning,
            flows=flows,
        )


CLASSES: dict[str, type[LLMMethod]] = {
    cls.name: cls for cls in (DirectPrompt, CotAuto, CotManual, AgentId, Bm25Content, CiEsContent)
}
