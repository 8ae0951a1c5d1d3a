"""The curated norm conditions (ontologies/norm_conditions.json) against the shipped knowledge base.

The checklist reasoner will decide a flow from these entries alone, so each one must point at a
real paragraph, quote that paragraph's own words exactly (a quote that drifted from the text would
make the reasoner cite words the regulation does not say), and use only the vocabulary the rest of
the engine knows: condition kinds of ontologies/condition_kinds.json, role names of the role graph
and HIPAA information types of the attribute graph.
"""

from __future__ import annotations

import json
import string
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from privacy_checklist.kg import kb as kbmod
from tests.conftest import REPO

NORMS_FILE = REPO / "ontologies" / "norm_conditions.json"
KINDS_FILE = REPO / "ontologies" / "condition_kinds.json"
ROLES_FILE = REPO / "ontologies" / "roles.json"

NORM_TYPES = {"permit", "prohibit"}
MODES = {"required", "one_of", "exception"}
COVERED_SECTIONS = ("164.502", "164.506", "164.508", "164.510", "164.512", "164.514", "164.524")
MAX_QUOTE_WORDS = 30


def _read(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


NORMS: list[dict[str, Any]] = _read(NORMS_FILE)["norms"]
KINDS: dict[str, dict[str, str]] = _read(KINDS_FILE)["kinds"]


def _id(entry: dict[str, Any]) -> str:
    return entry["node"]


def _section(node_id: str) -> str:
    return node_id.split("(", 1)[0]


def _all_conditions(entry: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(node whose own text the quote comes from, condition) for both condition lists."""
    own = [(entry["node"], c) for c in entry["conditions"]]
    further = [(c["node"], c) for c in entry.get("further_conditions", [])]
    return own + further


@pytest.fixture(scope="module")
def kb() -> kbmod.KnowledgeBase:
    return kbmod.load(None)


@pytest.fixture(scope="module")
def role_names(kb: kbmod.KnowledgeBase) -> set[str]:
    """Regulatory role names: seeded in ontologies/roles.json and present in the built graph."""
    seeds = {role["name"] for role in _read(ROLES_FILE)["roles"]}
    built = {c.name for c in kb.roles.nodes.values() if c.kind in ("regulatory", "program")}
    return seeds & built


@pytest.fixture(scope="module")
def hipaa_types(kb: kbmod.KnowledgeBase) -> set[str]:
    return {c.name for c in kb.attributes.nodes.values() if c.kind == "hipaa"}


def test_every_node_exists(kb: kbmod.KnowledgeBase) -> None:
    missing = [entry["node"] for entry in NORMS if entry["node"] not in kb.tree]
    missing += [
        f"{entry['node']}: further condition node {condition['node']}"
        for entry in NORMS
        for condition in entry.get("further_conditions", [])
        if condition["node"] not in kb.tree
    ]
    assert not missing, "nodes not in the knowledge base tree:\n" + "\n".join(missing)


def test_every_quote_is_own_text(kb: kbmod.KnowledgeBase) -> None:
    """All failures at once, each naming the entry, the node quoted and the quote."""
    failures = []
    for entry in NORMS:
        for node, condition in _all_conditions(entry):
            quote = condition["quote"]
            if node not in kb.tree:
                continue  # reported by test_every_node_exists
            if quote not in kb.tree[node].text:
                failures.append(f"{entry['node']} -> {node}: {quote!r}")
    assert not failures, "quotes that are not in the node's own text:\n" + "\n".join(failures)


def test_quotes_are_short_and_whole_words(kb: kbmod.KnowledgeBase) -> None:
    """A quote is a phrase of the text, not a fragment of a word or a whole paragraph."""
    failures = []
    for entry in NORMS:
        for node, condition in _all_conditions(entry):
            quote = condition["quote"]
            words = quote.split()
            if not words or len(words) > MAX_QUOTE_WORDS or quote != quote.strip():
                failures.append(f"{entry['node']} -> {node}: {len(words)} words: {quote!r}")
                continue
            text = kb.tree[node].text if node in kb.tree else ""
            at = text.find(quote)
            if at < 0:
                continue  # reported by test_every_quote_is_own_text
            before = text[at - 1] if at > 0 else " "
            after = text[at + len(quote)] if at + len(quote) < len(text) else " "
            if before.isalnum() or after.isalnum():
                failures.append(f"{entry['node']} -> {node}: cuts a word: {quote!r}")
    assert not failures, "\n".join(failures)


def test_nodes_are_unique() -> None:
    counts = Counter(entry["node"] for entry in NORMS)
    assert not [n for n, c in counts.items() if c > 1], counts.most_common(3)


@pytest.mark.parametrize("entry", NORMS, ids=_id)
def test_entry_vocabulary(
    entry: dict[str, Any], role_names: set[str], hipaa_types: set[str]
) -> None:
    assert entry["norm_type"] in NORM_TYPES
    for field in ("summary", "purpose"):
        assert isinstance(entry[field], str) and entry[field].strip(), field
    for field in ("sender_roles", "recipient_roles"):
        roles = entry[field]
        assert roles, f"{field} is empty"
        unknown = [r for r in roles if r != "any" and r not in role_names]
        assert not unknown, f"{field}: not role-graph names: {unknown}"
    assert entry["information"] in hipaa_types, entry["information"]
    assert entry["conditions"], "a norm needs at least one condition of its own text"
    if "note" in entry:
        assert isinstance(entry["note"], str) and entry["note"].strip()


@pytest.mark.parametrize("entry", NORMS, ids=_id)
def test_entry_conditions(entry: dict[str, Any]) -> None:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for node, condition in _all_conditions(entry):
        assert condition["kind"] in KINDS, f"unknown kind {condition['kind']!r}"
        assert condition["mode"] in MODES, condition["mode"]
        if condition["mode"] == "one_of":
            assert condition.get("group"), f"one_of condition without a group: {condition}"
            groups[condition["group"]].append(condition)
        else:
            assert "group" not in condition, f"group on a {condition['mode']} condition"
        if node != entry["node"]:
            # further conditions come from another paragraph of the same section
            assert _section(node) == _section(entry["node"]), node
    for name, members in groups.items():
        if len(members) < 2:
            assert all(m.get("why") for m in members), f"group {name!r} has one member, no 'why'"


@pytest.mark.parametrize("entry", NORMS, ids=_id)
def test_own_conditions_quote_the_entry_node(entry: dict[str, Any]) -> None:
    """'conditions' quote the entry's node; only 'further_conditions' name another paragraph."""
    assert all("node" not in c for c in entry["conditions"])
    for condition in entry.get("further_conditions", []):
        assert condition["node"] != entry["node"], "quote it under 'conditions'"


def test_kinds_are_questions_and_all_used() -> None:
    for kind_id, kind in KINDS.items():
        assert set(kind) >= {"label", "question", "cues_hint"}, kind_id
        assert kind["question"].rstrip().endswith("?"), kind_id
        assert set(kind_id) <= set(string.ascii_lowercase + "_"), kind_id
    used = {c["kind"] for entry in NORMS for _, c in _all_conditions(entry)}
    assert not set(KINDS) - used, f"kinds no norm uses: {sorted(set(KINDS) - used)}"


def test_coverage_of_subpart_e() -> None:
    sections = Counter(_section(entry["node"]) for entry in NORMS)
    assert not [s for s in COVERED_SECTIONS if not sections[s]], sections
    letters = [f"164.512({letter})" for letter in "abcdefghijkl"]
    uncovered = [p for p in letters if not any(e["node"].startswith(p) for e in NORMS)]
    assert not uncovered, f"164.512 paragraphs without an entry: {uncovered}"
    types = Counter(entry["norm_type"] for entry in NORMS)
    assert types["permit"] and types["prohibit"], types
