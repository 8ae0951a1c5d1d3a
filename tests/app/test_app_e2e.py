"""End to end, as a person uses it: ``pcheck app`` on 127.0.0.1, driven by Debian's Chromium
through Playwright (never ``playwright install``).

One app process serves the whole module, on a store and run folder of its own. Each test opens a
page, does what a reader, an analyst, an editor or a researcher would do there, checks what the
page then says, that no traceback is shown, and saves a full-page screenshot under
``build/e2e/`` (``PCHECK_E2E_OUT`` elsewhere) for a person to look at. ``make test`` installs
Chromium (``apt-get install chromium``); without it the tests skip, except in CI.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from privacy_checklist.app.cli import main
from privacy_checklist.kg.store import NormStore
from tests.conftest import EDITORS, REPO

OUT = Path(os.environ.get("PCHECK_E2E_OUT") or REPO / "build" / "e2e")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NODE = "164.502(a)"
CASE = (
    "Dr. Lee, an orthopedic surgeon at Mercy Hospital, emailed the patient's operative report "
    "to a reporter at the local newspaper without the patient's authorization."
)
TIMEOUT = 90_000  # ms: the first check loads the embedding model


def _missing(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: make test installs it)")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def app(shared: Path, tmp_path_factory: pytest.TempPathFactory, users_file: Path) -> Iterator[dict]:
    if not Path(CHROMIUM).exists():
        _missing("Debian's chromium is not installed (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _missing("playwright is not installed (pip install playwright)")
    tmp = tmp_path_factory.mktemp("e2e")
    index, runs, store = tmp / "index", tmp / "runs", tmp / "norms.sqlite"
    cases = shared / "cases" / "val_generate_cases_hipaa_applicability.csv"
    argv = ["eval", "--method", "offline", "--cases", str(cases), "--limit", "4"]
    argv += ["--out", str(runs / "val-offline")]
    assert main([*argv, "--index", str(index)]) == 0
    port = _free_port()
    log = (tmp / "app.log").open("w")
    command = [sys.executable, "-m", "privacy_checklist.app.cli", "app", "--port", str(port)]
    command += ["--store", str(store), "--users", str(users_file), "--runs", str(runs)]
    process = subprocess.Popen(
        [*command, "--index", str(index)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                    if answer.read() == b"ok":
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"pcheck app did not start: {(tmp / 'app.log').read_text()[-2000:]}")
            time.sleep(0.3)
        yield {"url": url, "store": store, "log": tmp / "app.log"}
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


@pytest.fixture(scope="module")
def browser(app: dict) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, app: dict):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    yield page
    context.close()


def settle(page) -> None:
    """Wait until Streamlit has finished running the script (a moment first, so that a run an
    action has just asked for has started)."""
    page.wait_for_timeout(300)
    page.wait_for_load_state("networkidle")
    page.locator('[data-testid="stApp"]').wait_for()
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=TIMEOUT
    )


def shoot(page, name: str) -> Path:
    """Check the page shows no traceback; save a full-page screenshot."""
    settle(page)
    body = page.inner_text("body")
    assert "Traceback" not in body and not page.locator('[data-testid="stException"]').count()
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.png"
    # Streamlit scrolls inside its main panel, so a full-page shot would stop at the window:
    # make the window as tall as the content instead
    height = page.evaluate(
        "() => Math.max(document.body.scrollHeight, ...Array.from(document.querySelectorAll("
        '\'[data-testid="stMain"], [data-testid="stAppViewContainer"], section\'), '
        "e => e.scrollHeight))"
    )
    page.set_viewport_size({"width": 1280, "height": max(900, min(int(height) + 40, 12_000))})
    page.wait_for_timeout(500)
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000
    return path


def test_regulation_page(page, app: dict) -> None:
    page.goto(f"{app['url']}/regulation?node={NODE}")
    page.get_by_text("may not use or disclose protected health information").first.wait_for()
    body = page.inner_text("body")
    assert "164.502" in body and "Regulation" in body
    shoot(page, "1-regulation")
    page.goto(f"{app['url']}/regulation?node=999.999(z)")
    page.get_by_text("999.999(z)").first.wait_for()
    shoot(page, "1-regulation-unknown-id")


def test_graphs_page(page, app: dict) -> None:
    page.goto(f"{app['url']}/graphs")
    phrase = page.get_by_label("Phrase")
    phrase.fill("surgeon")
    phrase.press("Enter")
    page.get_by_text("health care provider").first.wait_for()
    shoot(page, "2-graphs")


def _check(page, app: dict, text: str) -> str:
    page.goto(f"{app['url']}/check")
    box = page.get_by_label("Case narrative")
    box.fill(text)
    box.press("Control+Enter")
    settle(page)
    page.get_by_role("button", name="Check", exact=True).click()
    settle(page)
    return page.inner_text("body")


def test_check_page(page, app: dict) -> None:
    _check(page, app, CASE)
    page.get_by_text("Verdict:").first.wait_for()
    page.get_by_text("The result as JSON").first.wait_for()  # the last part of the result
    settle(page)
    body = page.inner_text("body")
    verdict = body.split("Verdict:", 1)[1].strip().splitlines()[0].lower()
    assert "prohibit" in verdict and "permit" not in verdict  # to a newspaper, unauthorised
    assert "The flows in the case" in body, body[:3000]
    assert "Dr. Lee" in body, body[:3000]
    shoot(page, "3-check")


def test_check_page_bad_input(page, app: dict) -> None:
    _check(page, app, "   ")
    page.get_by_text("Write or paste a case narrative first").first.wait_for()  # a warning
    shoot(page, "3-check-empty")
    _check(page, app, (CASE + " ") * 400)  # 50,000 characters and more
    page.get_by_text("Verdict:").first.wait_for()
    page.get_by_text("The result as JSON").first.wait_for()
    shoot(page, "3-check-huge")


def test_norms_page_validate(page, app: dict) -> None:
    """Anonymous visitors read; an editor signs in (a wrong password refused), validates under
    the signed-in name, and signs out."""
    page.goto(f"{app['url']}/norms?node={NODE}")
    page.get_by_text("Sign in (in the sidebar) to edit").first.wait_for()
    assert page.locator('[data-testid="stForm"]').filter(has_text="Review").count() == 0
    sidebar = page.locator('[data-testid="stSidebar"]')

    def sign_in(password: str) -> None:
        sidebar.get_by_label("User name").fill("e2e-editor")
        sidebar.locator("input[type=password]").fill(password)
        sidebar.get_by_role("button", name="Sign in").click()

    sign_in("not-the-password")
    page.get_by_text("That user name and password do not match").first.wait_for()
    sign_in(EDITORS["e2e-editor"])
    page.get_by_text("Editing as").first.wait_for()
    review = page.locator('[data-testid="stForm"]').filter(has_text="Review")
    review.get_by_label("Comment").fill("read against the text: right")
    review.get_by_role("button", name="Validate").click()
    page.get_by_text("validated at version").first.wait_for()  # the page's confirmation
    settle(page)
    record = NormStore(app["store"]).get(NODE)
    assert record is not None and record.status == "validated"
    assert record.updated_by == "e2e-editor"
    shoot(page, "4-norms")
    sidebar.get_by_role("button", name="Sign out").click()
    page.get_by_text("Sign in (in the sidebar) to edit").first.wait_for()
    settle(page)
    assert page.locator('[data-testid="stForm"]').filter(has_text="Review").count() == 0
    page.get_by_text("History", exact=True).first.click()
    # the history's table (a grid drawn on a canvas, its cells kept for screen readers)
    page.get_by_text("read against the text: right").first.wait_for(state="attached")
    page.locator("[role=gridcell]", has_text="e2e-editor").first.wait_for(state="attached")
    body = page.inner_text("body")
    assert "validated" in body and "Editing as" not in body


def test_evaluation_page(page, app: dict) -> None:
    page.goto(f"{app['url']}/evaluation")
    page.get_by_text("All methods of all runs").first.wait_for()
    page.get_by_text("Macro-F1", exact=True).first.wait_for()
    page.get_by_text("Error browser").first.wait_for()
    assert "offline" in page.inner_text("body")
    shoot(page, "5-evaluation")


def test_guard_page(page, app: dict) -> None:
    """Paste a draft to an outside chatbot, say who it goes to, press Guard, read the rewrite."""
    page.goto(f"{app['url']}/guard")
    page.get_by_label("Draft message").fill(
        "Write a letter of medical necessity for my patient Dorian Vale, DOB 07/30/1958, "
        "MRN 00482913, who needs a CPAP machine for severe obstructive sleep apnea."
    )
    page.get_by_label("To (recipient)").fill("ChatGPT")
    page.get_by_label("Purpose").fill("help me write a letter")
    page.get_by_label("Purpose").press("Enter")
    settle(page)
    page.get_by_role("button", name="Guard", exact=True).click()
    page.get_by_text("Not as written").first.wait_for()
    page.get_by_text("Re-checked").first.wait_for()
    settle(page)
    rewrite = page.locator("textarea").nth(1).input_value()
    assert "Dorian Vale" not in rewrite and "00482913" not in rewrite and "1958" not in rewrite
    assert "obstructive sleep apnea" in rewrite and "letter of medical necessity" in rewrite
    body = page.inner_text("body")
    assert "a prompt to an outside model" in body
    shoot(page, "6-guard")
