"""Each clinical-text writer's own brief (issue 28): notes pasted into an outside chatbot
(``n`` writers) and questions typed into one (``q`` writers), with every identifier labelled.

    python bench/guard_text/make_briefs.py OUT_DIR

Deterministic. A writer writes ``OUT_DIR/WRITER/items.jsonl``; ``bench/guard_text/collect.py``
takes a finished set into ``bench/data/guard_text/``.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: (writer, who writes, the notes' or questions' voice)
NOTES = [
    (
        "n01",
        "ICU nurses on night shift",
        "nursing progress notes mostly in CAPITALS and shorthand (system by system: NEURO, CV, "
        "RESP, GI, GU, SKIN, SOCIAL; findings clipped to a word or two), few verbs",
    ),
    (
        "n02",
        "hospitalists and residents",
        "admission H&Ps, progress notes (SOAP) and discharge summaries, mixed case, standard "
        "abbreviations (HPI, PMH, s/p, c/o, w/, r/o, HTN, DM2, CHF, COPD, CKD, A&P)",
    ),
    (
        "n03",
        "emergency department, triage and social work",
        "ED triage notes, physician ED notes, social work and case management notes; lower case "
        "and run-on sentences, times, family contacts, addresses for discharge, insurers",
    ),
    (
        "n04",
        "outpatient clinics: primary care, psychiatry, obstetrics, physical therapy",
        "clinic visit notes, telephone encounter notes, therapy session notes, referral letters; "
        "some templated headers (Pt name:, DOB:, MRN:), some free text",
    ),
    (
        "n05",
        "home health, long-term care and hospice nurses",
        "visit notes in mixed case and long narrative sentences: who was in the house, the "
        "caregiver's phone, directions and gate codes, the pharmacy, the agency, the doctor",
    ),
    (
        "n06",
        "surgeons, anaesthetists and operating-room and recovery staff",
        "operative notes, brief op notes, anaesthesia records and recovery-room handoffs: "
        "templated CAPITAL headers with colons, implant serial and lot numbers, pagers",
    ),
    (
        "n07",
        "paediatric, neonatal and school nurses",
        "notes on infants and children: parents and guardians, siblings, the school or "
        "daycare, birth dates and weights, foster and custody details, terse and mixed case",
    ),
    (
        "n08",
        "addiction and behavioural-health counsellors and case managers",
        "group and individual session notes, intake summaries and case-management contacts, "
        "lower case and first names, shelters, probation officers, employers, court dates",
    ),
]
QUESTIONS = [
    (
        "q01",
        "patients and family caregivers",
        "questions about their own or a relative's diagnosis, results or medicines, often "
        "telling the chatbot names, ages, dates, the hospital and the doctor",
    ),
    (
        "q02",
        "nurses and doctors at work",
        "quick clinical questions (dosing, interactions, differential, how to word a note), "
        "sometimes pasting a line about a real patient with room numbers, MRNs, names",
    ),
    (
        "q03",
        "office, billing and front-desk staff of clinics",
        "questions about codes, claims, letters and scheduling, sometimes with a patient's "
        "account number, insurer id, phone, address or email in them",
    ),
    (
        "q04",
        "students, researchers and the general public",
        "general health and science questions, most with no one's details at all, some "
        "mentioning a named relative, a town, a clinic, or their own birth date",
    ),
    (
        "q05",
        "pharmacists, pharmacy technicians, dental and eye-clinic staff",
        "questions about refills, interactions, prior authorisations, recalls and appointments, "
        "some with a customer's name, birth date, prescription or member number, pharmacy store",
    ),
]
PER_WRITER = {"n": 60, "q": 120}

IDENTIFIERS = """
Label EVERY identifier of a person in the text: the patient, relatives, household members,
employers, and also the clinicians and staff named (nurses, doctors: in clinical notes they are
removed too). `type` is one of:

- `NAME` (any person's name, first, last, initials used as a name, nicknames; any case),
- `DATE` (a date tied to the person: birth, admission, discharge, visit, surgery, death, in any
  form: 3/14, 03-14-2024, March 14th, "the 14th", "Tuesday the 3rd", "fourteenth of March";
  not a bare year, not a duration such as "3 days", not a time of day),
- `AGE_OVER_89` (an age over 89, in any form: 93 y/o, "ninety-three", 91F),
- `PHONE`, `FAX`, `EMAIL`, `URL`, `IP`,
- `ID` (medical record number, SSN, account, health plan member id, licence, device serial,
  room-and-bed when written with a number as an identifier, pager numbers, any other unique
  number),
- `ADDRESS` (street address, ZIP code),
- `LOCATION` (a city, town, county, neighbourhood, or any place smaller than a state, and a
  named workplace, school or church),
- `HOSPITAL` (a named hospital, clinic, nursing home, pharmacy, unit named after a place).

Do NOT label: clinical abbreviations and findings (CV, GI, LUNGS CTA, ABD S/NT/ND, TF @ GOAL,
RR 18, BP 120/80, PERRLA, NKDA, q4h, PRN, CXR, MRI), drug names and doses, lab values,
generic roles ("the patient", "pt", "wife", "MD", "RN"), states and countries, bare years,
durations and times of day, department names without a place ("ICU", "cardiology").
"""

FORMAT = """
## The format: one JSON object a line of `items.jsonl` (UTF-8)

```json
{"id": "WID-001",
 "kind": "KIND",
 "setting": "a few words: what this is and who wrote it",
 "text": "the text exactly as pasted or typed, with its line breaks as \\n",
 "spans": [
   {"text": "Hollis", "occurrence": 1, "type": "NAME"},
   {"text": "03/14", "occurrence": 1, "type": "DATE"}
 ]}
```

- `text` of a span is copied exactly from `text`; `occurrence` says which occurrence of that
  exact string it is (1 for the first), so the span can be found. If the same name appears
  three times, label all three (occurrence 1, 2, 3).
- An item with no identifier has `"spans": []`.
"""

RULES = """
## Rules

- Write every item yourself, one by one, from your own imagination. Do not write a program or
  template that fills slots: each item is its own situation with its own people, places,
  numbers and wording. Invent every person, place, organisation and number (obviously fake
  numbers: SSNs beginning 9xx, phones 555-01xx). Use names of many origins, and write some of
  them in lower case or in capitals as hurried people do.
- Do not copy or paraphrase any public clinical dataset, de-identification corpus, collection
  of medical questions, or published example; do not search for any. Do not look at any other
  folder under /work/guard_text/writers/ and do not look at any code.
- Write as people really write: typos, shorthand, capitals, missing punctuation, pasted
  headers, lists. Some identifiers in unusual forms: a date or an age in words, a phone with
  dots or spaces, an SSN split by spaces or dots, an email written "name at gmail dot com", a
  name in lower case, an MRN without a label.
- Label what the text says: every identifier labelled, nothing else. Check each item again
  after writing it.
- Write the file in chunks as you go (append to `items.jsonl`), so nothing is lost if you stop.
  When done, check with a short script that every line parses, every span's `text` occurs in
  `text` at least `occurrence` times, ids are unique and `type` is one of the list; fix what
  fails. Then reply with the number of items written and anything you could not do.
"""


def brief(wid: str, who: str, voice: str) -> str:
    kind = "note" if wid.startswith("n") else "question"
    count = PER_WRITER[wid[0]]
    if kind == "note":
        what = (
            f"You write {count} clinical notes as {who} write them — {voice} — that someone "
            "then pastes into an outside AI chatbot to summarise or rewrite. Lengths from about "
            "300 to 1,500 characters (most near 800). Each note names people, dates and places "
            "as real notes do (patient, family, staff, the hospital, the town, phone numbers, "
            "record numbers), some many, a few none."
        )
    else:
        what = (
            f"You write {count} questions that {who} type into an AI chatbot — {voice}. From one "
            "line to a short paragraph. About half carry no identifier at all (then "
            '`"spans": []`); the rest carry one or several (names, dates, ages over 89, '
            "phones, emails, record or account numbers, hospitals, towns, addresses)."
        )
    return "\n".join(
        [
            f"# Your brief (writer {wid})",
            "",
            "You write labelled text that teaches and tests software that removes identifiers "
            "before clinical text leaves for an outside service. Other writers write their own "
            "sets from their own briefs; you never see theirs.",
            "",
            what,
            "",
            f"**Write to:** `/work/guard_text/writers/{wid}/items.jsonl` (ids `{wid}-001`, ...; "
            f'`"kind": "{kind}"`).',
            "",
            "## What to label",
            IDENTIFIERS,
            FORMAT.replace("KIND", kind),
            RULES,
        ]
    )


def main(out: Path) -> None:
    for wid, who, voice in NOTES + QUESTIONS:
        folder = out / wid
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "brief.md").write_text(brief(wid, who, voice) + "\n", encoding="utf-8")
        print(wid)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
