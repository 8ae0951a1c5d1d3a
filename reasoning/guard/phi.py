"""Protected health information in a message: the 18 identifiers and health information.

The identifiers are the law's own list (164.514(b)(2)(i), items A-R); each type names its
item and how a rewrite generalises it (``ontologies/phi.json``, with the patterns and context
words that find them). Health information is read through the attribute graph: every alias of
a concept that reaches *health information* (WordNet's diseases, procedures, tests and drugs
among them), the extra clinical words of the data file, drug-name endings, lab values and
diagnosis or procedure codes; each hit widens to its noun phrase ("left total knee
arthroplasty (CPT 27447)").

Names, places, facilities, dates, ages and numbers in any case and shorthand come from the
learned identifier tagger (:mod:`.tagger`, fitted on writers' labelled clinical notes and
questions, measured leaving writers out), beside the patterns of ``ontologies/phi.json``; the
words around a tagged name say whose it is (a relative's after a kin word, the addressee's
after a greeting). Microsoft Presidio's analyzer adds its recognizers when asked for and
installed (``pip install privacy-checklist[guard]``), run offline; the entity types it is
trusted for were chosen on the project's own drafts (:data:`PRESIDIO_TYPES`).
:class:`PhiReader` ``.find(text)`` returns :class:`PhiSpan`\\ s, non-overlapping, in order.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from privacy_checklist.reasoning.guard.normalise import read_through
from privacy_checklist.reasoning.guard.phi_data import (
    FULL_NAME,
    _clause_before,
    _date_like,
    _nearest_context,
    _phrases,
    _word_at,
    _words,
    aggregated_age,
    health_lexicon,
    identifier_types,
    phi_data,
)
from privacy_checklist.reasoning.guard.presidio import presidio_analyzer
from privacy_checklist.reasoning.guard.tagger import Tagged
from privacy_checklist.reasoning.guard.tagger import shipped as shipped_tagger
from privacy_checklist.reasoning.text import MODEL, load_pipeline

if TYPE_CHECKING:
    from privacy_checklist.kg.kb import KnowledgeBase

#: the parser model (the one the checklist's facts reader uses), here with its entities
#: the law's list of identifiers
IDENTIFIERS_NODE = "164.514(b)(2)(i)"
#: Presidio's entity types the guard takes with ``presidio=True``, with the type each becomes.
#: Chosen on the development drafts (``pcheck guard-eval --file tests/data/guard_drafts.jsonl
#: --guard-presidio``): no type of Presidio's improved the guard there (its own recognizers
#: leave no unneeded identifier); its person names cost least (verdicts 97.5% against 98.8%),
#: its places and dates more (94-95%, 90% with all of them), so only names are taken.
PRESIDIO_TYPES = {"PERSON": "NAME"}
PRESIDIO_MIN_SCORE = 0.6
#: how many texts' spans a reader keeps (:meth:`PhiReader.find`)
FOUND_KEPT = 8


@dataclass(frozen=True, slots=True)
class PhiSpan:
    """One span of protected health information.

    Attributes:
        kind: ``identifier`` (one of the 18) or ``health`` (health information).
        type: the identifier type (``NAME``, ``DATE`` ...) or the health type (``CONDITION``,
            ``MEDICATION``, ``TEST``, ``PROCEDURE``, ``HEALTH``).
        source: what found it: ``pattern``, ``context`` (a code typed by the words before
            it), ``names`` (the message's shape), ``ner`` (spaCy), ``presidio``, ``lexicon``.
        addressee: a name the message greets (whose it is depends on the recipient).
        own: the sender's own number or mailbox ("call our office at ..."; :func:`.own_parties`).
        concept: for health, the attribute-graph concept the words reached.
    """

    start: int
    end: int
    text: str
    kind: str
    type: str
    source: str = ""
    addressee: bool = False
    concept: str = ""
    own: bool = False

    @property
    def item(self) -> str:
        """The paragraph of the law the span falls under."""
        if self.kind != "identifier":
            return "164.501 (health information)"
        return f"{IDENTIFIERS_NODE}({identifier_types()[self.type]['item']})"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "kind": self.kind,
            "type": self.type,
            "law": self.item,
            "source": self.source,
        }
        flags = {"addressee": self.addressee, "concept": self.concept, "own": self.own}
        return data | {key: value for key, value in flags.items() if value}


@functools.cache
def _shared_pipeline(model: str, with_entities: bool = True) -> Any | None:
    """The pipeline the reader uses (once a process): noun chunks, entities when asked, no
    lemmas."""
    return load_pipeline(model, exclude=["lemmatizer", *(() if with_entities else ("ner",))])


@dataclass
class PhiReader:
    """Find the protected health information of a message (see the module docstring).

    Args:
        kb: the knowledge base (its attribute graph gives the health words).
        nlp: a spaCy pipeline with entities, "auto" (the parser model when installed), or
            None (patterns and lexicons only).
        presidio: also run Presidio's analyzer (offline); "auto" when it is installed.
        tagger: the learned identifier tagger (:mod:`.tagger`), or "auto" (the shipped one;
            a reader without it is refused rather than let names through).
    """

    kb: KnowledgeBase
    nlp: Any = "auto"
    presidio: Any = False
    tagger: Any = "auto"
    _analyzer: Any = field(default=None, init=False, repr=False)
    _found: dict[tuple[str, int, int, int, bool], tuple[PhiSpan, ...]] = field(
        default_factory=dict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        data = phi_data()
        if self.nlp == "auto":
            # the parse gives health words their noun phrases; entities only Presidio reads
            self.nlp = _shared_pipeline(MODEL, with_entities=bool(self.presidio))
        if self.tagger == "auto":
            self.tagger = shipped_tagger()
        if self.tagger is None:
            raise RuntimeError(
                "the guard's identifier tagger is missing (python-crfsuite and "
                "reasoning/data/identifier_tagger.crfsuite): reinstall privacy-checklist"
            )
        if self.presidio:
            self._analyzer = presidio_analyzer(self.nlp, required=self.presidio is True)
        self._patterns = [
            (
                p["type"],
                re.compile(p["regex"]),
                re.compile(p.get("keep_from", "^")),
                re.compile(p["confirm_unless"]) if "confirm_unless" in p else None,
            )
            for p in data["patterns"]
        ]
        self._not_patterns = {p["regex"]: frozenset(p.get("not", [])) for p in data["patterns"]}
        codes = data["codes"]
        self._code = re.compile(codes["regex"])
        self._icd10 = re.compile(codes["icd10"])
        self._cpt = re.compile(codes["cpt"])
        self._health_patterns = [
            (p["type"], re.compile(p["regex"])) for p in data["health"]["patterns"]
        ]
        self._lexicon = health_lexicon(self.kb)
        self._suffixes = tuple(data["health"]["drug_suffixes"])
        self._endings = tuple(data["health"]["medical_endings"])
        self._org_words = frozenset(data["names"]["org_words"])
        self._not_medical = frozenset(data["health"]["not_medical"])
        self._modifiers = frozenset(data["health"]["modifiers"])
        names = data["names"]
        self._not_names = frozenset(names["not_names"])
        #: "Mr", "Mrs" ... before a name (``ontologies/phi.json``)
        self._honorific = f"(?:{_words(t.capitalize() for t in names['honorifics'])})"
        self._greeting = re.compile(
            rf"(?:^|(?<=[.!?\n]\s)|(?<=\n))(?i:{_words(names['greetings'])})\s*,?\s+"
            rf"(?P<name>(?:{self._honorific}\.?\s+)?{FULL_NAME})(?=\s*[,!:;.—–-]|\s*$)"
        )
        self._kin_words = frozenset(names["kin"])

    # ----------------------------------------------------------------- reading

    def parse(self, texts: Sequence[str]) -> list[Any]:
        """The spaCy documents of many texts at once (faster than one by one; None each when
        no pipeline is installed), for :meth:`find`'s ``doc``."""
        if self.nlp is None:
            return [None] * len(texts)
        return list(self.nlp.pipe(texts, batch_size=64))

    def find(self, text: str, doc: Any = None, parse: bool = True) -> list[PhiSpan]:
        """Every span of protected health information in ``text``, in order (``doc``: its spaCy
        document, if parsed; ``parse=False``: no parse, whose noun phrases only widen health
        spans), read through :func:`.normalise.normalise` and placed on ``text``. The last few
        texts' spans are kept: a rewrite is read again by its re-check and the next rewrite."""
        key = (text, id(self.tagger), id(self.nlp), id(self._analyzer), parse)
        if key in self._found:
            return list(self._found[key])
        found = read_through(text, lambda t: self._read(t, doc if t == text else None, parse))
        self._found[key] = tuple(found)
        while len(self._found) > FOUND_KEPT:
            self._found.pop(next(iter(self._found)))
        return found

    def _read(self, text: str, doc: Any, parse: bool = True) -> list[PhiSpan]:
        if doc is None and parse and self.nlp is not None and text.strip():
            doc = self.nlp(text)
        found = self._identifiers(text, doc)
        kept = [s for s in found if not aggregated_age(text, s)]
        spans = [replace(s, own=True) if self._own_contact(text, s) else s for s in kept]
        spans.extend(self._presidio(text))
        identifiers = _resolve(spans)
        return _resolve(identifiers + self._health(text, doc, identifiers))

    # identifiers ------------------------------------------------------------

    def _identifiers(self, text: str, doc: Any) -> Iterator[PhiSpan]:
        """The patterns' identifiers, the numbers typed by their context, and the tagger's. A
        pattern whose form clinical shorthand shares ("RR 16" breaths; ``confirm_unless`` in
        ``ontologies/phi.json``, unless its text matches that pattern: "PO Box") and a long
        number no word types ("90-110", a range) stand only where the tagger too reads an
        identifier. Month/day dates stand alone: asking the tagger too kept "4/10" pain scores
        but left more dates (notes leaving writers out: 10.5% of identifiers left, not 9.7%)."""
        tagged = self.tagger.tag(text)

        def confirmed(start: int, end: int) -> bool:
            return any(t.start < end and start < t.end for t in tagged)

        for kind, pattern, keep_from, unless in self._patterns:
            for found in pattern.finditer(text):
                if kind == "DATE" and not _date_like(found.group()):
                    continue
                if found.group() in self._not_patterns.get(pattern.pattern, ()):
                    continue  # "U.S.", "M.D.": initials that name no one
                if (
                    unless is not None
                    and not unless.search(found.group())
                    and not confirmed(found.start(), found.end())
                ):
                    continue
                typed = kind
                if kind in ("SSN", "PHONE"):
                    typed = self._context_type(text, found.start()) or kind
                # the span starts where the identifier does ("zip 04401", "she's 93")
                kept = keep_from.search(found.group())
                start = found.start() + (kept.start() if kept else 0)
                yield PhiSpan(
                    start, found.end(), text[start : found.end()], "identifier", typed, "pattern"
                )
        yield from self._codes(text, confirmed)
        yield from self._tagged(text, tagged)

    def _tagged(self, text: str, tagged: Sequence[Tagged]) -> Iterator[PhiSpan]:
        """The identifiers the learned tagger reads, typed for the guard: a number by the words
        before it; a name after a kin word a relative's ("her daughter Ana"; not "my mom
        Ana", the writer's own); a name a line greets the addressee ("Dear Ms. Castellano,"),
        a name even where the tagger read none ("Hi Sam —"; not "Hi Team,")."""
        greeted = [m.span("name") for m in self._greeting.finditer(text)]
        for a, b in greeted:
            words = re.sub(rf"^{self._honorific}\.?\s+", "", text[a:b]).split()
            if (
                words
                and words[0] not in self._not_names
                and not any(t.start < b and a < t.end for t in tagged)
            ):
                yield PhiSpan(a, b, text[a:b], "identifier", "NAME", "names", addressee=True)
        for found in tagged:
            kind = found.guard_type
            if kind is None:
                continue
            if kind == "OTHER_ID":
                kind = self._context_type(text, found.start) or kind
            if kind == "NAME":
                kin = re.search(
                    r"(\w+)\s+(\w+)[\s,]*$", text[max(0, found.start - 40) : found.start]
                )
                if kin and kin.group(2).lower() in self._kin_words:
                    kind = "NAME" if kin.group(1).lower() in ("your", "my") else "RELATIVE_NAME"
            addressee = kind == "NAME" and any(
                a < found.end and found.start < b for a, b in greeted
            )
            yield PhiSpan(
                found.start, found.end, found.text, "identifier", kind, "tagger", addressee
            )

    def _own_contact(self, text: str, span: PhiSpan) -> bool:
        """The sender's own number or mailbox ("call our office at ...", "info@..."), which
        identifies no patient."""
        if span.type not in ("PHONE", "EMAIL", "FAX"):
            return False
        own = phi_data()["own_contact"]
        if re.search(own["before"], text[max(0, span.start - 60) : span.start]):
            return True
        local = span.text.split("@")[0].lower() if "@" in span.text else ""
        return bool(local) and local in own["mailboxes"]

    def _context_type(self, text: str, at: int) -> str:
        """The identifier type the words just before a number name ("" when none): the
        nearest context word, matched as a word ("sn:" is not read in "SSN:")."""
        return _nearest_context(text[:at])[0]

    def _codes(self, text: str, confirmed: Callable[[int, int], bool]) -> Iterator[PhiSpan]:
        """Identifying numbers and codes, typed by the words just before them; diagnosis and
        procedure codes are health information."""
        codes = phi_data()["codes"]
        width = int(codes["context_chars"])
        for found in self._code.finditer(text):
            token = found.group()
            if re.fullmatch(r"\d{3}-\d{3}-\d{4}|\d{3}-\d{4}", token):
                continue  # a phone number: the phone patterns read it (and its context)
            if len(token.replace("-", "")) < int(codes["min_length"]) and not self._icd10.match(
                token
            ):
                continue
            before = _clause_before(text[: found.start()], width)
            health_words = [w for w in codes["health_contexts"] if _word_at(before, w) >= 0]
            kind, at = _nearest_context(text[: found.start()])
            health_at = max((_word_at(before, w) for w in health_words), default=-1)
            code_like = bool(self._icd10.match(token) or self._cpt.match(token))
            if code_like and (health_at > at or not kind):
                yield PhiSpan(found.start(), found.end(), token, "health", "CODE", "context")
                continue
            if re.fullmatch(r"(?:19|20)\d\d", token) or re.fullmatch(r"[A-Z]+", token):
                continue
            if not kind:  # a long number no word types: an identifier if the tagger reads one
                digits = sum(c.isdigit() for c in token)
                if digits < 5 or not confirmed(found.start(), found.end()):
                    continue
                kind = "OTHER_ID"
            yield PhiSpan(found.start(), found.end(), token, "identifier", kind, "context")

    def _presidio(self, text: str) -> Iterator[PhiSpan]:
        if self._analyzer is None:
            return
        for result in self._analyzer.analyze(text=text, language="en"):
            kind = PRESIDIO_TYPES.get(result.entity_type)
            if kind is None or result.score < PRESIDIO_MIN_SCORE:
                continue
            words = text[result.start : result.end]
            if kind == "NAME" and (words in self._not_names or not words[:1].isupper()):
                continue
            yield PhiSpan(result.start, result.end, words, "identifier", kind, "presidio")

    # health -----------------------------------------------------------------

    def _health(self, text: str, doc: Any, identifiers: list[PhiSpan]) -> list[PhiSpan]:
        busy = [(s.start, s.end) for s in identifiers if s.kind == "identifier"]
        found: list[PhiSpan] = [s for s in identifiers if s.kind == "health"]
        for kind, pattern in self._health_patterns:
            for hit in pattern.finditer(text):
                found.append(
                    PhiSpan(hit.start(), hit.end(), hit.group(), "health", kind, "pattern")
                )
        tokens = [(m.start(), m.end(), m.group()) for m in re.finditer(r"[A-Za-z][\w'’/-]*", text)]
        i = 0
        while i < len(tokens):
            for size in (4, 3, 2, 1):
                if i + size > len(tokens):
                    continue
                start, end = tokens[i][0], tokens[i + size - 1][1]
                if size > 1 and re.search(
                    r"[.,;:!?()]", text[tokens[i][1] : tokens[i + size - 1][0]]
                ):
                    continue
                key = " ".join(t[2].lower().replace("’", "'") for t in tokens[i : i + size])
                concept = self._lexicon.get(key) or self._lexicon.get(key.rstrip("s"))
                if concept is None and size == 1:
                    concept = self._drug(tokens, i)
                if concept is not None and self._in_org_name(tokens, i, size):
                    concept = None  # "Bayside Physical Therapy": a practice's name
                if concept is not None:
                    found.append(
                        PhiSpan(
                            start,
                            end,
                            text[start:end],
                            "health",
                            "HEALTH",
                            "lexicon",
                            concept=concept,
                        )
                    )
                    i += size - 1
                    break
            i += 1
        found = [
            s
            for s in found
            if not any(a < s.end and s.start < b for a, b in busy) or s.source == "context"
        ]
        chunks = _phrases(doc)
        widened = [self._widen(text, chunks, s, busy) for s in found]
        return _merge_health(text, widened)

    def _in_org_name(self, tokens: list[tuple[int, int, str]], i: int, size: int) -> bool:
        """Whether tokens i..i+size are part of a Title Case name that ends in an
        organisation word ("Bayside Physical Therapy", "Hillside Endoscopy Center")."""
        words = [t[2] for t in tokens[i : i + size]]
        if not all(w[:1].isupper() for w in words):
            return False
        j = i + size - 1
        while j + 1 < len(tokens) and tokens[j + 1][2][:1].isupper() and j - i < 6:
            j += 1
        last = tokens[j][2].lower()
        has_more = j > i + size - 1 or (i > 0 and tokens[i - 1][2][:1].isupper())
        return has_more and last in self._org_words

    def _drug(self, tokens: list[tuple[int, int, str]], i: int) -> str | None:
        word = tokens[i][2]
        low = word.lower()
        if (
            len(low) >= 7
            and low.endswith(self._endings)
            and low not in self._not_medical
            and low not in self._not_health
        ):
            return "medical term (by its ending)"
        if len(low) >= 7 and low.endswith(self._suffixes) and low not in self._not_health:
            return "drug (by its name's ending)"
        if word[:1].isupper() and i > 0 and word not in self._not_names and len(word) > 3:
            before = tokens[i - 1][2].lower()
            if (
                before
                in (
                    "on",
                    "taking",
                    "takes",
                    "prescribed",
                    "started",
                    "restart",
                    "start",
                    "using",
                    "uses",
                )
                and not word.isupper()
            ):
                return "drug (named after 'on', 'taking' ...)"
        return None

    @functools.cached_property
    def _not_health(self) -> frozenset[str]:
        return frozenset(phi_data()["health"]["not_health"])

    def _widen(
        self,
        text: str,
        chunks: list[tuple[int, int]] | None,
        span: PhiSpan,
        busy: list[tuple[int, int]],
    ) -> PhiSpan:
        """A health word widened to its noun phrase (``chunks``: :func:`_phrases`) and a code
        or value in brackets right after it."""
        start, end = span.start, span.end
        if chunks is not None and span.source == "lexicon":
            for a, b in chunks:
                if a <= start and end <= b:
                    start, end = min(start, a), max(end, b)
                    break
        else:
            while True:
                left = re.search(r"([A-Za-z-]+)\s+$", text[:start])
                if not left or left.group(1).lower() not in self._modifiers:
                    break
                start = left.start(1)
        tail = re.match(r"\s*\(([^()]{1,40})\)", text[end:])
        if tail and re.search(r"\d", tail.group(1)):
            end += tail.end()
        if any(a < end and start < b for a, b in busy if not (span.start <= a and b <= span.end)):
            start, end = span.start, span.end  # a widened phrase may not swallow an identifier
        return replace(span, start=start, end=end, text=text[start:end])


_RANK = {
    "pattern": 0,
    "context": 1,
    "tagger": 2,
    "names": 2,
    "presidio": 3,
    "ner": 4,
    "lexicon": 5,
}


def _resolve(spans: list[PhiSpan]) -> list[PhiSpan]:
    """Non-overlapping spans: identifiers before health, then the longer, then the surer."""
    ordered = sorted(
        spans,
        key=lambda s: (s.kind != "identifier", -(s.end - s.start), _RANK.get(s.source, 9)),
    )
    kept: list[PhiSpan] = []
    for span in ordered:
        if span.end <= span.start:
            continue
        if any(k.start < span.end and span.start < k.end for k in kept):
            continue
        kept.append(span)
    return sorted(kept, key=lambda s: s.start)


def _merge_health(text: str, spans: list[PhiSpan]) -> list[PhiSpan]:
    """Health spans that overlap or touch (only spaces or a hyphen between) become one."""
    merged: list[PhiSpan] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if (
            merged
            and span.start <= merged[-1].end + 1
            and not text[merged[-1].end : span.start].strip(" -")
        ):
            last = merged[-1]
            end = max(last.end, span.end)
            kind = last.type if last.type not in ("HEALTH", "CODE") else span.type
            merged[-1] = replace(last, end=end, text=text[last.start : end], type=kind)
        else:
            merged.append(span)
    return merged
