"""Take finished writers' sets into the corpus: each writer's ``narratives.jsonl`` checked
(ingest/corpus.py) and copied to ``bench/data/corpus/WRITER.jsonl``, its unusable lines listed.

    python bench/corpus/collect.py /work/corpus/writers w01 w02 ...

A writer's set is taken whole or not at all; one already in the corpus is left as it is unless
``--replace`` (a set is read once, as written, before anything changes on it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from privacy_checklist.ingest.corpus import read_corpus

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="the writers' folders (WRITER/narratives.jsonl)")
    parser.add_argument("writers", nargs="+")
    parser.add_argument("--replace", action="store_true")
    args = parser.parse_args()
    CORPUS.mkdir(parents=True, exist_ok=True)
    for writer in args.writers:
        source = args.source / writer / "narratives.jsonl"
        target = CORPUS / f"{writer}.jsonl"
        if target.exists() and not args.replace:
            print(f"{writer}: already in the corpus (--replace to take it again)")
            continue
        corpus = read_corpus([source])
        kept = {n.line for n in corpus.narratives}
        lines = source.read_text(encoding="utf-8").splitlines()
        out = [line for number, line in enumerate(lines, start=1) if number in kept]
        tmp = target.with_suffix(".tmp")
        tmp.write_text("\n".join(out) + "\n", encoding="utf-8")
        tmp.replace(target)
        verdicts = {
            v: sum(n.verdict == v for n in corpus.narratives)
            for v in ("permit", "prohibit", "not_applicable")
        }
        print(f"{writer}: {len(out)} narratives {verdicts}; {len(corpus.skipped)} lines skipped")
        for _, row in corpus.skipped:
            print(f"  {row}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
