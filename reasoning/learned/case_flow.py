"""The learned case-flow reader: the flow a narrative turns on — who discloses it (the
sender's regulatory role), to whom (the recipient's), and what (the information's HIPAA type) —
read from the whole narrative.

A narrative, short or court-length, is the mean and the maximum of its sentences' vectors (the
same vectors the learned condition reader computes, so a check encodes each sentence once) and
the roles the rule reader read for the senders and recipients of its flows (which it weighs as
any other evidence); three logistic regressions fitted on the labelled corpus's deciding flows
(written by many independent writers) give the likeliest sender role, recipient role and
information type. The checklist decides that flow with the conditions the condition reader
reads (:mod:`~privacy_checklist.reasoning.learned.conditions`): the law stays in the checklist;
this module only reads who, to whom and what.

Shipped as ``reasoning/data/case_flow.npz`` (numpy only at check time); it records the
encoder graph's digest and is refused with one line when it does not fit. Train it again with
``pcheck reasoner train --method case-flow`` (the ``train`` extra: scikit-learn).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from privacy_checklist.reasoning.reading.types import Fact, Flow, Part
from privacy_checklist.reasoning.text import data_path

MODEL_NAME = "case_flow.npz"
#: the parts read, each a head of the model
HEADS = ("sender", "recipient", "information")
#: the vectors are scaled before the regressions (unit vectors are too small for their default
#: regularisation)
SCALE = 5.0
#: roles through which a sender acts as a covered party (and their descendants in the role graph)
COVERED = frozenset({"covered entity", "business associate", "workforce"})
#: information types that are not protected health information
NOT_PHI = frozenset({"employment records", "education records", "not health information"})
#: a role label that names no HIPAA role
NO_ROLE = frozenset({"no HIPAA role", "none", ""})
PHI = "protected health information"


class CaseFlowModelError(RuntimeError):
    """The case-flow reader's model is missing or does not fit the encoder."""


@dataclass(frozen=True)
class CaseFlow:
    """The case's flow as read: each part's label and its probability."""

    sender: tuple[str, float]
    recipient: tuple[str, float]
    information: tuple[str, float]

    def summary(self) -> str:
        return (
            f"the case's flow as the learned reader reads it: {self.sender[0]} "
            f"({self.sender[1]:.2f}) gives {self.information[0]} ({self.information[1]:.2f}) "
            f"to {self.recipient[0]} ({self.recipient[1]:.2f})"
        )


def features(
    vectors: npt.NDArray[np.float32], flows: Sequence[Flow] = (), roles: Sequence[str] = ()
) -> npt.NDArray[np.float32]:
    """A narrative's features from its sentences' vectors: their mean and maximum, scaled;
    with ``roles`` (the model's vocabulary), which of them the rule reader read for a sender
    and for a recipient of any of its ``flows`` (:func:`rule_roles`)."""
    if len(vectors) == 0:
        raise ValueError("a narrative with no sentence has no features")
    pooled = np.concatenate([vectors.mean(axis=0), vectors.max(axis=0)]) * SCALE
    if not roles:
        return pooled.astype(np.float32)
    return np.concatenate([pooled, rule_roles(flows, roles)]).astype(np.float32)


def rule_roles(flows: Sequence[Flow], roles: Sequence[str]) -> npt.NDArray[np.float32]:
    """Which of ``roles`` the rule reader read for a sender of any flow, then for a recipient
    (one and zero): what the regressions weigh beside the sentences' vectors."""
    at = {role: i for i, role in enumerate(roles)}
    read = np.zeros(2 * len(roles), dtype=np.float32)
    for flow in flows:
        for offset, found in ((0, flow.sender_roles), (len(roles), flow.recipient_roles)):
            for role in found:
                if role in at:
                    read[offset + at[role]] = 1.0
    return read


class CaseFlowReader:
    """The shipped case-flow reader (see the module docstring).

    Raises:
        CaseFlowModelError: the model is missing, or was fitted on another encoder graph than
            ``graph`` (when given).
    """

    def __init__(self, path: Path | None = None, graph: str | None = None) -> None:
        path = path or data_path(MODEL_NAME)
        if not path.exists():
            raise CaseFlowModelError(
                f"{path.name}: the learned case-flow reader is missing; train it with "
                "pcheck reasoner train --method case-flow"
            )
        with np.load(path, allow_pickle=False) as saved:
            self._take({name: saved[name] for name in saved.files})
        if graph is not None and self.meta.get("graph") != graph:
            raise CaseFlowModelError(
                f"{path.name}: fitted on another encoder graph ({self.meta.get('graph')}, not "
                f"{graph}); train it again with pcheck reasoner train --method case-flow"
            )

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, Any]) -> CaseFlowReader:
        """A reader of arrays as :func:`fit` returns them (not written to a file)."""
        reader = cls.__new__(cls)
        reader._take({"meta": np.asarray("{}"), **arrays})
        return reader

    def _take(self, arrays: Mapping[str, Any]) -> None:
        self.meta: dict[str, Any] = json.loads(str(arrays["meta"]))
        self.heads = {
            head: (
                np.asarray(arrays[f"{head}_coef"], dtype=np.float32),
                np.asarray(arrays[f"{head}_intercept"], dtype=np.float32),
                [str(c) for c in arrays[f"{head}_classes"]],
            )
            for head in HEADS
        }
        #: the roles whose reading by the rule reader the regressions weigh (none: vectors only)
        self.roles: list[str] = [str(r) for r in arrays["roles"]] if "roles" in arrays else []

    def read(self, vectors: npt.NDArray[np.float32], flows: Sequence[Flow] = ()) -> CaseFlow:
        """The case's flow from its sentences' vectors and the rule reader's ``flows``."""
        return self.read_features(features(vectors, flows, self.roles))

    def read_features(self, x: npt.NDArray[np.float32]) -> CaseFlow:
        """The case's flow from a narrative's features (:func:`features`)."""
        said: dict[str, tuple[str, float]] = {}
        for head, (coef, intercept, classes) in self.heads.items():
            logits = coef @ x + intercept
            if logits.shape[0] == 1:  # a two-class head keeps one row
                logits = np.array([-logits[0], logits[0]], dtype=np.float32)
            p = np.exp(logits - logits.max())
            p /= p.sum()
            best = int(p.argmax())
            said[head] = (classes[best], float(p[best]))
        return CaseFlow(said["sender"], said["recipient"], said["information"])


def case_flow(
    read: CaseFlow,
    facts: Mapping[str, Fact],
    ancestors: Callable[[str], frozenset[str]],
    role_rules: Sequence[Any] = (),
) -> Flow:
    """The checklist's flow for the case's flow as read, with ``facts`` (the conditions read);
    the sender's coverage and the information's type are stated from the roles and type read,
    so the checklist's applicability question is answered by the same reading; and what the
    parties' roles state, as the rule reader states it of its flows (``role_rules``: the
    ``role_facts`` of ``fact_cues.json``, e.g. a flow to a public health authority is to one;
    a flow to the individual is to the individual)."""
    sender, recipient, information = read.sender[0], read.recipient[0], read.information[0]
    sender_roles = ancestors(sender) if sender not in NO_ROLE else frozenset()
    recipient_roles = ancestors(recipient) if recipient not in NO_ROLE else frozenset()
    out = dict(facts)
    how = f"read from the whole narrative by the learned case-flow reader ({read.sender[1]:.2f})"
    out.update(_role_facts(sender_roles, recipient_roles, out, role_rules, recipient))
    out["sender_covered"] = Fact(
        "sender_covered", bool(sender_roles & COVERED), -1, -1, f"{sender}, {how}", "learned"
    )
    types: frozenset[str] = frozenset()
    if information in NOT_PHI:
        out["information_is_phi"] = Fact(
            "information_is_phi", False, -1, -1, f"{information}, {how}", "learned"
        )
    elif information == "de-identified information":
        out.setdefault(
            "de_identified", Fact("de_identified", True, -1, -1, f"{information}, {how}", "learned")
        )
        types = frozenset({PHI, information})
    elif information not in NO_ROLE:
        types = frozenset({PHI, information})

    def part(name: str, said: tuple[str, float]) -> Part:
        return Part(
            text=f"{name} read as {said[0]} ({said[1]:.2f})", start=-1, end=-1, resolved=said[0]
        )

    return Flow(
        sender=part("sender", read.sender),
        recipient=part("recipient", read.recipient),
        information=part("information", read.information),
        sender_roles=sender_roles,
        recipient_roles=recipient_roles,
        information_types=types,
        facts=out,
        summary=read.summary(),
        turns_on=True,
    )


def rule_facts(flows: Sequence[Flow]) -> dict[str, Fact]:
    """Every fact the rule reader read of any of its ``flows`` (the first flow's where two say
    something of one kind), but those it derived from the flows' roles: what the case flow
    decides with beneath the learned conditions, since the rule reader may have read a
    condition of the case on a flow other than the one the case turns on."""
    out: dict[str, Fact] = {}
    for flow in flows:
        for kind, fact in flow.facts.items():
            if fact.value is not None and fact.source not in ("role", "learned"):
                out.setdefault(kind, fact)
    return out


def _role_facts(
    sender_roles: frozenset[str],
    recipient_roles: frozenset[str],
    facts: Mapping[str, Fact],
    rules: Sequence[Any],
    recipient: str,
) -> dict[str, Fact]:
    """What the roles read state (the rule reader's ``_role_facts``, on roles read from the
    whole narrative): nothing the facts already state either way is changed."""
    why = f"the recipient read as {recipient} by the learned case-flow reader"
    if "individual" in recipient_roles or "personal representative" in recipient_roles:
        if facts.get("to_the_individual") is None:
            return {"to_the_individual": Fact("to_the_individual", True, -1, -1, why, "role")}
        return {}
    out: dict[str, Fact] = {}
    for rule in rules:
        if rule.recipient not in recipient_roles or rule.key in facts or rule.key in out:
            continue
        if rule.sender and rule.sender not in sender_roles:
            continue
        if any((f := facts.get(kind)) is not None and f.value is not None for kind in rule.unless):
            continue
        out[rule.key] = Fact(
            rule.key, True, -1, -1, f"{why} ({rule.why or rule.recipient})", "role"
        )
    return out


def with_rule_roles(flow: Flow, rule: Flow, parts: Sequence[str] = ("sender", "recipient")) -> Flow:
    """The case flow with the rule reader's roles for ``parts`` where the rule reader read a
    role from the case's words (its flow ``rule``), the learned reading where it read none."""
    changed: dict[str, Any] = {}
    facts = dict(flow.facts)
    if "sender" in parts and rule.sender_roles:
        changed["sender_roles"] = rule.sender_roles
        changed["sender"] = rule.sender
        covered = bool(rule.sender_roles & COVERED)
        facts["sender_covered"] = Fact(
            "sender_covered", covered, -1, -1, "the sender's role, read by the rule reader", "role"
        )
    if "recipient" in parts and rule.recipient_roles:
        changed["recipient_roles"] = rule.recipient_roles
        changed["recipient"] = rule.recipient
    return replace(flow, facts=facts, **changed) if changed else flow


@lru_cache(maxsize=1)
def shipped(graph: str | None = None) -> CaseFlowReader:
    """The shipped reader, loaded once a process.

    Raises:
        CaseFlowModelError: it is missing or does not fit.
    """
    return CaseFlowReader(graph=graph)


def digest() -> str:
    """The shipped model's digest, "none" when it is missing: what an evaluation's reuse rule
    compares."""
    import hashlib

    path = data_path(MODEL_NAME)
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.exists() else "none"


def fit(
    x: npt.NDArray[np.float32],
    labels: Mapping[str, Sequence[str]],
    roles: Sequence[str] = (),
    c: float = 1.0,
) -> dict[str, Any]:
    """The three regressions fitted on narratives' features ``x`` (:func:`features`, with the
    role vocabulary ``roles``) and their deciding flows' labels (each head's), as the arrays
    :func:`save` writes."""
    from sklearn.linear_model import LogisticRegression

    arrays: dict[str, Any] = {"roles": np.asarray(list(roles), dtype=str)}
    for head in HEADS:
        model = LogisticRegression(max_iter=2000, C=c).fit(x, np.asarray(labels[head]))
        arrays[f"{head}_coef"] = model.coef_.astype(np.float32)
        arrays[f"{head}_intercept"] = model.intercept_.astype(np.float32)
        arrays[f"{head}_classes"] = np.asarray(model.classes_, dtype=str)
    return arrays


def save(path: Path, arrays: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
    """Write the model (whole or not at all)."""
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, meta=np.asarray(json.dumps(dict(meta))), **arrays)
    tmp.replace(path)
