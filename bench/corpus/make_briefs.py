"""Each corpus writer's own brief: a register, a length band, and its share of the catalogue
(permissions as twin pairs met / one condition broken, prohibitions triggered / lifted, the
not-covered exclusions and their covered twins), with the label format.

    python bench/corpus/make_briefs.py OUT_DIR

Deterministic: the same catalogue gives the same briefs.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from privacy_checklist.kg import kb as kbmod
from privacy_checklist.reasoning.checklist.reasoner import catalogue_of

#: the writers (register, voice, length band, short or long) and the exclusions
PROFILES = json.loads((Path(__file__).with_name("writers.json")).read_text(encoding="utf-8"))
WRITERS = [(w["register"], w["voice"], w["length"], w["size"]) for w in PROFILES["writers"]]
#: writers added later: (profile, their pairs of permissions, prohibitions, exclusions)
EXTRA = [
    ((w["register"], w["voice"], w["length"], w["size"]), tuple(w["pairs"]), w.get("exclusions"))
    for w in PROFILES.get("extra_writers", [])
]
EXCLUSIONS = [(x["what"], x["how"]) for x in PROFILES["exclusions"]]
#: exclusions added after the first briefs (only writers marked "late" draw them)
LATE_EXCLUSIONS = [(x["what"], x["how"]) for x in PROFILES.get("late_exclusions", [])]
#: of a late writer's exclusions, this share is of the late kinds
LATE_SHARE = 0.7

SCHEMA = """
## The format of each line of `narratives.jsonl` (one JSON object a line, UTF-8)

```json
{"id": "WID-001",
 "text": "the narrative, exactly as written",
 "verdict": "permit" | "prohibit" | "not_applicable",
 "paragraphs": ["164.512(f)(1)(ii)(A)"],
 "assignment": "P07 met",
 "twin": "WID-002",
 "changed": "court_order",
 "sentences": 3,
 "flows": [
   {"deciding": true,
    "sender": {"words": "Dr. Patel", "role": "health care provider"},
    "recipient": {"words": "a detective", "role": "law enforcement official"},
    "subject": {"words": "Maria Gomez", "role": "individual"},
    "information": {"words": "her toxicology results", "type": "protected health information"},
    "purpose": {"words": "to identify a suspect", "kind": "law enforcement"}}
 ],
 "conditions": [
   {"kind": "court_order", "value": true, "words": "a subpoena signed by Judge Ortiz"},
   {"kind": "minimum_necessary", "value": null, "words": ""}
 ]}
```

- `id`: your writer id (WID, given above) and a running number.
- `verdict`: what HIPAA's Privacy Rule says of the flow the narrative turns on: `permit`
  (permitted), `prohibit` (a use or disclosure HIPAA covers and does not permit, or that a
  prohibition forbids), `not_applicable` (HIPAA does not cover it).
- `paragraphs`: the paragraph(s) the verdict rests on: the permission met; for a prohibited flow
  the prohibition it falls under, or `164.502(a)` (the general rule) and the permission whose
  condition is broken; for `not_applicable`, `[]` or the definition that excludes it
  (`160.103`).
- `assignment`: which item of your list it fulfils (e.g. `P07 met`, `P07 broken`, `X3 excluded`,
  `X3 covered`, `B2 triggered`, `B2 lifted`).
- `twin`: the id of its twin (the narrative that differs from it in the deciding fact); `changed`:
  the condition kind (or, for an exclusion, a short phrase) that differs between the twins.
- `sentences`: how many sentences the text has.
- `flows`: every flow of health information the narrative describes (who gave what to whom),
  with `deciding: true` on the one the verdict is about (exactly one). Each part's `words` must be
  an exact substring of `text` (copy it), or `""` when the narrative does not name it; `role` is
  one of the role names listed above (or `no HIPAA role` for a party HIPAA names no role for,
  like a reporter, a landlord, a neighbour); `type` one of: protected health information,
  psychotherapy notes, genetic information, de-identified information, limited data set,
  summary health information, employment records, education records, not health information;
  `purpose.kind` one of: treatment, payment, health care operations, public health, health
  oversight, judicial proceeding, law enforcement, research, marketing, sale, personal, other,
  or `""` when not stated.
- `conditions`: for the deciding flow, EVERY condition kind of the paragraph(s) your assignment
  names (and any other kind from the list above that the narrative states), each with `value`
  `true` (the narrative states it holds), `false` (it states it does not hold) or `null` (it does
  not say), and `words`: the exact substring of `text` that states it (`""` when null).
  Label what the text says, not what you intended.
"""

RULES = """
## Rules

- Write every narrative yourself, one by one, from the regulation's meaning and your own
  imagination. Do not write a program or a template that fills in slots: every narrative must
  be its own story, with its own people, places, organisations and wording. Do not reuse a
  sentence across narratives except between twins.
- Do not copy or paraphrase HHS's published examples, FAQs or guidance, nor any court case or
  enforcement case you know. Invent the people, places and organisations.
- Do not look at any other folder under /work/corpus/writers/ and do not look at any code. You
  may read the regulation text at /work/shared/data/hipaa/ if you want the exact words of a
  paragraph.
- Stay in your register and length band for every narrative, twins included. Vary how the facts
  are said: sometimes outright ("she signed an authorization"), sometimes in your register's own
  way ("pt consent on file", "she'd signed the form the week before"), sometimes implied by a
  document or an event; vary where in the text the deciding fact is, and how many other people
  and events are around it. Don't use the condition's own label words every time.
- Twins: write the first narrative, then its twin changing only what must change for the
  deciding fact to go the other way (and the verdict with it); everything else stays the same.
- The verdict must follow from the text for a careful reader who knows HIPAA. If you are unsure
  a twin's verdict really changes (another permission might apply), change the story until it
  does.
- Write the file in chunks as you go (append to `narratives.jsonl`), so nothing is lost if you
  stop. When done, check with a short script that every line parses, every `words` is a
  substring of its `text`, ids are unique, and every twin exists; fix what fails. Then reply
  with the number of narratives written and anything you could not do.
"""


def _exclusions(rng: random.Random, n: int, late: bool) -> list[tuple[str, str]]:
    """``n`` exclusions for a later writer: more than there are kinds repeats each kind, told
    another way; a late writer takes :data:`LATE_SHARE` of them from the late kinds, each in
    turn, and the rest from the first ones."""
    first = n - round(n * LATE_SHARE) if late and LATE_EXCLUSIONS else n
    out = rng.sample(EXCLUSIONS * (1 + (first - 1) // len(EXCLUSIONS)), first) if first else []
    if first < n:
        out += [LATE_EXCLUSIONS[i % len(LATE_EXCLUSIONS)] for i in range(n - first)]
        rng.shuffle(out)
    return out


def main(out: Path) -> None:
    kb = kbmod.load(None)
    catalogue = catalogue_of(kb)
    permissions = [r for r in catalogue.readings.values() if r.norm_type == "permit"]
    prohibitions = [
        r
        for r in catalogue.readings.values()
        if r.norm_type == "prohibit" and r.node != "164.502(a)"
    ]
    rng = random.Random(27)
    n = len(WRITERS)
    out.mkdir(parents=True, exist_ok=True)
    # each writer a share of the permissions, prohibitions and exclusions (round robin over
    # shuffled orders, so every item goes to several writers)
    perm_order = [p for _ in range(12) for p in rng.sample(permissions, len(permissions))]
    prohib_order = [p for _ in range(30) for p in rng.sample(prohibitions, len(prohibitions))]
    excl_order = [e for _ in range(40) for e in rng.sample(EXCLUSIONS, len(EXCLUSIONS))]
    kinds_used: set[str] = set()
    shares = []
    for number, (register, voice, band, size) in enumerate(WRITERS, start=1):
        pairs, bans, excl = (40, 10, 12) if size == "short" else (28, 8, 10)
        shares.append(
            (
                (register, voice, band, size),
                perm_order[(number - 1) :: n][:pairs],
                prohib_order[(number - 1) :: n][:bans],
                excl_order[(number - 1) :: n][:excl],
            )
        )
    for offset, (profile, (pairs, bans, excl), pool) in enumerate(EXTRA):
        extra = random.Random(270 + offset)  # drawn apart: the first briefs stay as they were
        shares.append(
            (
                profile,
                extra.sample(permissions, pairs),
                extra.sample(prohibitions, bans),
                _exclusions(extra, excl, late=pool == "late"),
            )
        )
    for number, ((register, voice, band, _size), mine_p, mine_b, mine_x) in enumerate(
        shares, start=1
    ):
        wid = f"w{number:02d}"
        pairs, bans, excl = len(mine_p), len(mine_b), len(mine_x)
        lines = [
            f"# Your brief (writer {wid})",
            "",
            "You write labelled narratives about the flow of health information for a corpus that "
            "teaches and tests software reading HIPAA cases. Other writers write their own sets "
            "from their own briefs; you never see theirs.",
            "",
            f"**Your register:** {register} — {voice}.",
            f"**Length:** {band} for every narrative (twins included).",
            f"**How many:** {2 * (pairs + bans + excl)} narratives: the {pairs + bans + excl} "
            "items below, each as a pair of twins.",
            f"**Write to:** `/work/corpus/writers/{wid}/narratives.jsonl` (ids `{wid}-001`, ...).",
            "",
            "## Permissions (P): for each, a pair of twins",
            "",
            "- `met`: the paragraph's permission applies: every required condition holds (and one "
            "condition of each one-of group), no exception; verdict `permit`.",
            "- `broken`: the same story with ONE of its conditions (your choice; vary which) "
            "stated not to hold, or (for some) simply not stated where the law asks that it be "
            "shown, so that the flow is prohibited; verdict `prohibit`.",
            "",
        ]
        for i, reading in enumerate(mine_p, start=1):
            lines.append(f"**P{i:02d}. {reading.node}** — {reading.summary}")
            lines.append(
                f"  Sender: {', '.join(reading.sender_roles)}; recipient: "
                f"{', '.join(reading.recipient_roles)}; information: {reading.information}."
            )
            seen: set[str] = set()
            for condition in reading.conditions:
                if condition.kind in seen:
                    continue
                seen.add(condition.kind)
                kinds_used.add(condition.kind)
                mode = {
                    "required": "required",
                    "one_of": f"one of group '{condition.group}'",
                    "exception": "an exception (if it holds, the permission does not apply)",
                }.get(condition.mode, condition.mode)
                question = catalogue.question(condition.kind)
                lines.append(f"  - `{condition.kind}` ({mode}): {question}")
            lines.append("")
        lines += [
            "## Prohibitions (B): for each, a pair of twins",
            "",
            "- `triggered`: the prohibition's conditions hold and none of its exceptions does; "
            "verdict `prohibit`.",
            "- `lifted`: the same story where one exception holds (or a trigger is absent) so that "
            "the flow is permitted; verdict `permit` (name the paragraph that permits it).",
            "",
        ]
        for i, reading in enumerate(mine_b, start=1):
            lines.append(f"**B{i:02d}. {reading.node}** — {reading.summary}")
            said: set[str] = set()
            for condition in reading.conditions:
                if condition.kind in said:
                    continue
                said.add(condition.kind)
                kinds_used.add(condition.kind)
                lines.append(
                    f"  - `{condition.kind}` ({condition.mode}): "
                    f"{catalogue.question(condition.kind)}"
                )
            lines.append("")
        lines += [
            "## Not covered (X): for each, a pair of twins",
            "",
            "- `excluded`: HIPAA does not cover the flow; verdict `not_applicable`.",
            "- `covered`: the twin where HIPAA covers it (verdict as the brief says).",
            "",
        ]
        for i, (what, how) in enumerate(mine_x, start=1):
            lines.append(f"**X{i:02d}. {what}** — {how}.")
        lines.append("")
        (out / wid).mkdir(parents=True, exist_ok=True)
        (out / wid / "brief.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # the shared vocabulary: roles and every condition kind's question
    roles = json.loads(Path("ontologies/roles.json").read_text(encoding="utf-8"))["roles"]
    vocab = [
        "## Vocabulary",
        "",
        "**Role names** (for `role`): " + ", ".join(r["name"] for r in roles) + ", no HIPAA role.",
        "",
        "**Condition kinds** (for `conditions[].kind`; the question each answers):",
        "",
    ]
    for kind_id, kind in catalogue.kinds.items():
        vocab.append(f"- `{kind_id}` ({kind.label}): {kind.question}")
    for number in range(1, len(shares) + 1):
        wid = f"w{number:02d}"
        brief = out / wid / "brief.md"
        text = brief.read_text(encoding="utf-8")
        brief.write_text(
            text + "\n".join(vocab) + "\n" + SCHEMA.replace("WID", wid) + RULES,
            encoding="utf-8",
        )
    print(f"{len(shares)} briefs in {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
