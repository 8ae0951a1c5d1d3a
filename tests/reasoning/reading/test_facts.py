"""The fact reader: flows, parties and the facts the checklist asks, on sentences written here.

Each row is a narrative, a question (a condition kind or an applicability key), what the
narrative states about it, and words the fact's span must cover: negation and scope ("did not
object", "no court order was issued"), passives and who did what to whom, the applicability
exclusions, and what the parties' roles state. The spaCy rows skip when the parser model is not
installed; the last tests make spaCy unimportable and check that the reader still works, and
says so, and that reading never imports torch.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from privacy_checklist.kg import kb as kbmod
from privacy_checklist.kg.conditions import load_catalogue
from privacy_checklist.reasoning.checklist.decide import combine, decide
from privacy_checklist.reasoning.reading import facts as factsmod
from privacy_checklist.reasoning.reading.facts import FactCues, FactReader
from privacy_checklist.reasoning.reading.types import Flow


@pytest.fixture(scope="module")
def kb() -> kbmod.KnowledgeBase:
    return kbmod.load()


@pytest.fixture(scope="module")
def reader(kb: kbmod.KnowledgeBase) -> FactReader:
    pytest.importorskip(factsmod.MODEL, reason="the parser model is not installed")
    found = FactReader(kb)
    assert found.parser == factsmod.PARSED
    return found


def read_flows(reader: FactReader, text: str) -> list[Flow]:
    """The flows the reader reads in ``text``."""
    return reader.read(text).flows


def fact_of(flows: list[Flow], key: str) -> Any:
    """The first stated fact of that key among the flows (the one a test is about)."""
    for flow in flows:
        fact = flow.fact(key)
        if fact.value is not None:
            return fact
    return flows[0].fact(key) if flows else None


# (narrative, key, value stated, words the span must cover)
FACTS = [
    # negation and its scope
    (
        "Dr. Patel emailed the patient's lab results to her employer without her consent.",
        "authorization",
        False,
        "consent",
    ),
    (
        "The patient never signed an authorization, but the clinic mailed her chart to an "
        "insurance agent.",
        "authorization",
        False,
        "signed an authorization",
    ),
    (
        "After the patient signed a release form, the clinic mailed her chart to the insurer.",
        "authorization",
        True,
        "signed a release form",
    ),
    (
        "She refused to sign a release form, but the hospital faxed her records to the lawyer.",
        "authorization",
        False,
        "sign a release form",
    ),
    (
        "When the nurse asked whether she could update his wife, Mr. Gray did not object, so "
        "she called his wife about the surgery.",
        "agreement_or_no_objection",
        True,
        "object",
    ),
    (
        "Although Ms. Ortiz had asked the clinic not to, a nurse told her mother about her "
        "pregnancy.",
        "agreement_or_no_objection",
        False,
        "asked the clinic not to",
    ),
    (
        "No court order was issued, but Valley Hospital sent the patient's records to the police.",
        "court_order",
        False,
        "court order",
    ),
    (
        "A judge ordered Valley Hospital to produce the patient's ER chart, and the hospital "
        "sent it to the court.",
        "court_order",
        True,
        "ordered",
    ),
    (
        "The subpoena was not accompanied by any assurance that the patient had been told, and "
        "the clinic mailed her records to the attorney.",
        "subpoena_with_assurances",
        False,
        "assurance",
    ),
    (
        "No IRB or privacy board approved the study, yet the hospital gave the researcher the "
        "diabetes files.",
        "research_irb_waiver",
        False,
        "approved",
    ),
    (
        "The IRB approved a waiver of authorization, and the hospital gave the researcher the "
        "diabetes files.",
        "research_irb_waiver",
        True,
        "approved a waiver",
    ),
    (
        "The statute does not require the report, but the clinic faxed the patient's wound "
        "chart to the sheriff.",
        "required_by_law",
        False,
        "require",
    ),
    # applicability
    (
        "Karen told her book club that her sister has breast cancer.",
        "sender_covered",
        False,
        "Karen",
    ),
    (
        "A records clerk at City Hospital looked up her neighbor's chart out of curiosity.",
        "acting_in_role",
        False,
        "out of curiosity",
    ),
    (
        "The HR manager at a trucking company read a driver's personnel file and told his "
        "supervisor about the driver's back surgery.",
        "sender_covered",
        False,
        "HR manager",
    ),
    (
        "The hospital archivist gave a historian the chart of a soldier who died in 1918.",
        "information_is_phi",
        False,
        "died in 1918",
    ),
    (
        "Bayside Clinic gave the cleaning company the names and phone numbers of its staff.",
        "information_is_phi",
        False,
        "names and phone numbers",
    ),
    # what the parties' roles state
    (
        "Dr. Ruiz faxed Ana Lopez's test results to Ana Lopez.",
        "to_the_individual",
        True,
        "Ana Lopez",
    ),
    (
        "The hospital told the patient's husband, who drives him to dialysis, about his new "
        "medication.",
        "involved_in_care",
        True,
        "drives him to dialysis",
    ),
    (
        "The laboratory reported the patient's tuberculosis result to the county health "
        "department.",
        "public_health_authority",
        True,
        "health department",
    ),
    (
        "Dr. Wong told the patient's coworker, who plays no part in his care, about his diagnosis.",
        "involved_in_care",
        False,
        "part in his care",
    ),
    # purposes
    (
        "Dr. Chen sent the MRI to the orthopedic surgeon she was referring the patient to.",
        "for_treatment",
        True,
        "referring",
    ),
    (
        "The pharmacy sold its list of customers on insulin to a marketing company.",
        "sale_of_phi",
        True,
        "sold its list",
    ),
    (
        "The hospital gave a drug maker the names of its diabetic patients so its sales reps "
        "could pitch them a new pump.",
        "marketing",
        True,
        "pitch them",
    ),
    # "without" governing a clause on its noun: the authorization is stated absent
    (
        "A therapist's notes from sessions were given to the patient's employer without the "
        "patient signing anything.",
        "authorization",
        False,
        "signing anything",
    ),
    (
        "The clinic sent the patient's record to the Riverside Workers' Compensation Board for "
        "her workers' comp claim.",
        "workers_compensation",
        True,
        "workers' comp",
    ),
    (
        "A patient punched a nurse in the hospital parking lot, and the hospital gave the "
        "police his name.",
        "crime_on_premises",
        True,
        "in the hospital parking lot",
    ),
]


@pytest.mark.parametrize(("narrative", "key", "value", "words"), FACTS)
def test_fact(reader: FactReader, narrative: str, key: str, value: bool, words: str) -> None:
    flows = read_flows(reader, narrative)
    assert flows, "no flow read"
    fact = fact_of(flows, key)
    assert fact is not None and fact.value is value, [f.facts for f in flows]
    assert 0 <= fact.start < fact.end <= len(narrative)
    assert (
        words.lower() in narrative[fact.start : fact.end].lower()
        or narrative[fact.start : fact.end].lower() in words.lower()
    ), narrative[fact.start : fact.end]


# (narrative, sender's span, sender role, recipient's span, recipient role or "" for none)
PARTIES = [
    (
        "The biopsy report was sent to the patient's employer by Dr. Lin.",
        "Dr. Lin",
        "health care provider",
        "employer",
        "employer",
    ),
    (
        "The detective obtained the patient's ER records from Lakeview Hospital.",
        "Lakeview Hospital",
        "covered entity",
        "detective",
        "law enforcement official",
    ),
    (
        "A pharmacist at Main Street Pharmacy told a customer's neighbor that the customer takes "
        "antidepressants.",
        "pharmacist",
        "covered entity",
        "neighbor",
        "",
    ),
    (
        "A nurse at Elm Clinic told her friends about the HIV test result of a patient.",
        "nurse",
        "covered entity",
        "friends",
        "",
    ),
    (
        "A receptionist at Hillside Clinic gave a reporter the singer's overdose diagnosis.",
        "receptionist",
        "covered entity",
        "reporter",
        "",
    ),
]


@pytest.mark.parametrize(("narrative", "sender", "sender_role", "recipient", "role"), PARTIES)
def test_who_did_what(
    reader: FactReader, narrative: str, sender: str, sender_role: str, recipient: str, role: str
) -> None:
    flows = read_flows(reader, narrative)
    assert len(flows) == 1
    flow = flows[0]
    assert flow.sender is not None and flow.recipient is not None
    assert sender in narrative[flow.sender.start : flow.sender.end]
    assert sender_role in flow.sender_roles
    assert recipient in narrative[flow.recipient.start : flow.recipient.end]
    if role:
        assert role in flow.recipient_roles
    else:
        assert not flow.recipient_roles
    assert "protected health information" in flow.information_types


def test_the_individual_receives(reader: FactReader) -> None:
    flow = read_flows(reader, "Dr. Ruiz faxed Ana Lopez's test results to Ana Lopez.")[0]
    assert flow.recipient_roles == frozenset({"individual"})


def test_verdicts(reader: FactReader, kb: kbmod.KnowledgeBase) -> None:
    """The demo's sample reads as a prohibited flow; a referral as a permitted one; a friend's
    gossip as not covered."""
    catalogue = load_catalogue(kb.tree)

    def verdict(text: str) -> str:
        best = combine([decide(catalogue, f) for f in read_flows(reader, text)])
        return best.label if best else "not_applicable"

    assert (
        verdict(
            "Dr. Lee, a surgeon at Mercy Hospital, emailed the patient's medical records to a "
            "police detective without her consent."
        )
        == "prohibit"
    )
    assert verdict("A nurse told her friends about the HIV test result of a patient.") == "prohibit"
    assert (
        verdict("Dr. Amy Stone referred her patient to a cardiologist and faxed him the ECG.")
        == "permit"
    )
    assert verdict("Karen told her book club that her sister has breast cancer.") == (
        "not_applicable"
    )


def test_cues_are_data() -> None:
    cues = FactCues.load()
    kinds = {cue.key for cue in cues.cues}
    assert {"authorization", "court_order", "sender_covered", "information_is_phi"} <= kinds
    assert all(cue.pattern.pattern for cue in cues.cues)


def test_without_spacy(kb: kbmod.KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    """With spaCy unimportable the reader reads on patterns alone, and says so."""
    monkeypatch.setitem(sys.modules, "spacy", None)
    monkeypatch.setitem(sys.modules, factsmod.MODEL, None)
    factsmod.load_parser.cache_clear()  # the pipeline is loaded once a process
    try:
        reader = FactReader(kb)
    finally:
        factsmod.load_parser.cache_clear()
    assert reader.nlp is None
    assert reader.parser == factsmod.UNPARSED
    assert "not installed" in reader.parser
    text = "Dr. Lee emailed the patient's medical records to a reporter without her consent."
    flows = read_flows(reader, text)
    assert flows
    assert "covered entity" in flows[0].sender_roles
    fact = flows[0].fact("authorization")
    assert fact.value is False
    assert "consent" in text[fact.start : fact.end]
    catalogue = load_catalogue(kb.tree)
    best = combine([decide(catalogue, f) for f in flows])
    assert best is not None and best.label == "prohibit"


def test_no_torch() -> None:
    """Loading the parser and reading imports neither torch (kept out of spaCy's load) nor
    spaCy's command line (its web client and templates); both still import when asked for."""
    code = (
        "import sys\n"
        "from privacy_checklist.kg import kb\n"
        "from privacy_checklist.reasoning.reading.facts import FactReader\n"
        "r = FactReader(kb.load())\n"
        "r.read('Dr. Lee emailed the records to a reporter.')\n"
        "print('torch' in sys.modules, 'spacy.cli' in sys.modules, 'httpx' in sys.modules)\n"
        "import spacy, spacy.cli\n"
        "print(callable(spacy.cli.download), spacy.info()['spacy_version'] == spacy.__version__,"
        " r.parser is not None)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False"] * 3 + ["True"] * 3, out


def test_a_question_is_read_as_the_flow_it_asks_about(reader: FactReader) -> None:
    """ "Can I send ...?" asks about the flow it names; "hospitals must report" states none."""
    flows = read_flows(
        reader,
        "I'm the office manager at a dental practice. Can I send a patient's x-rays to her new "
        "dentist so he can finish her root canal?",
    )
    assert flows and "health care provider" in flows[0].recipient_roles
    assert flows[0].fact("for_treatment").value is True
    assert read_flows(reader, "Hospitals must report gunshot wounds to the police.") == []


def test_records_about_a_patient_are_health_records(reader: FactReader) -> None:
    flows = read_flows(
        reader, "The records were faxed to the patient's employer after the HR manager called."
    )
    assert flows and flows[0].fact("information_is_phi").value is not False
    assert "protected health information" in flows[0].information_types


# (narrative, verdict, a fact the verdict rests on and its value, or None) — the mechanisms of
# the session of 2026-11-25, each on sentences written here
READINGS = [
    # the first person: "I" is the staff member the narrative says, "we" its organization
    (
        "I'm a nurse at Mercy Hospital. I faxed her chart to her cardiologist.",
        "permit",
        ("for_treatment", True),
    ),
    (
        "I work at a pharmacy. Can I text a customer's refill history to my cousin?",
        "prohibit",
        ("sender_covered", True),
    ),
    # the patient speaks: "my chart" given to "me" is given to the individual
    (
        "I asked my clinic for a copy of my own chart. Do they have to give it to me?",
        "permit",
        ("to_the_individual", True),
    ),
    ("My dentist told my boss about my gum disease.", "prohibit", ("sender_covered", True)),
    # a purpose the parties' roles imply, only when the case states no other
    ("Our clinic faxed her chart to the cardiologist.", "permit", ("for_treatment", True)),
    (
        "The hospital sent the bill and her diagnosis codes to her insurance company.",
        "permit",
        ("for_payment", True),
    ),
    # the requester receives: "wants", and the outside person who came asking
    (
        "The state board of nursing is investigating one of our nurses. It wants the medication "
        "records of the patients she cared for. Can we send them?",
        "permit",
        ("health_oversight", True),
    ),
    (
        "Detectives arrived with a search warrant signed by a judge for the toxicology results "
        "of a driver we treated. Can we hand them over?",
        "permit",
        ("court_order", True),
    ),
    # what the sender is, said in its own clause, outweighs its role's reading
    (
        "Dr. Vance runs a cash-only acupuncture practice. He has never sent a claim or any other "
        "transaction electronically. He told a patient's husband about her fertility treatment.",
        "not_applicable",
        ("sender_covered", False),
    ),
    (
        "Mountainview is a massage studio that takes only cash and never submits anything to "
        "insurers. One of its therapists told a client's friend about her back condition.",
        "not_applicable",
        ("sender_covered", False),
    ),
    # a question about what the law lets one do asks about the flow it names
    (
        "Our clinic confirmed active TB in a patient. Does HIPAA let us send the case report, "
        "with his name and address, to the state health department's TB program?",
        "permit",
        ("public_health_authority", True),
    ),
    # a "to" phrase the tagger misread ("to child" as an infinitive) still names the recipient
    (
        "I'm a pediatrician. A 4-year-old came in with burns that don't match the parents' "
        "story. Can I report it to child protective services without the parents' OK?",
        "permit",
        None,
    ),
    # a clause read as a flow with no information, prohibited only by default, does not outweigh
    # the flow read in full
    (
        "An employer asked our occupational health clinic to examine its press operators as "
        "workplace medical surveillance that federal rules require. We hand every worker a "
        "written notice that the findings go to the employer. Can we send the employer the "
        "audiogram findings?",
        "permit",
        ("workplace_surveillance", True),
    ),
    # "read" with no one told is a use, here for training (health care operations)
    (
        "May supervised pharmacy students on our ward read their assigned patients' charts as "
        "part of their clinical rotation?",
        "permit",
        ("for_operations", True),
    ),
    # a prohibition lifted by an exception the case states is permitted by that exception
    (
        "A psychologist gave her psychotherapy notes on a former client to the lawyer defending "
        "her in the malpractice suit the client brought against her.",
        "permit",
        ("psychotherapy_notes", True),
    ),
    # an incidental disclosure is a by-product, stated as such
    (
        "At the pharmacy counter a customer waiting behind the privacy line overheard the "
        "technician confirm Mr. Diaz's birth date before she handed over his bag.",
        "permit",
        ("incidental", True),
    ),
    # a front desk is a covered entity of no known kind: the directory permission fits it; the
    # caller who asked by name is told; a patient who opted out of the directory objected
    (
        "A caller asked our front desk whether Anna Berg is a patient here and how she is doing. "
        "The clerk said she is in room 4 and in fair condition.",
        "permit",
        ("facility_directory", True),
    ),
    (
        "On admission Mr. Lowe asked to be left out of the hospital directory. That evening a "
        "caller asked for him by name and the clerk said he was in room 9.",
        "prohibit",
        ("agreement_or_no_objection", False),
    ),
    # de-identified information is outside the rule (164.502(d)(2)), whoever releases it
    (
        "Lakeview Hospital removed all the safe-harbor identifiers from a table of its flu "
        "admissions and gave it to a county newspaper.",
        "not_applicable",
        ("de_identified", True),
    ),
    # a party the narrative denies is no antecedent
    (
        "PeriodPal is a cycle-tracking app people download on their own. No doctor or insurer "
        "is involved. It shares users' cycle data with advertisers.",
        "not_applicable",
        None,
    ),
    # no clause yields a flow: the case read as one (the holder gives what is asked for)
    (
        "The county coroner's office wants the autopsy-related chart of a woman who died in "
        "our ICU, to settle the cause of death.",
        "permit",
        None,
    ),
    # what is needed is not had ("Do we need an authorization?")
    (
        "Our practice sends patients reminders about their flu shots. Do we need an "
        "authorization first?",
        "permit",
        ("authorization", None),
    ),
    # a subpoena handed over is a request: its giver receives what answers it
    (
        "A lawyer for the other driver sent Elm Clinic a subpoena for Ray Cole's chart, with no "
        "notice to Ray and no protective order, and the clinic mailed the chart to the lawyer.",
        "prohibit",
        ("subpoena_with_assurances", False),
    ),
    # the nearest sentence states the background: a later warrant, not an earlier bare request
    (
        "A deputy asked our ER for a patient's chart with no paperwork, and we said no. Two days "
        "later he came back with a court-ordered warrant for the ER record. Can we release it?",
        "permit",
        ("court_order", True),
    ),
    # a friend at a hospital is a friend; a flow's own purpose clause is its purpose
    (
        "The hospital's billing team reviewed a denied claim. Then one of them emailed the "
        "patient's chart to a friend at another hospital to ask for job advice.",
        "prohibit",
        ("for_payment", None),
    ),
    # a call to someone by a covered party carries what the narrative told
    (
        "A patient told his therapist he was going to kill his ex-wife tonight. The therapist "
        "called the police at once to warn them.",
        "permit",
        None,
    ),
    # a unit named by the care it gives; an authorization past its expiry date
    (
        "The orthopedics group released a patient's records to her employer in June 2025 on an "
        "authorization that expired March 1, 2024.",
        "prohibit",
        ("authorization", False),
    ),
    # the individual elected out of fundraising: 164.514(f)(2)(iv)
    (
        "Ann Reyes returned the opt-out card after the hospital's first fundraising letter. The "
        "hospital sent her another fundraising appeal in May.",
        "prohibit",
        ("elected_out", True),
    ),
    # information that is not PHI: student treatment records, a death over fifty years ago
    (
        "The health center at Lakeland College, which treats only enrolled students, gave a "
        "student's counseling notes to the dean.",
        "not_applicable",
        ("information_is_phi", False),
    ),
    (
        "The archive at Brook Valley Hospital lent a novelist the chart of a patient who died at "
        "the hospital in 1952.",
        "not_applicable",
        ("information_is_phi", False),
    ),
    # a person of the agency an acronym names; an order a judge signed
    (
        "An FBI investigator asked Pine Hospital for a patient's chart. A federal judge signed an "
        "order directing the hospital to produce it, and the hospital sent the investigator the "
        "chart.",
        "permit",
        ("court_order", True),
    ),
    # evidence of a crime on the premises
    (
        "A visitor stole a nurse's purse in our ER waiting room and was treated for a cut hand "
        "before he left. Can we give the police his name and the treatment note?",
        "permit",
        ("criminal_conduct", True),
    ),
    # "tell her brother what surgery she needs": what is told, not a request
    (
        "When a patient arrives unconscious after a fall, can we tell her brother, who is in the "
        "waiting room, what surgery she needs?",
        "permit",
        ("absent_or_incapacitated_judgment", True),
    ),
]


@pytest.mark.parametrize(("narrative", "label", "fact"), READINGS)
def test_readings(
    reader: FactReader,
    kb: kbmod.KnowledgeBase,
    narrative: str,
    label: str,
    fact: tuple[str, bool] | None,
) -> None:
    catalogue = load_catalogue(kb.tree)
    checklists = [decide(catalogue, f) for f in read_flows(reader, narrative)]
    best = combine(checklists)
    assert (best.label if best else "not_applicable") == label
    if fact is not None:
        assert best is not None
        assert best.flow.fact(fact[0]).value is fact[1]


def test_a_stated_purpose_is_not_replaced_by_the_roles(reader: FactReader) -> None:
    """A provider's disclosure to another provider is read as treatment only when the case
    states no other purpose: a sale is not treatment."""
    flow = read_flows(
        reader, "The clinic sold her chart to a cardiologist who paid $500 for a list of patients."
    )[0]
    assert flow.fact("for_treatment").source != "role"


def test_we_are_the_organization_the_speaker_works_for(reader: FactReader) -> None:
    """ "I work at a pharmacy ... can we ...?" with no "our": "we" is the pharmacy."""
    flows = read_flows(
        reader,
        "I work at a pharmacy. We faxed a customer's prescription history to a marketing firm.",
    )
    assert flows and "covered entity" in flows[0].sender_roles
    assert flows[0].fact("sender_covered").value is True


def test_the_caller_who_asked_is_told(reader: FactReader) -> None:
    """ "A landlord called ... Can we tell him?": the answer goes to the caller."""
    flows = read_flows(
        reader,
        "A landlord called our clinic asking whether his tenant Dana Roe has been treated for "
        "depression. Can we tell him?",
    )
    told = [f for f in flows if f.verb is not None and f.verb.text == "tell"]
    assert told and told[0].recipient is not None and told[0].recipient.text == "him"
    assert "covered entity" in told[0].sender_roles


def test_an_exception_that_lifts_a_prohibition_is_what_permits(
    reader: FactReader, kb: kbmod.KnowledgeBase
) -> None:
    catalogue = load_catalogue(kb.tree)
    best = combine(
        [
            decide(catalogue, f)
            for f in read_flows(
                reader,
                "A psychologist gave her psychotherapy notes on a former client to the lawyer "
                "defending her in the malpractice suit the client brought against her.",
            )
        ]
    )
    assert best is not None and best.label == "permit"
    assert best.rests_on[0] == "164.508(a)(2)"
    assert "exception" in best.explanation


def test_a_purpose_does_not_make_a_disclosure_incidental(kb: kbmod.KnowledgeBase) -> None:
    """164.502(a)(1)(iii) asks whether the disclosure was incidental (a by-product), not
    whether its purpose was treatment."""
    catalogue = load_catalogue(kb.tree)
    incidental = catalogue.readings["164.502(a)(1)(iii)"]
    assert "incidental" in {c.kind for c in incidental.conditions}
    assert "otherwise_permitted" not in {c.kind for c in incidental.conditions}


def test_the_question_names_the_flow_and_its_pronouns_resolve(reader: FactReader) -> None:
    """ "Her mother now wants the results. Can we give them to her?": "them" are the results,
    "her" is the mother (not the patient), and the question's flow is marked as such."""
    flows = read_flows(
        reader,
        "Mia, 15, was treated at our clinic for acne. Her mother now wants the results. "
        "Can we give them to her?",
    )
    asked = [f for f in flows if f.question]
    assert len(asked) == 1
    assert "family member" in asked[0].recipient_roles


def test_a_reading_depends_on_its_narrative_alone(kb: kbmod.KnowledgeBase) -> None:
    """What the reader read before never changes what it reads now (roles found for a phrase
    depend on the words around it, so they are not carried from one narrative to the next)."""
    from privacy_checklist.ingest.corpus import read_corpus
    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner

    corpus = Path(__file__).resolve().parents[3] / "bench" / "data" / "corpus" / "w25.jsonl"
    texts = {n.id: n.text for n in read_corpus([corpus]).narratives}
    before, now = texts["w25-003"], texts["w25-103"]  # an urgent care's fax; a gym's notice
    fresh = ChecklistReasoner(kb, blend=False).check(now)
    reader = FactReader(kb)
    reasoner = ChecklistReasoner(kb, reader=reader, blend=False)
    reasoner.check(before)
    assert reasoner.check(now).to_json() == fresh.to_json()
    assert reader.read(now) == FactReader(kb).read(now)
