"""A paragraph's deontic structure: the statements its sentences make, read clause by clause.

The first rules annotator typed a paragraph by the earliest deontic cue in its words. This reader
reads each sentence for what the law's grammar makes of it instead:

- the statements: a modal ("may", "must", "shall", "is permitted to", "is required to") with its
  negation ("may not", "No ... may", an item that opens with "Not"), the verb it governs (a flow
  verb — use, disclose, sell, provide ... — or another act: require, condition, deny ...), and
  whether "only" restricts it ("may disclose ... only if", "may disclose only");
- what is not the paragraph's own statement: a modal inside a clause that describes a document's
  content ("a statement that the covered entity may not condition ...") or inside a relative
  clause ("the uses that may be made");
- the sentence that opens a list ("Such purposes include:", "must contain the following:"):
  it gives its items their reading, it is not a definition of its own;
- definitions ("X means ...", "For purposes of this section, ...").

A paragraph's own type is the strongest of its statements (a prohibition over a permission over
a requirement), not the earliest; its items read through the lead that opens their list
(:func:`content_lead`). Where the regulation's wording leaves a reading to convention, a switch in
``ontologies/norm_structure.json`` says which one ships; ``pcheck annotate-eval --gold FILE
--loso`` chooses each switch on five of the six dev sections and measures the sixth.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from privacy_checklist.ontologies import path as ontology_path

#: Verbs whose object is information flowing (the norms' flows).
FLOW_VERBS = frozenset(
    {
        "use",
        "disclose",
        "sell",
        "request",
        "receive",
        "obtain",
        "share",
        "release",
        "redisclose",
        "re-disclose",
        "provide",
        "transmit",
        "send",
        "report",
        "give",
        "furnish",
        "inform",
        "notify",
        "contact",
    }
)
_PARTICIPLES = frozenset(
    {"used", "disclosed", "made", "sold", "released", "provided", "shared", "transmitted", "sent"}
)
# words between a modal and its verb that do not change the statement
_SKIP = frozenset(
    {
        "also",
        "further",
        "otherwise",
        "directly",
        "then",
        "only",
        "not",
        "be",
        "reasonably",
        "promptly",
        "still",
        "instead",
    }
)
_MODAL = re.compile(
    r"\b(?P<modal>may|must|shall|will)\b(?P<neg>\s+not\b)?"
    r"|\b(?:is|are)\s+(?P<pneg>not\s+)?(?P<perm>permitted|required|prohibited)\s+(?:to|from)\b",
    re.I,
)
_WORD = re.compile(r"[A-Za-z][A-Za-z-]*")
_SENTENCES = re.compile(r"(?<=[.;:])\s+(?=[(A-Z“\"])")
# a clause describing what a document says: its modals are the document's, not the paragraph's
_CONTENT = re.compile(
    r"\b(?:a |the )?statement(?:s)?\b[^.;]{0,60}?\b(?:that|of|informing)\b"
    r"|\bdescription\b[^.;]{0,40}?\bof\b|\bnotice (?:that|of)\b|\bstating that\b"
    r"|\brequires? (?:the \w+ )?to\b|\bprohibits? the parties\b",
    re.I,
)
#: what the law calls documents: a modal whose subject is one states the document's content
_DOCUMENTS = (
    r"\b(?:the|a|an|such|any) (?:contract|agreement|data use agreement|plan documents?|"
    r"authorization|notice|statement|documentation|certification|request|code|accounting|denial"
)
_DOCUMENT = re.compile(
    _DOCUMENTS + r"|order|waiver)(?: or other (?:arrangement|written agreement))?\s*"
    r"(?:\([^)]*\)\s*)?$",
    re.I,
)
_DOCUMENT_IS = re.compile(
    _DOCUMENTS + r")\b[^.;]{0,40}?\b(?:must|shall|may|is|are|will)\b",
    re.I,
)
_RELATIVE = re.compile(r"\b(?:that|which|who|whom)\s+(?:\w+\s+){0,3}$", re.I)
_DEFINITION = re.compile(r"\bmeans\b|\bis defined\b|\bthe term\b|\bas used in this\b", re.I)
_INCLUDES = re.compile(r"\bincludes?\b", re.I)
_EXCLUSION = re.compile(r"\bdoes not include (?:a |any )?(?:uses?|disclosures?)\b", re.I)
_NO_SUBJECT = re.compile(r"^\W*(?:\(\w+\)\s*)*no\s+[\w -]{1,60}?\b(?:may|shall|is to|will)\b", re.I)
_NOT_ITEM = re.compile(r"^\W*(?:\(\w+\)\s*)*not\s+(?P<verb>[a-z-]+)", re.I)
# a lead whose items are what a document or a duty must hold, not flows
_CONTENT_LEAD = re.compile(
    r"\b(?:must|shall|will)\s+(?:\w+\s+){0,3}?(?:contain|include|state|describe)\b"
    r"|\b(?:contains?|includes?) the following\b"
    r"|\bthe following (?:elements|statements|criteria)\b"
    r"|\bprovides? that the [\w ]{1,40}\bwill\b",
    re.I,
)
_LEAD_END = re.compile(
    r"(?::|—|\bas follows\.?|\bfollowing (?:circumstances|conditions|purposes)\.?)\s*$", re.I
)


def structure_path() -> Path:
    return ontology_path("norm_structure.json")


@dataclass(frozen=True, slots=True)
class Switches:
    """The readings the regulation's grammar leaves to convention (``norm_structure.json``).

    - ``conduct``: a negated modal over an act that is not a flow ("may not require",
      "may not intimidate") is a prohibition (else a requirement: a definition);
    - ``only``: "may disclose ... only if / only as" is a prohibition (the permission is the
      exception to it) (else a permission);
    - ``may_any``: "may" with any act ("may deny access") is a permission (else only with a
      flow verb);
    - ``content``: the items of a lead that says what a document or duty must hold ("must
      contain:", "a statement that") are definitions even when they state a modal;
    - ``lead_includes``: "Such purposes include:" opening a list does not make the list a
      definition (its items read through the statement above it);
    - ``strongest``: a paragraph's type is its strongest statement (prohibit > permit >
      requirement), else its earliest.
    """

    conduct: bool = True
    only: bool = True
    may_any: bool = True
    content: bool = True
    lead_includes: bool = True
    strongest: bool = True

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(cls.__dataclass_fields__)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Switches:
        unknown = set(data) - set(cls.names())
        if unknown:
            raise ValueError(f"unknown switch(es) {sorted(unknown)} in norm_structure.json")
        return cls(**{k: bool(v) for k, v in data.items()})

    @classmethod
    def load(cls, path: Path | None = None) -> Switches:
        data = json.loads((path or structure_path()).read_text(encoding="utf-8"))
        return cls.from_json(data["switches"])


@dataclass(frozen=True, slots=True)
class Statement:
    """One deontic statement of a sentence."""

    kind: str  # "prohibit", "permit", "require"
    verb: str
    flow: bool
    only: bool
    start: int


@dataclass
class Reading:
    """What a paragraph's own words state."""

    statements: list[Statement] = field(default_factory=list)
    definition: bool = False
    includes: bool = False  # "includes" outside a list's lead
    lead_includes: bool = False  # "Such purposes include:" opening a list
    lead: str = ""  # the sentence that opens a list, "" when none

    def own_type(self, switches: Switches) -> str | None:
        if self.definition:
            return "definition"
        typed: list[tuple[int, str]] = []
        for s in self.statements:
            kind = self._kind(s, switches)
            if kind is not None:
                typed.append((s.start, kind))
        if typed:
            if switches.strongest:
                order = ("prohibit", "permit", "definition")
                return min(typed, key=lambda t: (order.index(t[1]), t[0]))[1]
            return min(typed)[1]
        if self.includes or (self.lead_includes and not switches.lead_includes):
            return "definition"
        return None

    @staticmethod
    def _kind(s: Statement, switches: Switches) -> str | None:
        if s.verb == "be" or s.verb in _READING_VERBS:
            return None  # a state described ("may not be inconsistent with"), not a norm
        if s.kind == "prohibit":
            # "may not require ...", "No ... is to be removed": the switch says
            return "prohibit" if s.flow or switches.conduct else None
        if s.kind == "permit":
            if s.flow and s.only and switches.only:
                return "prohibit"
            return "permit" if s.flow or switches.may_any else None
        if s.kind == "require":
            # "must disclose": a required flow (164.502(a)(2)); "must provide a notice": a duty
            return "permit" if s.flow else "definition"
        return None


_MAKE_FLOW = re.compile(
    r"^\s*(?:\w+\s+){0,3}?(?:an?\s+|any\s+|such\s+)?(?:uses?|disclosures?|requests?|"
    r"communications?)\b",
    re.I,
)
_REQUIRED_FLOW = frozenset({"use", "disclose", "used", "disclosed", "required"})
#: "may not be construed to require ...": how to read the law, not a norm
_READING_VERBS = frozenset({"construed", "interpreted", "read"})
_LETS = frozenset({"permit", "allow", "authorize", "let"})
_FLOW_AHEAD = re.compile(
    r"^[^.;]{0,60}?\bto (?:\w+ )?(?:use|disclose|sell|request|receive|obtain|share|release|"
    r"provide|transmit)\b",
    re.I,
)


_FLOW_NEAR = re.compile(r"^[^.;]{0,80}?\b(?:uses? (?:or|and) disclos|disclos)", re.I)
_REQUIRED_NEAR = re.compile(
    r"^[^.;]{0,80}?\b(?:use or disclose|disclose|authorization for)\b", re.I
)


def _flow_of(verb: str, rest: str, modal: str) -> bool:
    """Whether the act a modal governs is a flow: a flow verb, "make a disclosure", "permit X to
    disclose", an act on a disclosure ("may rely ... on a requested disclosure"), or the list
    below ("may:"). What "must" governs is a flow when a use or disclosure follows it closely
    ("must obtain an authorization for any use or disclosure")."""
    if modal in ("must", "shall"):
        return bool(_REQUIRED_NEAR.match(rest)) or verb in _REQUIRED_FLOW
    if not verb:
        return modal == "may" and not rest.strip(" :—-")  # "may:" — the items say what
    if verb in _READING_VERBS:
        return False
    if verb == "make":
        return bool(_MAKE_FLOW.match(rest))
    if verb in _LETS:
        return bool(_FLOW_AHEAD.match(rest))
    return _is_flow(verb) or bool(_FLOW_NEAR.match(rest))


_IRREGULAR = frozenset(
    {"made", "sold", "sent", "told", "kept", "held", "met", "paid", "read", "set", "put", "done"}
    | {"found", "brought", "sought", "left", "lost", "built", "bought", "taught", "dealt"}
)


def _participle(word: str) -> bool:
    """A past participle ("disclosed", "given", "made"): "may not be made" is an act."""
    return word in _IRREGULAR or word in _PARTICIPLES or bool(re.search(r"(?:ed|en|wn)$", word))


def _verb_after(text: str, end: int) -> tuple[str, bool]:
    """The verb a modal governs (lower case) and whether "only" restricts it."""
    words = _WORD.findall(text[end : end + 80])
    only = False
    for i, word in enumerate(words):
        w = word.lower()
        if w == "only":
            only = True
        if w in _SKIP or w in ("in", "whole", "or", "part", "the", "extent"):
            continue
        if i and words[i - 1].lower() == "be" and not _participle(w):
            return "be", only  # "may not be earlier than": a state, not an act
        return w, only
    return "", only


def _is_flow(verb: str) -> bool:
    return verb in FLOW_VERBS or verb in _PARTICIPLES or verb.rstrip("s") in FLOW_VERBS


def read(text: str) -> Reading:
    """The statements of a paragraph's own text."""
    reading = Reading()
    text = text.strip()
    if not text:
        return reading
    definition = _DEFINITION.search(text)
    if definition and not _MODAL.search(text[: definition.start()]):
        reading.definition = True
    sentences = _SENTENCES.split(text)
    if sentences and _LEAD_END.search(sentences[-1]):
        reading.lead = sentences[-1]
    offset = 0
    for sentence in sentences:
        at = text.find(sentence, offset)
        offset = at + len(sentence)
        is_lead = sentence is sentences[-1] and bool(reading.lead)
        exclusion = _EXCLUSION.search(sentence)
        if exclusion:
            # "Sale ... does not include a disclosure ...:": what is carved out of a rule
            reading.statements.append(Statement("permit", "exclude", True, False, at))
        elif _INCLUDES.search(sentence):
            if is_lead:
                reading.lead_includes = True
            else:
                reading.includes = True
        no_subject = _NO_SUBJECT.search(sentence)
        if no_subject:
            verb, only = _verb_after(sentence, no_subject.end())
            reading.statements.append(Statement("prohibit", verb, _is_flow(verb), only, at))
        item = _NOT_ITEM.match(sentence)
        if item:
            verb = item.group("verb").lower()
            rest = sentence[item.end() :]
            reading.statements.append(
                Statement("prohibit", verb, _flow_of(verb, rest, ""), False, at)
            )
        document = _DOCUMENT_IS.search(sentence)
        if document and not _MODAL.search(sentence[: document.end()]):
            # "The authorization sought is for ...": what a document is or says
            reading.statements.append(Statement("require", "document", False, False, at))
        for m in _MODAL.finditer(sentence):
            before = sentence[: m.start()]
            if _CONTENT.search(before) or _RELATIVE.search(before):
                continue
            if _DOCUMENT.search(before) or _DOCUMENT_IS.search(sentence[: m.end()]):
                # "The contract may permit ...": what a document says, not a norm of the paragraph
                reading.statements.append(Statement("require", "document", False, False, at))
                continue
            verb, only = _verb_after(sentence, m.end())
            rest = sentence[m.end() :]
            if verb:
                rest = rest[rest.lower().find(verb) + len(verb) :]
            only = only or bool(re.search(r"\bonly\b", sentence[m.end() :], re.I))
            if m.group("modal"):
                modal = m.group("modal").lower()
                negated = bool(m.group("neg"))
                if modal == "will" and not negated:
                    continue  # "will" describes, it does not permit or require
                if negated:
                    kind = "prohibit"
                elif modal == "may":
                    kind = "permit"
                else:
                    kind = "require"
            else:
                perm = m.group("perm").lower()
                negated = bool(m.group("pneg"))
                if perm == "prohibited":
                    kind = "permit" if negated else "prohibit"
                elif perm == "permitted":
                    kind = "prohibit" if negated else "permit"
                else:  # required
                    kind = "permit" if negated else "require"
                    if negated:
                        verb = verb or "required"
            modal_word = (m.group("modal") or "").lower()
            if m.group("neg") and not verb:
                modal_word = "may not"  # "The Secretary may not:" — the items say what
            flow = _flow_of(verb, rest, modal_word) or (
                m.group("perm") is not None and m.group("pneg") is not None
            )
            reading.statements.append(Statement(kind, verb, flow, only, at + m.start()))
    return reading


def content_lead(lead: str) -> bool:
    """Whether a list's opening sentence says what a document or a duty must hold ("The notice
    must contain the following statements:"): its items are that content, not flows."""
    return bool(_CONTENT_LEAD.search(lead))
