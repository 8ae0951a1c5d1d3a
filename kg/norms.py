"""Norms: each paragraph read as Contextual Integrity, by rules that need no LLM.

A :class:`Norm` is a paragraph's type (``permit``, ``prohibit``, ``definition``), the flow it
governs (sender, recipient and subject phrases and the roles they resolve to, the information
type and its attribute-graph type, the purpose, the consent form), whether sender or recipient
is the subject, the support / exception relation of each cross-reference leaving it, and where
the reading came from (``rules``, ``curated``, ``llm:<model>``, ``editor:<name>``) with its
version, and for a permitting or prohibiting paragraph of Subpart E the conditions it sets
(:class:`~privacy_checklist.kg.conditions.Condition`, each quoting the words that state it).

The rules annotator (``rules-2``) reads each sentence of a paragraph's own text for the
statements it makes (:mod:`.deontic`: the modal, its negation, the verb it governs and whether
it is a flow, "only", a document's content, a list's lead) and types the paragraph by them, its
heading's cues (``ontologies/norm_cues.json``) when it states nothing; a paragraph with no
reading of its own inherits its nearest ancestor's, as "(i) To the individual;" inherits "A
covered entity is permitted to use or disclose protected health information as follows:", and
an item of a lead that says what a document or a duty must hold ("The notice must contain:")
is that content. ``structure=False`` gives the first annotator (``rules-1``: the earliest cue
decides), kept to be measured beside it. The flow's sender, recipient and information are read
with the patterns of ``ontologies/norm_parts.json``. The curated readings of
``ontologies/norm_conditions.json`` (:mod:`.conditions`) are then laid over the rules' reading of
their paragraphs (:func:`apply_reading`). It also reads and writes the paper's JSON format.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from privacy_checklist.ingest.markers import kinds_of
from privacy_checklist.kg import deontic
from privacy_checklist.kg.citations import CrossRef
from privacy_checklist.kg.concepts import Resolver
from privacy_checklist.kg.conditions import (
    KINDS_FILE,
    MODES,
    CatalogueError,
    Condition,
    ConditionKind,
    Reading,
)
from privacy_checklist.kg.deontic import Switches
from privacy_checklist.kg.metrics import per_class
from privacy_checklist.kg.tree import RegulationTree
from privacy_checklist.ontologies import path as ontology_path

NORM_TYPES = ("permit", "prohibit", "definition")
PAPER_TYPES = {
    "positive_norm": "permit",
    "negative_norm": "prohibit",
    "general_definition": "definition",
}
TO_PAPER = {v: k for k, v in PAPER_TYPES.items()}
RULES_VERSION = "rules-2"
#: The provenance and version of a reading taken from ``ontologies/norm_conditions.json``.
CURATED = "curated"
CURATED_VERSION = "curated-1"
RELATIONS = ("support", "exception")
#: The fields of a :class:`Norm` that hold lists of phrases or roles.
LIST_FIELDS = ("sender", "sender_roles", "recipient", "recipient_roles", "subject", "subject_roles")


@dataclass(frozen=True, slots=True)
class Norm:
    """The Contextual Integrity reading of one paragraph."""

    node: str
    norm_type: str
    sender: tuple[str, ...] = ()
    sender_roles: tuple[str, ...] = ()
    recipient: tuple[str, ...] = ()
    recipient_roles: tuple[str, ...] = ()
    subject: tuple[str, ...] = ()
    subject_roles: tuple[str, ...] = ()
    information_type: str = ""
    information_class: str = ""
    purpose: str = ""
    consent_form: str = "none"
    sender_is_subject: str = "no"
    recipient_is_subject: str = "no"
    refs: tuple[tuple[str, str], ...] = ()
    conditions: tuple[Condition, ...] = ()
    provenance: str = "rules"
    version: str = RULES_VERSION

    def __post_init__(self) -> None:
        if self.norm_type not in NORM_TYPES:
            raise ValueError(f"norm_type {self.norm_type!r} is not one of {NORM_TYPES}")
        for _, relation in self.refs:
            if relation not in RELATIONS:
                raise ValueError(f"reference relation {relation!r} is not one of {RELATIONS}")

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key, value in data.items():
            if isinstance(value, tuple):
                data[key] = [list(v) if isinstance(v, tuple) else v for v in value]
        data["conditions"] = [c.to_json() for c in self.conditions]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Norm:
        """A norm from :meth:`to_json`; one written before norms had conditions has none."""
        values = dict(data)
        for key in LIST_FIELDS:
            values[key] = tuple(values.get(key) or ())
        values["refs"] = tuple(tuple(r) for r in values.get("refs") or ())
        values["conditions"] = tuple(Condition.from_json(c) for c in values.get("conditions") or ())
        return cls(**values)


def apply_reading(norm: Norm, reading: Reading) -> Norm:
    """``norm`` (the rules' reading of a paragraph) with the curated reading laid over it: the
    type, sender and recipient roles, HIPAA information type, purpose and conditions are the
    curated ones, and whether sender or recipient is the subject follows their roles. The
    phrases the rules found in the text stay."""
    return replace(
        norm,
        norm_type=reading.norm_type,
        sender_roles=reading.sender_roles,
        recipient_roles=reading.recipient_roles,
        information_class=reading.information,
        purpose=reading.purpose,
        conditions=reading.conditions,
        sender_is_subject="yes" if "individual" in reading.sender_roles else "no",
        recipient_is_subject="yes" if "individual" in reading.recipient_roles else "no",
        provenance=CURATED,
        version=CURATED_VERSION,
    )


def read_condition(
    raw: Any, node: str, tree: RegulationTree, kinds: Mapping[str, ConditionKind]
) -> Condition:
    """One condition of ``node``'s norm as an editor or an LLM gives it (``{kind, mode, quote[,
    group][, node]}``), checked as the curated ones are: a kind of ``condition_kinds.json``, a
    mode, a group for ``one_of``, and words found in the text of the paragraph it names (the
    norm's own by default; another must be of the same section). Its span is where the words
    are (the given ``span`` when it still points at them, else their first occurrence).

    Raises:
        CatalogueError: naming what is wrong.
    """
    if not isinstance(raw, Mapping):
        raise CatalogueError("a condition must be an object {kind, mode, quote[, group][, node]}")
    unknown = sorted(set(raw) - {"kind", "mode", "quote", "group", "node", "span"})
    if unknown:
        raise CatalogueError(
            f"unknown key {unknown[0]!r}; a condition has kind, mode, quote, group and node"
        )
    kind = str(raw.get("kind") or "").strip()
    if kind not in kinds:
        close = [k for k in kinds if kind and (kind in k or k in kind)]
        hint = f" (did you mean {', '.join(close[:3])}?)" if close else ""
        raise CatalogueError(f"kind {kind!r} is not in {KINDS_FILE}{hint}")
    mode = str(raw.get("mode") or "required").strip()
    if mode not in MODES:
        raise CatalogueError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    group = str(raw.get("group") or "").strip() if mode == "one_of" else ""
    if mode == "one_of" and not group:
        raise CatalogueError(f"a one_of condition ({kind}) needs a group")
    where = str(raw.get("node") or node).strip()
    unit = tree.get(where)
    if unit is None:
        raise CatalogueError(f"node {where!r} ({kind}) is not in the regulation tree")
    section = tree.section_of(where)
    own = tree.section_of(node) if node in tree else None
    if where != node and (section is None or own is None or section.id != own.id):
        raise CatalogueError(
            f"node {where!r} ({kind}) is not a paragraph of {node}'s section; quote its own "
            "section's text"
        )
    quote = str(raw.get("quote") or "")
    if not quote.strip():
        raise CatalogueError(f"condition {kind} quotes no words of {where}")
    span = raw.get("span")
    if (
        isinstance(span, list | tuple)
        and len(span) == 2
        and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in span)
        and unit.text[span[0] : span[1]] == quote
    ):
        start = int(span[0])
    else:
        start = unit.text.find(quote)
    if start < 0:
        raise CatalogueError(
            f"the words {_shorten(quote)!r} ({kind}) are not in {where}'s text; quote it exactly"
        )
    return Condition(kind, mode, quote, where, start, start + len(quote), group)


def _shorten(text: str, width: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def cues_path() -> Path:
    return ontology_path("norm_cues.json")


@dataclass
class Cues:
    """The compiled cue lists."""

    prohibit: list[re.Pattern[str]]
    permit: list[re.Pattern[str]]
    definition: list[re.Pattern[str]]
    permit_heading: list[re.Pattern[str]]
    prohibit_heading: list[re.Pattern[str]]
    consent_forms: list[tuple[str, re.Pattern[str]]]
    purposes: list[tuple[str, re.Pattern[str]]]

    @classmethod
    def load(cls, path: Path | None = None) -> Cues:
        data = json.loads((path or cues_path()).read_text(encoding="utf-8"))

        def compile_all(items: list[str]) -> list[re.Pattern[str]]:
            return [re.compile(p, re.I) for p in items]

        return cls(
            compile_all(data["prohibit"]),
            compile_all(data["permit"]),
            compile_all(data["definition"]),
            compile_all(data["permit_heading"]),
            compile_all(data["prohibit_heading"]),
            [(name, re.compile(p, re.I)) for name, p in data["consent_forms"]],
            [(name, re.compile(p, re.I)) for name, p in data["purposes"]],
        )

    def own_type(self, text: str, heading: str | None) -> str | None:
        """The type a paragraph's own words give it, or None when they give none."""
        found: list[tuple[int, int, str]] = []
        for rank, (kind, patterns) in enumerate(
            (("prohibit", self.prohibit), ("permit", self.permit), ("definition", self.definition))
        ):
            for pattern in patterns:
                m = pattern.search(text)
                if m:
                    found.append((m.start(), rank, kind))
        if found:
            return min(found)[2]
        return self.heading_type(heading)

    def heading_type(self, heading: str | None) -> str | None:
        """The type a paragraph's heading gives it ("Prohibited uses and disclosures"), or None."""
        heading = heading or ""
        if any(p.search(heading) for p in self.prohibit_heading):
            return "prohibit"
        if any(p.search(heading) for p in self.permit_heading):
            return "permit"
        return None


_EXCEPTIONS = re.compile(r"\bexcept(?:ions?)?\b[^.]*[:—]\s*$|^\s*exceptions?\b", re.I)


def parts_path() -> Path:
    return ontology_path("norm_parts.json")


_PARTS = json.loads(parts_path().read_text(encoding="utf-8"))
_ACTOR = re.compile(_PARTS["sender"], re.I)
_RECIPIENT = re.compile(_PARTS["recipient"], re.I)
_LEAD_TO = re.compile(_PARTS["recipient_lead"], re.I)
_INFO = re.compile("|".join(_PARTS["information"]), re.I)


class RulesAnnotator:
    """The default annotator: deontic cues, inheritance, and the graphs' resolvers."""

    name = "rules"

    def __init__(
        self,
        tree: RegulationTree,
        refs_by_source: Mapping[str, Sequence[CrossRef]] | None = None,
        role_resolver: Resolver | None = None,
        attribute_resolver: Resolver | None = None,
        cues: Cues | None = None,
        switches: Switches | None = None,
        *,
        structure: bool = True,
    ) -> None:
        self.tree = tree
        self.refs = refs_by_source or {}
        self.roles = role_resolver
        self.attributes = attribute_resolver
        self.cues = cues or Cues.load()
        #: read each paragraph's statements (:mod:`.deontic`); False: the earliest cue (rules-1)
        self.structure = structure
        self.switches = switches or Switches.load()
        self._types: dict[str, str | None] = {}
        self._readings: dict[str, deontic.Reading] = {}

    def reading(self, node_id: str) -> deontic.Reading:
        if node_id not in self._readings:
            self._readings[node_id] = deontic.read(self.tree[node_id].text)
        return self._readings[node_id]

    def own(self, node_id: str) -> str | None:
        if node_id not in self._types:
            node = self.tree[node_id]
            if node.label and not kinds_of(node.label):
                found: str | None = "definition"
            elif self.structure:
                found = self.reading(node_id).own_type(self.switches)
                if found is None:
                    found = self.cues.heading_type(node.title)
            else:
                found = self.cues.own_type(node.text, node.title)
            self._types[node_id] = found
        return self._types[node_id]

    def norm_type(self, node_id: str) -> str:
        if self.structure and self.switches.content and self._in_content(node_id):
            return "definition"  # an item of what a document or a duty must hold
        for node in reversed(self.tree.path(node_id)):
            if node.kind != "paragraph":
                break  # a section's title is too broad to type its paragraphs
            found = self.own(node.id)
            if found is not None:
                if (
                    found == "prohibit"
                    and node.id != node_id
                    and _EXCEPTIONS.search(f"{node.title or ''} {node.text}")
                ):
                    return "permit"  # the listed exceptions to a prohibition are permissions
                return found
        return "definition"

    def _in_content(self, node_id: str) -> bool:
        """Whether a list lead above a paragraph says what a document or a duty must hold
        (:func:`.deontic.content_lead`)."""
        for node in reversed(self.tree.path(node_id)[:-1]):
            if node.kind != "paragraph":
                break
            lead = self.reading(node.id).lead
            if lead and deontic.content_lead(lead):
                return True
        return False

    def annotate(self, node_id: str) -> Norm:
        path = [n for n in self.tree.path(node_id) if n.kind in ("section", "paragraph")]
        texts = [n.text for n in reversed(path)]  # own text first, then ancestors
        kind = self.norm_type(node_id)
        sender = self._first(texts, self._actor)
        recipient = self._first(texts[:1], self._recipient) or self._first(
            texts[1:], self._recipient
        )
        information = self._first(
            texts, lambda t: [m.group(0).lower() for m in _INFO.finditer(t)][:1]
        )
        subject = ["individual"] if information and "health information" in information[0] else []
        purpose = self._first(
            texts, lambda t: [n for n, p in self.cues.purposes if p.search(t)][:1]
        )
        consent = self._first(
            texts[:2], lambda t: [n for n, p in self.cues.consent_forms if p.search(t)][:1]
        )
        text = self.tree[node_id].text
        relations = tuple(
            (r.target, self._relation(text, r.start))
            for r in self.refs.get(node_id, [])
            if not r.external and r.target is not None
        )
        sender_roles = self._roles(sender)
        recipient_roles = self._roles(recipient)
        return Norm(
            node=node_id,
            norm_type=kind,
            sender=tuple(sender),
            sender_roles=sender_roles,
            recipient=tuple(recipient),
            recipient_roles=recipient_roles,
            subject=tuple(subject),
            subject_roles=self._roles(subject),
            information_type=information[0] if information else "",
            information_class=self._info_class(information[0]) if information else "",
            purpose=purpose[0] if purpose else "",
            consent_form=consent[0] if consent else "none",
            sender_is_subject="yes" if "individual" in sender_roles else "no",
            recipient_is_subject="yes" if "individual" in recipient_roles else "no",
            refs=tuple(dict.fromkeys(relations)),
        )

    # helpers --------------------------------------------------------------------------------
    @staticmethod
    def _first(texts: Iterable[str], find: Callable[[str], list[str]]) -> list[str]:
        for text in texts:
            found = find(text)
            if found:
                return found
        return []

    @staticmethod
    def _clean(phrase: str) -> str:
        phrase = re.sub(r"^(?:a|an|the|any|such|other)\s+", "", phrase.strip(), flags=re.I)
        return re.sub(r"\s+", " ", phrase).strip(" ,;:").lower()

    def _actor(self, text: str) -> list[str]:
        out = []
        for m in _ACTOR.finditer(text):
            parts = re.split(r"\s+(?:or|and)\s+", m.group("actor"))
            out += [self._clean(p) for p in parts if self._clean(p)]
            break
        return out

    def _recipient(self, text: str) -> list[str]:
        m = _LEAD_TO.match(text) or _RECIPIENT.search(text)
        if not m:
            return []
        parts = re.split(r",\s*(?:or\s+)?|\s+or\s+", m.group("who"))
        return [self._clean(p) for p in parts if self._clean(p)][:4]

    def _roles(self, phrases: Iterable[str]) -> tuple[str, ...]:
        if self.roles is None:
            return ()
        out: list[str] = []
        for phrase in phrases:
            found = self.roles.resolve(phrase, 1)
            if found and found[0].target not in out:
                out.append(found[0].target)
        return tuple(out)

    def _info_class(self, phrase: str) -> str:
        if self.attributes is None:
            return ""
        found = self.attributes.resolve(phrase, 1)
        return found[0].target if found and found[0].reached else ""

    @staticmethod
    def _relation(text: str, start: int) -> str:
        """ "except as provided in § X", "other than", "unless" before a citation: exception."""
        before = text[max(0, start - 60) : start].lower()
        return (
            "exception"
            if re.search(r"\b(?:except|other than|unless|notwithstanding|excluding)\b", before)
            else "support"
        )


def annotatable(tree: RegulationTree, only: str | None = None) -> list[str]:
    """Paragraphs with text of their own in Parts 160 and 164 (or under ``only``)."""
    out = []
    for node in tree:
        if node.kind != "paragraph" or not node.text.strip():
            continue
        if only is not None:
            if not tree.is_ancestor(only, node.id):
                continue
        elif not (node.id.startswith("160.") or node.id.startswith("164.")):
            continue
        out.append(node.id)
    return out


# --------------------------------------------------------------------------- the paper's format


def read_paper_file(path: Path) -> dict[str, dict[str, Any]]:
    """The paper's annotation JSON (``{node id: {norm_type, sender, ...}}``)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable JSON file ({exc})") from exc
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{path}: expected an object keyed by paragraph id")
    for key, value in data.items():
        if not isinstance(value, dict) or value.get("norm_type") not in PAPER_TYPES:
            raise ValueError(f"{path}: entry {key!r} has no norm_type among {sorted(PAPER_TYPES)}")
    return data


#: The paper's export lemmatised its phrases ("cover entity"); undo the common cases.
_DELEMMA = {
    "cover": "covered",
    "protect": "protected",
    "identify": "identified",
    "individual s": "individuals",
    "be": "",
    "use": "used",
    "disclose": "disclosed",
}


def _unlemma(phrase: str) -> str:
    words = [_DELEMMA.get(w, w) for w in str(phrase).lower().split()]
    return " ".join(w for w in words if w)


def evaluate_against(
    norms: dict[str, Norm],
    gold: dict[str, dict[str, Any]],
    role_resolver: Any = None,
    attribute_resolver: Any = None,
) -> dict[str, Any]:
    """Agreement of our norms with a gold file: norm type, and parties and information type
    compared on resolved graph nodes (not on strings)."""
    confusion: dict[str, Counter[str]] = {t: Counter() for t in NORM_TYPES}
    fields = {"sender": [0, 0], "recipient": [0, 0], "subject": [0, 0], "information_type": [0, 0]}
    missing = []
    compact = {re.sub(r"[\s()]", "", k).lower(): k for k in norms}
    for node_id, entry in gold.items():
        norm = norms.get(node_id) or norms.get(
            compact.get(re.sub(r"[\s()]", "", node_id).lower(), "")
        )
        if norm is None:
            missing.append(node_id)
            continue
        expected = PAPER_TYPES[entry["norm_type"]]
        confusion[expected][norm.norm_type] += 1
        if role_resolver is not None:
            for key, ours in (
                ("sender", norm.sender_roles),
                ("recipient", norm.recipient_roles),
                ("subject", norm.subject_roles),
            ):
                theirs = _resolve_roles(role_resolver, entry.get(key) or [])
                fields[key][0] += 1
                fields[key][1] += _agree(set(ours), theirs)
        if attribute_resolver is not None:
            theirs_info = _resolve_info(attribute_resolver, entry.get("information_type") or "")
            ours_info = {norm.information_class} if norm.information_class else set()
            fields["information_type"][0] += 1
            fields["information_type"][1] += _agree(ours_info, theirs_info)
    figures = per_class(confusion, NORM_TYPES)
    return {
        "n": figures["n"],
        "missing": missing,
        "norm_type_accuracy": figures["accuracy"],
        "norm_type_macro_f1": figures["macro_f1"],
        "per_type": figures["per_class"],
        "confusion": {t: {p: confusion[t][p] for p in NORM_TYPES} for t in NORM_TYPES},
        "agreement": {k: round(v[1] / v[0], 4) if v[0] else None for k, v in fields.items()},
    }


def _agree(ours: set[str], theirs: set[str]) -> int:
    return int((not ours and not theirs) or bool(ours & theirs))


def _resolve_roles(resolver: Any, phrases: Iterable[str]) -> set[str]:
    out = set()
    for phrase in phrases:
        if str(phrase).strip().lower() in ("none", "", "n/a"):
            continue
        found = resolver.resolve(_unlemma(phrase), 1)
        if found:
            out.add(found[0].target)
    return out


def _resolve_info(resolver: Any, phrase: str) -> set[str]:
    if str(phrase).strip().lower() in ("none", ""):
        return set()
    found = resolver.resolve(_unlemma(phrase), 1)
    return {found[0].target} if found and found[0].reached else set()


def to_paper(norm: Norm, tree: RegulationTree) -> dict[str, Any]:
    """A norm in the paper's format, with our provenance fields added."""
    return {"text": tree.full_specification(norm.node), **paper_fields(norm)}


def paper_fields(norm: Norm) -> dict[str, Any]:
    """A norm's fields in the paper's format (:func:`to_paper` without the paragraph's text)."""
    return {
        "node_index": norm.node,
        "refer_list": {target: relation for target, relation in norm.refs},
        "norm_type": TO_PAPER[norm.norm_type],
        "sender": list(norm.sender) or ["none"],
        "sender_role": ", ".join(norm.sender_roles) or "none",
        "recipient": list(norm.recipient) or ["none"],
        "recipient_role": ", ".join(norm.recipient_roles) or "none",
        "subject": list(norm.subject) or ["none"],
        "subject_role": ", ".join(norm.subject_roles) or "none",
        "information_type": norm.information_type or "none",
        "consent_form": norm.consent_form,
        "purpose": norm.purpose or "none",
        "sender_is_subject": norm.sender_is_subject,
        "recipient_is_subject": norm.recipient_is_subject,
        "conditions": [c.to_json() for c in norm.conditions],
        "provenance": norm.provenance,
        "version": norm.version,
    }
