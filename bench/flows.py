"""Measurement: the offline flow extractor against the gold CI tuples of the synthetic cases.

For each case, the main flow's sender, recipient, subject and information type are compared
with the gold "Sender Role", "Recipient Role", "About Role" and "Type" on resolved graph nodes
(cases whose gold phrase reaches no node are not counted).

    python bench/flows.py [--limit 150] [--shared ../shared/data]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from common import REPO


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--limit", type=int, default=150, help="train cases to read (default 150)")
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    args = parser.parse_args()
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.flows import FlowExtractor, agreement
    from privacy_checklist.retrieval.evaluate import read_cases

    kb = kbmod.load()
    extractor = FlowExtractor(kb.role_resolver(False), kb.attribute_resolver(False))
    for name, limit in (("val", None), ("train", args.limit)):
        cases = read_cases(args.shared / "cases" / f"{name}_generate_cases_hipaa_applicability.csv")
        cases = cases[:limit] if limit else cases
        start = time.perf_counter()
        result = agreement(extractor, cases)
        seconds = time.perf_counter() - start
        print(
            f"synthetic {name} ({len(cases)} cases, {seconds / len(cases) * 1000:.0f} ms a case):"
        )
        print("  " + json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
