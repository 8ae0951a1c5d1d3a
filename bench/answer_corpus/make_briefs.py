"""Each answers writer's own brief (issue 29): a family of models and prompts to imitate, and the
label format. Writers invent the cases and the answers; a person's reading is the label.

    python bench/answer_corpus/make_briefs.py OUT_DIR

A writer writes to ``OUT_DIR/WRITER/answers.jsonl``; ``bench/answer_corpus/collect.py`` takes a
finished set into ``bench/data/answer_corpus/``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
WRITERS = json.loads((HERE / "writers.json").read_text(encoding="utf-8"))["writers"]
#: answers per writer, by question
COUNTS = {"verdict": 40, "compliance": 12, "applicability": 12}

SCHEMA = """
## The format: one JSON object a line of `answers.jsonl` (UTF-8)

```json
{"id": "WID-001",
 "question": "verdict",
 "case": "the case the model was asked about, two to six sentences",
 "text": "the model's whole answer, exactly as the model would write it",
 "label": "permit",
 "committed": "the words of the answer where a reader finds the committed verdict, or \\"\\""}
```

- `question`: what the model was asked:
  - `verdict`: "Under the HIPAA Privacy Rule, is this flow permitted, prohibited, or is HIPAA not
    applicable?" Labels `permit`, `prohibit`, `not_applicable`.
  - `compliance`: "Does this case comply with or violate the HIPAA Privacy Rule?" Labels
    `complies`, `violates`.
  - `applicability`: "Does the HIPAA Privacy Rule apply to this case?" Labels `applies`,
    `does_not_apply`.
- `label`: what a careful person reading the answer (and knowing the question) takes as the
  answer's committed verdict — not what the right answer to the case is (write wrong answers
  too, about a third of them). `null` when the answer commits to no verdict: it refuses,
  hedges for real ("it is unclear whether", "would depend on whether", "may or may not"), gives
  the verdict only under a condition the case does not settle, contradicts itself without
  settling, answers another question, or is cut off before any conclusion. A conclusion
  followed by caveats about OTHER matters, or by restated facts, is still committed. "It
  appears that", "it can be inferred that", "likely permitted" are commitments.
- `committed`: the exact substring of `text` that carries the committed verdict (`""` when
  `label` is null).
"""

RULES = """
## Rules

- Write every answer yourself, one by one, imitating the family and style above as faithfully
  as you can: their openings, their lengths (from one line to several hundred words), their
  habits. Invent each case (two to six sentences about a disclosure of health information: who
  told what to whom, why), vary them widely (hospitals, clinics, insurers, employers, police,
  families, reporters, apps, schools), and write the answer to it. Do not write a program or a
  template that fills slots.
- Do not use, copy or paraphrase any recorded outputs of real models from other projects or
  datasets, nor HHS's published examples, nor court cases you know.
- Do not look at any other folder under /work/answer_corpus/writers/ and do not look at any
  code.
- About a quarter of your answers should commit to no verdict (label `null`), in the ways your
  style fails to commit; the rest commit, spread over the labels. Put the committed verdict in
  different places: first sentence, middle, labelled step, last line, header, after a caveat.
- Write the file in chunks as you go (append to `answers.jsonl`), so nothing is lost if you
  stop. When done, check with a short script that every line parses, ids are unique, `label`
  is one of the question's labels or null, and `committed` is a substring of `text`; fix what
  fails. Then reply with the number of answers written and anything you could not do.
"""


def main(out: Path) -> None:
    total = sum(COUNTS.values())
    for number, writer in enumerate(WRITERS, start=1):
        wid = f"a{number:02d}"
        lines = [
            f"# Your brief (writer {wid})",
            "",
            "You write labelled model answers: what a language model answers when asked about a "
            "case under the HIPAA Privacy Rule, and how a careful person reads that answer. The "
            "set teaches and tests software that reads models' answers. Other writers imitate "
            "other models from their own briefs; you never see theirs.",
            "",
            f"**You imitate:** {writer['family']}.",
            f"**Its style:** {writer['style']}.",
            f"**How many:** {total} answers: "
            + ", ".join(f"{n} to the `{q}` question" for q, n in COUNTS.items())
            + ".",
            f"**Write to:** `/work/answer_corpus/writers/{wid}/answers.jsonl` (ids `{wid}-001`, "
            "...).",
            SCHEMA,
            RULES,
        ]
        folder = out / wid
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "brief.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(WRITERS)} briefs in {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
