"""Measurement: the flow extractors against the gold CI tuples of the synthetic cases.

For each case, the main flow's sender, recipient, subject and information type are compared
with the gold "Sender Role", "Recipient Role", "About Role" and "Type" on resolved graph nodes
(cases whose gold phrase reaches no node are not counted). The offline extractor is always
measured; with an LLM (--llm-base-url and --llm-model, or PCHECK_LLM_*; or --llm-backend local)
the LLM extractor (reasoning/reading/llm_flows.py, prompt ci_extract.v1.txt) is measured the
same way, its requests sent at once (--concurrency) and cached on disk; cases whose request or
answer failed count as disagreeing and are listed as failures.

    python bench/flows.py [--limit 150] [--shared ../shared/data]
    python bench/flows.py --llm-base-url URL --llm-model NAME [--limit 50]
    python bench/flows.py --llm-backend local [--llm-model smollm2] --val-limit 5 --limit 5
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
    parser.add_argument(
        "--val-limit", type=int, help="val cases to read (default all 40; a slow local model)"
    )
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument(
        "--llm-backend",
        choices=["openai", "local"],
        help="also measure the LLM extractor: openai (any OpenAI-compatible endpoint) or local",
    )
    parser.add_argument("--llm-base-url", metavar="URL", help="($PCHECK_LLM_BASE_URL)")
    parser.add_argument("--llm-model", metavar="NAME", help="($PCHECK_LLM_MODEL)")
    parser.add_argument("--llm-timeout", type=float, default=60.0, metavar="S")
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    from privacy_checklist.ingest.cases import read_cases
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.reading.flows import FlowExtractor, agreement

    kb = kbmod.load()
    extractors = {
        "offline": FlowExtractor(
            kb.role_resolver(embeddings=False), kb.attribute_resolver(embeddings=False)
        )
    }
    if args.llm_backend or args.llm_base_url or args.llm_model:
        from privacy_checklist.reasoning.llm.client import LLMError, build_client
        from privacy_checklist.reasoning.reading.llm_flows import LLMFlowExtractor

        try:
            client = build_client(
                args.llm_backend or "openai",
                args.llm_base_url,
                args.llm_model,
                timeout=args.llm_timeout,
                concurrency=args.concurrency,
            )
        except LLMError as exc:
            parser.error(str(exc))
        extractors[client.name] = LLMFlowExtractor(
            client, kb.role_resolver(embeddings=False), kb.attribute_resolver(embeddings=False)
        )
    for name, limit in (("val", args.val_limit), ("train", args.limit)):
        cases = read_cases(args.shared / "cases" / f"{name}_generate_cases_hipaa_applicability.csv")
        cases = cases[:limit] if limit else cases
        for label, extractor in extractors.items():
            start = time.perf_counter()
            if hasattr(extractor, "prefetch"):
                extractor.prefetch([c.text for c in cases])
            result = agreement(extractor, cases)
            seconds = time.perf_counter() - start
            print(
                f"{label} on synthetic {name} ({len(cases)} cases, "
                f"{seconds / len(cases) * 1000:.0f} ms a case):"
            )
            print("  " + json.dumps(result))
            failures = getattr(extractor, "failures", [])
            if failures:
                print(f"  {len(failures)} failed: " + "; ".join(r for _, r in failures[:5]))
                failures.clear()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
