"""An experiment, measured and not shipped: tune the hybrid on longer cases made of N synthetic
ones, their gold regulations together (a synthetic case is written from one paragraph, a real one
tells a longer story and cites several sections).

It writes the composed cases as a case file; tune on it as on any other:

    python bench/experiments/compose.py --size 3 --out composed.csv --cases \\
        ../shared/data/cases/train_generate_cases_hipaa_applicability.csv
    pcheck retrieval-tune --cases composed.csv

Measured (issue 15): the fusion chosen on composed cases did no better on the real dev cases than
the one chosen on single synthetic cases, which ships.
"""

from __future__ import annotations

import argparse
import csv
import random
from collections.abc import Sequence
from pathlib import Path

from privacy_checklist.ingest.cases import Case, read_cases


def compose(cases: Sequence[Case], size: int, seed: int = 7) -> list[Case]:
    """Longer cases made of ``size`` synthetic ones each (every case used once, in a shuffled
    order), their narratives joined and their gold regulations together: a synthetic case is
    written from one paragraph, a real one tells a longer story and cites several sections, so
    a fusion chosen on single synthetic cases favours the one paragraph a story names. ``size``
    1 gives the cases as they are."""
    from dataclasses import replace

    if size <= 1:
        return list(cases)
    order = list(cases)
    random.Random(seed).shuffle(order)
    out = []
    for start in range(0, len(order) - size + 1, size):
        group = order[start : start + size]
        out.append(
            replace(
                group[0],
                case_id="+".join(c.case_id for c in group),
                text=" ".join(c.text.strip() for c in group),
                regulations=tuple(r for c in group for r in c.regulations),
                label="",
                expected=None,
            )
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", required=True, help="a synthetic case file with gold ids")
    parser.add_argument("--size", type=int, default=3, help="synthetic cases a composed case")
    parser.add_argument("--out", type=Path, required=True, help="the composed case file")
    args = parser.parse_args()
    cases = compose(read_cases(args.cases), args.size)
    with args.out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["case_id", "generate_background", "refer_id"])
        for case in cases:
            writer.writerow([case.case_id, case.text, "; ".join(case.regulations)])
    print(f"{len(cases)} composed cases of {args.size} written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
