"""The command line stays in rooms: ``app/cli/`` is a package of small modules of short functions,
and the browser does not import it (the sample cases it shares with the demo are data)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app"
CLI = APP / "cli"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80
MODULES = sorted(CLI.glob("*.py"))
CLI_PACKAGE = "privacy_checklist.app.cli"


def test_the_cli_is_a_package() -> None:
    assert not (APP / "cli.py").exists(), "app/cli.py is back: its commands belong in app/cli/"
    assert (CLI / "__init__.py").is_file() and (CLI / "__main__.py").is_file()
    assert len(MODULES) > 5


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_modules_are_short(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{path.name}: {lines} lines (at most {MAX_MODULE_LINES})"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_functions_are_short(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    long = [
        f"{node.name} (line {node.lineno}): {node.end_lineno - node.lineno + 1} lines"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, f"{path.name}: functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_the_browser_does_not_import_the_cli() -> None:
    importers = []
    for path in [*sorted((APP / "ui").rglob("*.py")), APP / "streamlit_app.py", APP / "views.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            if any(n == CLI_PACKAGE or n.startswith(CLI_PACKAGE + ".") for n in names):
                importers.append(str(path.relative_to(APP)))
    assert not importers, f"the browser imports the command line: {importers}"
