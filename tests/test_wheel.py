"""The package as users get it: a wheel built from this checkout and installed apart from it.

The editable install reads every data file from the checkout, so a file left out of the
package data goes unnoticed until someone installs the wheel ("this knowledge base has no
nouns.txt.gz"). These tests build the wheel from a clean copy of the checkout (the files git
keeps, so no stale ``build/`` or ``*.egg-info`` leaks in), compare its listing with the package
folders, install it with ``pip --target`` into a temporary folder and run the demo's steps with
``python -S`` (no ``site``: the editable install's ``.pth`` finder is not loaded) from another
working folder, checking that the modules really come from the installed wheel.

They also hold the CLI's warnings to one line (``warning: <message>``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from privacy_checklist.app.cli import main
from privacy_checklist.app.samples import DEMO_CASE
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.retrieval.base import MAX_QUERY_CHARS
from tests.conftest import REPO

BUILD_TIMEOUT = 600
RUN_TIMEOUT = 600
# The wheel tests take about a minute (build, install, the demo from a fresh cache); they are
# marked slow but run by default, as in `make test` (pyproject's addopts selects no marker).


def _package_dirs() -> dict[str, str]:
    """``[tool.setuptools.package-dir]``: package name to folder, as pyproject.toml maps them."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["setuptools"]["package-dir"]


def _kept_files(*paths: str) -> list[str]:
    """Files under ``paths`` that git keeps (tracked or new, not ignored) and that exist now."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: cannot tell source files from generated ones")
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", *paths],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    return sorted({p for p in out.split("\0") if p and (REPO / p).is_file()})


def expected_wheel_files() -> set[str]:
    """Every file of every package folder, at the path it must have inside the wheel.

    Package folders map to ``privacy_checklist/<layer>`` (``kg/builtin/nouns.txt.gz`` ->
    ``privacy_checklist/kg/builtin/nouns.txt.gz``): a data file added to a folder later is
    expected too, so it cannot be forgotten in pyproject.toml's package data.
    """
    dirs = _package_dirs()
    top = {pkg: folder for pkg, folder in dirs.items() if "/" not in folder}
    expected: set[str] = set()
    for pkg, folder in top.items():
        for path in _kept_files(folder):
            expected.add(pkg.replace(".", "/") + "/" + path.removeprefix(folder + "/"))
    return expected


@dataclass(frozen=True)
class Installed:
    """The wheel, and the folder it was installed into with ``pip --target``."""

    wheel: Path
    target: Path
    work: Path
    env: dict[str, str]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    src, dist, target, work, home = (base / n for n in ("src", "dist", "target", "work", "home"))
    for path in _kept_files("."):
        (src / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / path, src / path)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    offline = ["--no-deps", "--no-index", "--quiet"]
    built = subprocess.run(
        [*pip, "wheel", *offline, "--no-build-isolation", "-w", str(dist), str(src)],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    assert built.returncode == 0, f"pip wheel failed:\n{built.stderr[-3000:]}"
    (wheel,) = dist.glob("privacy_checklist-*.whl")
    done = subprocess.run(
        [*pip, "install", *offline, "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"pip install --target failed:\n{done.stderr[-3000:]}"
    work.mkdir()
    home.mkdir()
    # a user's own caches, norm store and NLTK data stay out: a fresh home and cache
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "LANG": "C.UTF-8",
    }
    return Installed(wheel, target, work, env)


def run_installed(
    inst: Installed, *args: str, editable: bool = False
) -> subprocess.CompletedProcess[str]:
    """``pcheck ARGS`` from the installed wheel (``python -S``, PYTHONPATH=target:site-packages),
    or from the editable checkout with ``editable`` (the same environment, for comparison)."""
    purelib = sysconfig.get_paths()["purelib"]
    if editable:
        command, env = [sys.executable], dict(inst.env)
    else:
        command = [sys.executable, "-S"]
        env = {**inst.env, "PYTHONPATH": os.pathsep.join([str(inst.target), purelib])}
    return subprocess.run(
        [*command, *args],
        cwd=inst.work,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )


def pcheck(inst: Installed, *args: str, editable: bool = False) -> str:
    result = run_installed(inst, "-m", "privacy_checklist.app.cli", *args, editable=editable)
    where = "editable checkout" if editable else "installed wheel"
    assert result.returncode == 0, f"pcheck {' '.join(args)} ({where}) failed:\n{result.stderr}"
    assert "Traceback" not in result.stderr, result.stderr
    return result.stdout


@pytest.mark.slow
def test_wheel_holds_every_package_file(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as whl:
        names = [n for n in whl.namelist() if not n.endswith("/")]
        info = [n for n in names if ".dist-info/" in n]
        entry_points = next(
            whl.read(n).decode() for n in info if n.endswith(".dist-info/entry_points.txt")
        )
    shipped = {n for n in names if ".dist-info/" not in n}
    expected = expected_wheel_files()
    assert "privacy_checklist/kg/builtin/nouns.txt.gz" in expected
    missing, extra = sorted(expected - shipped), sorted(shipped - expected)
    assert not missing, (
        f"files missing from the wheel (add them to pyproject.toml's package data): {missing}"
    )
    assert not extra, f"files in the wheel that are not in the checkout: {extra}"
    assert "pcheck = privacy_checklist.app.cli:main" in entry_points


@pytest.mark.slow
def test_installed_wheel_is_what_runs(installed: Installed) -> None:
    probe = (
        "import privacy_checklist, privacy_checklist.kg, privacy_checklist.app.cli as cli; "
        "print(privacy_checklist.kg.__file__); print(cli.__file__); "
        "print(*privacy_checklist.__path__, sep='\\n')"
    )
    result = run_installed(installed, "-c", probe)
    assert result.returncode == 0, result.stderr
    paths = [Path(line) for line in result.stdout.splitlines()]
    assert len(paths) == 3, result.stdout
    for path in paths:
        assert path.is_relative_to(installed.target), f"{path} is not from the installed wheel"


@pytest.mark.slow
def test_installed_wheel_runs_the_demo(installed: Installed) -> None:
    out = pcheck(installed, "demo")
    for line in (
        "== The knowledge base",
        "== One paragraph: 164.502(a)(1)(i)",
        "the treating orthopedic surgeon: surgeon → doctor",
        "City of Plainfield police department: police department → law enforcement official",
        "a journalist: no HIPAA role",
        "surgery operative report: surgery → health record",
        "favorite movie: no health class",
        "== A sample case, checked offline",
        "Verdict: ",
        "Rests on: 164.",
    ):
        assert line in out, f"{line!r} not in the installed wheel's demo:\n{out}"
    # the data are the wheel's, and nothing differs from the checkout but that folder
    ours = installed.target / "privacy_checklist" / "kg" / "builtin"
    assert f"Knowledge base: {ours}\n" in out
    checkout = pcheck(installed, "demo", editable=True)
    assert f"Knowledge base: {REPO / 'kg' / 'builtin'}\n" in checkout
    assert out.replace(str(ours), "BUILTIN") == checkout.replace(
        str(REPO / "kg" / "builtin"), "BUILTIN"
    )


@pytest.mark.slow
def test_installed_wheel_checks_a_case(installed: Installed) -> None:
    """``offline-fast`` (the demo ran ``offline``): the same verdict as from the checkout."""
    out = pcheck(installed, "check", "--method", "offline-fast", DEMO_CASE)
    assert out.startswith("Verdict: ") and "Flow 1 (emailed)" in out, out
    assert out == pcheck(installed, "check", "--method", "offline-fast", DEMO_CASE, editable=True)


@pytest.mark.slow
def test_installed_wheel_resolves_phrases(installed: Installed) -> None:
    roles = pcheck(installed, "roles", "resolve", "the treating orthopedic surgeon")
    assert "covered entity" in roles, roles
    attributes = pcheck(installed, "attributes", "resolve", "surgery operative report")
    assert "protected health information" in attributes, attributes


@pytest.mark.slow
def test_installed_wheel_says_how_to_install_wordnet(installed: Installed, shared: Path) -> None:
    """The shipped knowledge base needs no WordNet (the demo ran without it: ``python -S``
    leaves the venv's share/nltk_data out of NLTK's path); building one does, and the error
    names the one command a wheel user can run (not ``make setup``, which needs a checkout)."""
    probe = "from privacy_checklist.ingest.wordnet import wordnet_ready; print(wordnet_ready())"
    ready = run_installed(installed, "-c", probe)
    assert ready.returncode == 0, ready.stderr
    if ready.stdout.strip() == "True":
        pytest.skip("WordNet is readable outside the venv here (a system-wide nltk_data)")
    out = installed.work / "kb"
    result = run_installed(
        installed,
        "-m",
        "privacy_checklist.app.cli",
        "ingest",
        "--source",
        str(shared / "hipaa"),
        "--ontologies",
        str(shared / "ontologies"),
        "--out",
        str(out),
    )
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "pcheck ingest: WordNet is not installed for NLTK; run: python -m "
        "privacy_checklist.ingest.wordnet --install (make setup does it in a checkout)"
    )
    assert not out.exists()


def test_cli_warning_is_one_line(tmp_path: Path) -> None:
    """A warning reaches a CLI user as ``warning: <message>``, not as a file, line number and
    Python source line."""
    query = "disclose records to the police " * (MAX_QUERY_CHARS // 31 + 1)
    result = subprocess.run(
        [sys.executable, "-m", "privacy_checklist.app.cli", "search", "--method", "bm25", "-"],
        input=query,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    expected = f"warning: query of {len(query):,} characters truncated to {MAX_QUERY_CHARS:,}"
    assert result.stderr.splitlines() == [expected], result.stderr


def test_main_leaves_warning_display_as_it_was(capsys: pytest.CaptureFixture[str]) -> None:
    """The one-line display is the CLI's: ``main`` restores Python's own when it returns, so a
    program or test calling ``main`` keeps its warnings as it had them."""
    before = (warnings.showwarning, warnings.formatwarning)
    assert main(["search", "--method", "bm25", "-k", "1", "x" * (MAX_QUERY_CHARS + 1)]) == 0
    err = capsys.readouterr().err
    assert f"warning: query of {MAX_QUERY_CHARS + 1:,} characters truncated" in err, err
    assert (warnings.showwarning, warnings.formatwarning) == before


@pytest.fixture
def kb_without_nouns(tmp_path: Path) -> Path:
    """A copy of the shipped knowledge base without ``nouns.txt.gz``, as the wheel had it."""
    copy = tmp_path / "kb"
    shutil.copytree(kbmod.builtin_path(), copy, ignore=shutil.ignore_patterns("index"))
    (copy / "nouns.txt.gz").unlink()
    return copy


def test_demo_on_a_broken_builtin_kb_fails(
    kb_without_nouns: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The wheel without nouns.txt.gz ran the demo's first steps and dropped the rest, exit 0."""
    monkeypatch.delenv("PCHECK_KB", raising=False)
    monkeypatch.setattr(kbmod, "builtin_path", lambda: kb_without_nouns)
    assert main(["demo"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"pcheck demo: the built-in knowledge base in {kb_without_nouns} lacks nouns.txt.gz "
        "(a broken install): reinstall privacy-checklist\n"
    )


def test_demo_says_which_steps_a_kb_cannot_run(
    kb_without_nouns: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--kb", str(kb_without_nouns), "demo"]) == 0
    out = capsys.readouterr().out
    assert "== One paragraph: 164.502(a)(1)(i)" in out
    lacks = "this knowledge base lacks nouns.txt.gz; pcheck ingest --ontologies DIR builds"
    assert f"== Everyday words to the law's terms: skipped, {lacks}" in out
    assert f"== A sample case: skipped, {lacks}" in out
    assert "Verdict" not in out
