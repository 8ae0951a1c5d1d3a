"""Take finished writers' sets into the corpus: each writer's ``narratives.jsonl`` checked
(ingest/corpus.py) and copied to ``bench/data/corpus/WRITER.jsonl``, its unusable lines listed.

    python bench/corpus/collect.py /work/corpus/writers w01 w02 ...

A writer's set is taken whole or not at all; one already in the corpus is left as it is unless
``--replace`` (a set is read once, as written, before anything changes on it).
"""

from __future__ import annotations

import sys
from pathlib import Path

from privacy_checklist.ingest.corpus import read_corpus

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
sys.path.insert(0, str(CORPUS.parents[1]))

from common import collect_sets  # noqa: E402


def take(writer: str, source: Path) -> tuple[list[str], list[str]]:
    """A writer's narratives as ``ingest/corpus.py`` reads them: the usable lines, and the
    others with their reasons."""
    corpus = read_corpus([source])
    kept = {n.line for n in corpus.narratives}
    lines = source.read_text(encoding="utf-8").splitlines()
    verdicts = {
        v: sum(n.verdict == v for n in corpus.narratives)
        for v in ("permit", "prohibit", "not_applicable")
    }
    print(f"{writer}: {verdicts}")
    out = [line for number, line in enumerate(lines, start=1) if number in kept]
    return out, [str(row) for _, row in corpus.skipped]


if __name__ == "__main__":
    raise SystemExit(collect_sets(__doc__.split("\n\n")[0], "narratives.jsonl", CORPUS, take))
