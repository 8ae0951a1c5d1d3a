"""The documentation: its results page is what ``bench/results.py render`` makes of the kept
command outputs (no figure typed by hand), it builds with mkdocs-material, and the README stays
short enough to read in ten minutes."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

ROOT = REPO


def results_module():
    spec = importlib.util.spec_from_file_location("results", ROOT / "bench" / "results.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_results_page_is_made_from_the_kept_outputs() -> None:
    results = results_module()
    kept = sorted((ROOT / "bench" / "results").glob("*.json"))
    expected = set(results.measurements()) | set(results.FROZEN)
    assert {p.stem for p in kept} == expected, "run: python bench/results.py run"
    for name in results.FROZEN:  # measured once, at a commit anyone can check out
        assert results.json.loads((ROOT / "bench" / "results" / f"{name}.json").read_text())[
            "commit"
        ]
    page = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    assert page == results.render(), "render again: python bench/results.py render"
    for path in kept:  # every output says the command that made it
        command = results.json.loads(path.read_text(encoding="utf-8"))["command"]
        assert command.startswith(("pcheck ", "python bench/")), (path.name, command)


def test_the_documentation_builds(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "results" / "index.html").is_file()


def test_the_readme_is_short() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(readme) <= 150
    assert "make demo" in "\n".join(readme) and "make test" in "\n".join(readme)
