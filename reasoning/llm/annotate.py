"""The LLM annotator of norms: the paper's questions (norm type, CI characteristics, reference
relation) and the norm's conditions (kinds of ``ontologies/condition_kinds.json``, each quoting
the words that state it) asked as one JSON prompt, the answer checked against a schema.

A condition is checked as the curated ones and an editor's are
(:func:`~privacy_checklist.kg.norms.read_condition`): one whose kind is not in the vocabulary or
whose words are not in the paragraph's text (or its ancestors' in the same section) is dropped
and counted (:attr:`LLMAnnotator.dropped`), never stored; the rest of the answer stands.

An answer that is not valid JSON, or not of the schema, gets one repair request quoting the
problem; a second failure (or a timeout, or a refused request) records the paragraph as failed
with its reason, and the other paragraphs are kept. The results are :class:`Norm` objects whose
provenance is ``llm:<model>``; the caller stores them (``kg.store.NormStore.put_machine``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from privacy_checklist.kg.conditions import (
    CatalogueError,
    Condition,
    ConditionKind,
    load_kinds,
)
from privacy_checklist.kg.norms import NORM_TYPES, PAPER_TYPES, RELATIONS, Norm, read_condition
from privacy_checklist.kg.tree import RegulationTree
from privacy_checklist.reasoning.llm.client import LLMClient, Message, Outcome, parse_json_answer
from privacy_checklist.reasoning.llm.prompting import prompt_text

PROMPT = "annotate_norm.v2.txt"
YES_NO = ("yes", "no", "not sure")


@dataclass(frozen=True, slots=True)
class Failure:
    node: str
    reason: str


@dataclass(frozen=True, slots=True)
class Dropped:
    """A condition of an answer that was not stored, and why."""

    node: str
    reason: str


def _conditions(
    value: Any,
    node: str,
    tree: RegulationTree | None,
    kinds: Mapping[str, ConditionKind],
    dropped: list[str],
) -> tuple[Condition, ...]:
    """The answer's conditions that fit the vocabulary and the text; each other one's reason is
    added to ``dropped``.

    Raises:
        ValueError: ``conditions`` is not a list (the answer does not follow the schema).
    """
    if value in (None, "", "none"):
        return ()
    if not isinstance(value, list):
        raise ValueError("conditions must be a list of {kind, mode, quote[, group]}")
    out: list[Condition] = []
    for index, raw in enumerate(value):
        if tree is None:
            dropped.append(f"conditions[{index}]: no regulation text to check its words against")
            continue
        if not isinstance(raw, dict):
            dropped.append(f"conditions[{index}]: not an object")
            continue
        raw = {k: raw[k] for k in ("kind", "mode", "quote", "group") if k in raw}
        found: Condition | None = None
        problem = ""
        for where in _quotable(tree, node):  # its own text, then its ancestors' in the section
            try:
                found = read_condition({**raw, "node": where}, node, tree, kinds)
                break
            except CatalogueError as exc:
                problem = problem or str(exc)
                if "are not in" not in str(exc):
                    break  # a kind or mode at fault: no other text will mend it
        if found is None:
            dropped.append(f"conditions[{index}]: {problem}")
        elif found not in out:
            out.append(found)
    return tuple(out)


def _quotable(tree: RegulationTree, node: str) -> list[str]:
    """The paragraphs whose words a condition of ``node`` may quote: its own, then its
    ancestors' up to its section."""
    if node not in tree:
        return [node]
    path = [n.id for n in tree.path(node) if n.kind == "paragraph"]
    return list(reversed(path)) or [node]


def _phrases(value: Any, field: str) -> tuple[str, ...]:
    if value in (None, "", "none"):
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{field} must be a list of strings")
    return tuple(v.strip() for v in value if v.strip() and v.strip().lower() != "none")


def norm_from_answer(
    node: str,
    data: dict[str, Any],
    model: str,
    cited: Sequence[str],
    *,
    tree: RegulationTree | None = None,
    kinds: Mapping[str, ConditionKind] | None = None,
    dropped: list[str] | None = None,
) -> Norm:
    """Check an answer against the schema and turn it into a :class:`Norm`.

    Args:
        tree: the regulation text the answer's condition quotes are checked against (without
            it, every condition is dropped).
        kinds: the condition vocabulary (default: ``ontologies/condition_kinds.json``).
        dropped: collects why each condition that was not kept was dropped.

    Raises:
        ValueError: naming the field at fault.
    """
    kind = str(data.get("norm_type", "")).strip().lower()
    kind = PAPER_TYPES.get(kind, kind)
    if kind not in NORM_TYPES:
        raise ValueError(f"norm_type {data.get('norm_type')!r} is not one of {NORM_TYPES}")
    flags = {}
    for key in ("sender_is_subject", "recipient_is_subject"):
        value = str(data.get(key, "no")).strip().lower()
        if value not in YES_NO:
            raise ValueError(f"{key} {value!r} is not one of {YES_NO}")
        flags[key] = value
    references = data.get("references") or {}
    if not isinstance(references, dict):
        raise ValueError("references must be an object {cited id: support|exception}")
    refs = []
    for target, relation in references.items():
        relation = str(relation).strip().lower()
        if relation not in RELATIONS:
            raise ValueError(f"references[{target!r}] {relation!r} is not support or exception")
        if target in cited:
            refs.append((target, relation))
    for key in ("information_type", "purpose", "consent_form"):
        if key in data and not isinstance(data[key], str | type(None)):
            raise ValueError(f"{key} must be a string")
    conditions = _conditions(
        data.get("conditions"),
        node,
        tree,
        kinds if kinds is not None else load_kinds(),
        dropped if dropped is not None else [],
    )
    return Norm(
        node=node,
        norm_type=kind,
        sender=_phrases(data.get("sender"), "sender"),
        recipient=_phrases(data.get("recipient"), "recipient"),
        subject=_phrases(data.get("subject"), "subject"),
        information_type=str(data.get("information_type") or "").strip(),
        purpose=str(data.get("purpose") or "").strip(),
        consent_form=str(data.get("consent_form") or "none").strip() or "none",
        refs=tuple(refs),
        conditions=conditions,
        provenance=f"llm:{model}",
        version=PROMPT,
        sender_is_subject=flags["sender_is_subject"],
        recipient_is_subject=flags["recipient_is_subject"],
    )


class LLMAnnotator:
    """Annotate paragraphs with an LLM (see the module docstring)."""

    def __init__(
        self,
        client: LLMClient,
        tree: RegulationTree,
        refs_by_source: dict[str, list[Any]],
        resolve_roles: Callable[[Sequence[str]], tuple[str, ...]] | None = None,
    ) -> None:
        self.client = client
        self.tree = tree
        self.refs = refs_by_source
        self.resolve_roles = resolve_roles
        self.template = prompt_text(PROMPT)
        self.kinds = load_kinds()
        #: The conditions of the last :meth:`annotate`'s answers that were not kept, with why.
        self.dropped: list[Dropped] = []

    def messages(self, node: str) -> list[Message]:
        cited = self._cited(node)
        kinds = "\n".join(f"- {k.id}: {k.label}" for k in self.kinds.values())
        text = (
            self.template.replace("{node}", node)
            .replace("{citations}", ", ".join(cited) or "none")
            .replace("{kinds}", kinds)
            .replace("{specification}", self.tree.full_specification(node))
        )
        return [
            {"role": "system", "content": "You answer with one JSON object."},
            {"role": "user", "content": text},
        ]

    def _cited(self, node: str) -> list[str]:
        return list(dict.fromkeys(r.target for r in self.refs.get(node, []) if r.target))

    def annotate(
        self, nodes: Sequence[str], progress: Callable[[], None] | None = None
    ) -> tuple[list[Norm], list[Failure]]:
        self.dropped = []
        requests = [self.messages(node) for node in nodes]
        norms: list[Norm] = []
        failures: list[Failure] = []

        def done(_: Outcome) -> None:
            if progress is not None:
                progress()

        outcomes = self.client.map(requests, done)
        for node, request, outcome in zip(nodes, requests, outcomes, strict=True):
            result = self._read(node, request, outcome)
            if isinstance(result, Failure):
                failures.append(result)
            else:
                norms.append(result)
        return norms, failures

    def _read(self, node: str, request: list[Message], outcome: Outcome) -> Norm | Failure:
        if outcome.text is None:
            return Failure(node, outcome.error or "no answer")
        try:
            return self._norm(node, outcome.text)
        except ValueError as first:
            repair = [
                *request,
                {"role": "assistant", "content": outcome.text},
                {
                    "role": "user",
                    "content": f"That answer is not usable ({first}). Answer again "
                    "with only the JSON object described above.",
                },
            ]
            second = self.client.complete(repair)
            if second.text is None:
                return Failure(node, f"invalid answer ({first}); repair failed: {second.error}")
            try:
                return self._norm(node, second.text)
            except ValueError as again:
                return Failure(node, f"invalid JSON twice: {first}; then {again}")

    def _norm(self, node: str, text: str) -> Norm:
        data = parse_json_answer(text)
        dropped: list[str] = []
        norm = norm_from_answer(
            node,
            data,
            self.client.config.model,
            self._cited(node),
            tree=self.tree,
            kinds=self.kinds,
            dropped=dropped,
        )
        self.dropped += [Dropped(node, reason) for reason in dropped]
        if self.resolve_roles is not None:
            norm = replace(
                norm,
                sender_roles=self.resolve_roles(norm.sender),
                recipient_roles=self.resolve_roles(norm.recipient),
                subject_roles=self.resolve_roles(norm.subject),
            )
        return norm
