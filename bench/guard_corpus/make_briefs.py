"""Each drafts writer's own brief (issue 28): a sender and a voice, a share of the purposes the
law names (``purposes.json``), and the span-by-span label format.

    python bench/guard_corpus/make_briefs.py OUT_DIR

Deterministic: the same files give the same briefs. A writer writes to
``OUT_DIR/WRITER/drafts.jsonl``; ``bench/guard_corpus/collect.py`` takes a finished set into
``bench/data/guard_corpus/``.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PURPOSES = json.loads((HERE / "purposes.json").read_text(encoding="utf-8"))["purposes"]
WRITERS = json.loads((HERE / "writers.json").read_text(encoding="utf-8"))["writers"]
#: purposes per writer and drafts per purpose
SHARE, PER_PURPOSE = 14, 7

SCHEMA = """
## The format: one JSON object a line of `drafts.jsonl` (UTF-8)

```json
{"id": "WID-001",
 "purpose": "law_enforcement_identification",
 "from": "ED charge nurse, St. Brendan's Hospital",
 "to": "Det. Ruiz, Hartwell PD (asking if a man with a hand laceration came in last night)",
 "purpose_words": "police asking to identify a suspect",
 "text": "the draft exactly as the sender would send it",
 "verdict": "permit",
 "spans": [
   {"text": "Marcus Bell", "occurrence": 1, "kind": "identifier", "type": "NAME", "needed": true},
   {"text": "HIV positive", "occurrence": 1, "kind": "health", "type": "HIV_STI", "needed": false}
 ],
 "note": "one or two sentences: why each needed span is needed and why the others are not"}
```

- `purpose`: one key of the purpose list below (the law's category this draft is for).
- `from`, `to`: the sender and the recipient as the sender would describe them in a "to" field
  (with what the recipient asked for, or holds, in brackets when it matters: an authorization
  and its scope, a court order, a subpoena with or without assurances, a business associate
  agreement or none).
- `purpose_words`: what the sender would type in a box asking "what is this for?" (a few
  words, their own words, not the key).
- `text`: the draft. Write it as the sender really writes: an email, a portal message, a text, a
  fax cover, a letter, a ticket, a prompt to a chatbot, a reply to a review.
- `verdict`: whether sending the draft **as written** is permitted: `permit` (a permission of
  the law covers it and everything in it is what the purpose needs) or `prohibit` (no
  permission covers the disclosure, or it carries something the purpose does not need: minimum
  necessary, 164.502(b)). A draft that gives no PHI at all is `permit` with no spans.
- `spans`: EVERY piece of protected health information in the text, each one labelled:
  - `text`: copied exactly from `text`; `occurrence`: which occurrence of that exact string it
    is (1 for the first), so the span can be found.
  - `kind`: `identifier` (one of the 18 identifiers of 164.514(b)(2): names of the patient,
    relatives, employers or household members; geographic units smaller than a state (street,
    city, ZIP); dates (except year) tied to the person: birth, admission, discharge, death,
    service; ages over 89; phone; fax; email; SSN; medical record number; health plan number;
    account number; certificate or licence number; vehicle identifiers and plates; device
    identifiers and serial numbers; URLs; IP addresses; biometric identifiers; photos; any other
    unique number or code) or `health` (what it says about the person's health, care or its
    payment: a diagnosis, a procedure, a medication, a test result, and also the sensitive
    context around it).
  - `type`: for identifiers NAME, ADDRESS, DATE, AGE_OVER_89, PHONE, FAX, EMAIL, SSN, MRN,
    HEALTH_PLAN_NUMBER, ACCOUNT, LICENSE, VEHICLE, DEVICE, URL, IP, BIOMETRIC, PHOTO, OTHER_ID;
    for health CONDITION, PROCEDURE, MEDICATION, TEST_RESULT, MENTAL_HEALTH, SUBSTANCE_USE,
    HIV_STI, REPRODUCTIVE, GENETIC, SOCIAL (family, legal, housing, money, relationship
    troubles), OTHER_HEALTH.
  - `needed`: `true` if the purpose needs this span (it must stay for the message to do its
    job under the law), `false` if it should come out before sending. A prohibited disclosure
    (no permission at all) needs nothing: every span `false`.
  - Do not label the sender's own staff names or the recipient's name as PHI; do label the
    patient's and their family's. A name of the treating physician is PHI only if it tells
    something about the patient (it usually does not: do not label it).
- `note`: your reason, briefly.
"""

RULES = """
## Rules

- Write every draft yourself, one by one, from the law's meaning and your own imagination. Do
  not write a program or template that fills slots: each draft is its own situation with its own
  people, places, numbers and wording. Invent every person, place, organisation and number
  (use obviously fake numbers such as SSNs beginning 9xx or phone numbers 555-01xx).
- Do not copy or paraphrase HHS's published examples, FAQs or guidance, any court case, or any
  public clinical or de-identification dataset.
- Do not look at any other folder under /work/guard_corpus/writers/ and do not look at any
  code. You may read the regulation text at /work/shared/data/hipaa/ for a paragraph's exact
  words.
- Stay in your sender's voice. Lengths from one line to about fifteen sentences; vary them.
- Make the drafts realistic about what people put in: over half of them should carry something
  the purpose does not need (an extra diagnosis, the patient's history, a social security
  number, a family member's troubles, a mental health or substance use detail, a genetic
  result, an address or birth date nobody asked for), mixed with what it does need; some carry
  only what is needed; a few (about one in ten) carry no PHI at all (a policy question, a
  scheduling question about no one in particular). About one in five should be a disclosure no
  permission covers for its recipient (then `prohibit`, every span `false`). Vary where things
  sit in the text; sensitive details may be said in passing, in shorthand or indirectly ("she's
  back on the methadone", "the BRCA thing came back positive").
- Label what the text says. Every PHI span labelled, none missed: check each draft again after
  writing it.
- Write the file in chunks as you go (append to `drafts.jsonl`), so nothing is lost if you stop.
  When done, check with a short script that every line parses, every span's `text` occurs in
  `text` at least `occurrence` times, ids are unique, `purpose` is a key of the list, and
  `verdict` is permit or prohibit; fix what fails. Then reply with the number of drafts written
  and anything you could not do.
"""


def main(out: Path) -> None:
    keys = list(PURPOSES)
    rng = random.Random(28)
    order = [k for _ in range(12) for k in rng.sample(keys, len(keys))]
    n = len(WRITERS)
    for number, writer in enumerate(WRITERS, start=1):
        wid = f"d{number:02d}"
        mine: list[str] = []
        for key in order[number - 1 :: n]:
            if key not in mine:
                mine.append(key)
            if len(mine) == SHARE:
                break
        lines = [
            f"# Your brief (writer {wid})",
            "",
            "You write labelled drafts: messages that staff of health care organisations are "
            "about to send, each for a purpose the HIPAA Privacy Rule names, with every piece "
            "of protected health information in them labelled as needed or not for that "
            "purpose. The set teaches and tests software that checks a message before it is "
            "sent. Other writers write their own sets from their own briefs; you never see "
            "theirs.",
            "",
            f"**You write as:** {writer['sender']} — {writer['voice']}.",
            f"**How many:** {SHARE * PER_PURPOSE} drafts: {PER_PURPOSE} for each of the "
            f"{SHARE} purposes below (vary recipients, situations, and which are permitted).",
            f"**Write to:** `/work/guard_corpus/writers/{wid}/drafts.jsonl` (ids `{wid}-001`, "
            "...).",
            "",
            "## Your purposes",
            "",
        ]
        for key in mine:
            paragraph, what = PURPOSES[key]
            lines.append(f"- `{key}` ({paragraph}): {what}.")
        lines += [
            "",
            "## The whole purpose list (for the `purpose` field; use your own above)",
            "",
            ", ".join(f"`{k}`" for k in keys),
            SCHEMA,
            RULES,
        ]
        folder = out / wid
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "brief.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"{wid}: {', '.join(mine)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
