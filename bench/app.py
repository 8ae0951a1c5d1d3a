"""Benchmark: the Streamlit app as a person meets it, in Debian's Chromium through Playwright.

Each run starts ``pcheck app`` on a free loopback port (its own empty store) and measures: the
seconds until the server answers its health check; until the first page (the Overview, with
the knowledge base's figures) is drawn in the browser; a Regulation paragraph page; the first
offline check of a case on the Check page (it loads the embedding model) and a second check
once loaded. Targets: first page within 5 s of ``pcheck app``; an offline check within 2 s.

    python bench/app.py [--runs 3] [--json out.json]
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from common import run_main

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"]
CASE = (
    "Dr. Lee, a surgeon at Mercy Hospital, emailed the patient's medical records to a reporter "
    "at the local newspaper without the patient's authorization."
)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _check(page, url: str, text: str) -> float:
    page.goto(f"{url}/check")
    box = page.get_by_label("Case narrative")
    box.fill(text)
    box.press("Control+Enter")
    page.wait_for_timeout(300)
    start = time.perf_counter()
    page.get_by_role("button", name="Check", exact=True).click()
    page.get_by_text("Verdict:").first.wait_for()
    return time.perf_counter() - start


def once() -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    port, url = _port(), ""
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(120_000)
        start = time.perf_counter()
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "privacy_checklist.app.cli",
                "app",
                "--port",
                str(port),
                "--store",
                str(Path(tmp) / "norms.sqlite"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as answer:
                        if answer.read() == b"ok":
                            break
                except OSError:
                    time.sleep(0.05)
            health = time.perf_counter() - start
            page.goto(url)
            page.get_by_text("Regulation units").first.wait_for()
            first = time.perf_counter() - start
            t = time.perf_counter()
            page.goto(f"{url}/regulation?node=164.502(a)")
            page.get_by_text("may not use or disclose").first.wait_for()
            paragraph = time.perf_counter() - t
            first_check = _check(page, url, CASE)
            second_check = _check(page, url, CASE.replace("reporter", "police detective"))
        finally:
            server.terminate()
            server.wait(timeout=30)
            browser.close()
    return {
        "health_s": health,
        "first_page_s": first,
        "paragraph_page_s": paragraph,
        "first_check_s": first_check,
        "check_s": second_check,
    }


def main() -> int:
    args = run_main(__doc__, 3, "hipaa", lambda task, shared: None)
    if args is None:
        return 0
    if not os.path.exists(CHROMIUM):
        raise SystemExit("bench: Debian's chromium is needed (apt-get install chromium)")
    samples = [once() for _ in range(args.runs)]
    result = {key: statistics.median(s[key] for s in samples) for key in samples[0]}
    result["runs"] = args.runs
    print(
        f"pcheck app (median of {args.runs} runs): health {result['health_s']:.1f} s, first page "
        f"drawn {result['first_page_s']:.1f} s after launch (target 5 s); a paragraph page "
        f"{result['paragraph_page_s']:.2f} s; first offline check {result['first_check_s']:.1f} s "
        f"(loads the embedding model), then {result['check_s']:.2f} s (target 2 s)"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
