"""Dependencies a user can choose: the core runs without the extras, each missing extra says
what to install in one line, and the package leaves the process environment alone.

"Without" is real: a child process whose import system refuses the extras' modules (a
``sys.meta_path`` finder raising ``ModuleNotFoundError`` for sentence-transformers, torch,
transformers, Chroma, Streamlit, OpenAI, scikit-learn ...) runs the commands through
``pcheck``'s ``main``, so nothing of this test process (whose imports hold them all) leaks in.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from privacy_checklist.kg.embeddings import LOAD_ENV, model_env
from privacy_checklist.kg.extras import EXTRAS, MissingExtra, install, require
from tests.conftest import REPO

LAYERS = ("ingest", "kg", "retrieval", "reasoning", "app")
#: Modules not imported by the import tests: the browser's pages and script run inside
#: Streamlit (the app extra), and ``__main__`` modules run a command when imported.
SKIP = ("privacy_checklist.app.ui", "privacy_checklist.app.streamlit_app")
#: What the core must run without: every extra's modules and the heavy packages they bring.
BLOCKED = sorted(
    {m for modules in EXTRAS.values() for m in modules}
    | {"huggingface_hub", "safetensors", "scipy"}
)
DEAD_URL = "http://127.0.0.1:9/v1"  # nothing listens on port 9: no request ever succeeds
CASE = (
    "Dr. Lee, a surgeon at Mercy Hospital, emailed the patient's HIV test results to a reporter "
    "at the local newspaper without the patient's consent."
)

# The child: refuse the blocked modules, never start another program (``pcheck app`` would
# become Streamlit), then run each call and report what it printed or raised, as JSON.
RUNNER = textwrap.dedent(
    """
    import contextlib, importlib.abc, io, json, os, sys, traceback

    blocked, calls = set(json.loads(sys.argv[1])), json.loads(sys.argv[2])


    class Refuse(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in blocked:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None


    def no_exec(*args, **kwargs):
        raise RuntimeError("the command tried to start another program")


    sys.meta_path.insert(0, Refuse())
    os.execve = no_exec
    results = []
    for call in calls:
        out, err = io.StringIO(), io.StringIO()
        code = None
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                if "argv" in call:
                    from privacy_checklist.app.cli import main

                    code = main(call["argv"])
                else:
                    exec(call["python"], {})
            except BaseException as exc:
                traceback.print_exc()
                code = f"{type(exc).__name__}: {exc}"
        results.append({"code": code, "out": out.getvalue(), "err": err.getvalue()})
    print(json.dumps(results))
    """
)


def run_without(
    calls: list[dict[str, object]], tmp_path: Path, blocked: list[str] = BLOCKED
) -> list[dict[str, object]]:
    """Run ``calls`` (``{"argv": [...]}`` for ``pcheck``, ``{"python": "..."}`` for code) in a
    child that cannot import ``blocked``; caches in ``tmp_path``."""
    script = tmp_path / "runner.py"
    script.write_text(RUNNER, encoding="utf-8")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}
    env.pop("PCHECK_KB", None)
    done = subprocess.run(
        [sys.executable, str(script), json.dumps(blocked), json.dumps(calls)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results: list[dict[str, object]] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


# --------------------------------------------------------------------------- the core alone


def test_the_core_runs_without_the_extras(shared: Path, tmp_path: Path) -> None:
    """Ingest (Part 160 alone, no graphs), show, resolve phrases without the embedding
    fallback, search with BM25, check a case with offline-fast, with offline (its sentence
    embedding from the shipped ONNX encoder) and with the checklist and its learned condition
    reader, every extra refused."""
    part160 = str(shared / "hipaa" / "ecfr-title45-part160.html")
    out = str(tmp_path / "kb160")
    calls = [
        ["ingest", "--source", part160, "--out", out, "--no-graphs"],
        ["--kb", out, "show", "160.103"],
        ["roles", "resolve", "--no-embeddings", "the hospital's billing clerk"],
        ["attributes", "resolve", "--no-embeddings", "HIV test results"],
        ["search", "--method", "bm25", "-k", "3", "a nurse told a reporter about an HIV test"],
        ["search", "--no-embeddings", "-k", "3", "a nurse told a reporter about an HIV test"],
        ["check", "--method", "offline-fast", CASE],
        ["check", "--method", "offline", CASE],
        ["check", "--json", CASE],
    ]
    results = run_without([{"argv": argv} for argv in calls], tmp_path)
    for argv, result in zip(calls, results, strict=True):
        assert result["code"] == 0, (argv, result["err"])
        assert "Traceback" not in result["err"], (argv, result["err"])
    _, show, roles, attributes, bm25, hybrid, check, offline, default = (r["out"] for r in results)
    assert (tmp_path / "kb160" / "tree.json").is_file()
    assert show.startswith("160.103  (section)")
    assert "workforce" in roles
    assert "protected health information" in attributes
    assert bm25.lstrip().startswith("1. ") and hybrid.lstrip().startswith("1. ")
    assert "Verdict: prohibit" in check and "Flow 1 (emailed)" in check
    assert "Verdict: prohibit" in offline
    # the default: the checklist alone, its conditions read by the learned reader (ONNX, no
    # torch: a check that needed an extra would have failed above)
    assert json.loads(default)["checklist"].get("blend") is None
    assert json.loads(default)["verdict"] == "prohibit"


def test_importing_the_package_needs_no_extra(tmp_path: Path) -> None:
    """Every module of the layers imports with the extras refused (they load where needed);
    only the browser's pages, which run inside Streamlit, are left out."""
    code = f"""
import importlib, pkgutil
SKIP = {SKIP!r}
for layer in {LAYERS!r}:
    package = importlib.import_module("privacy_checklist." + layer)
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not info.name.startswith(SKIP) and not info.name.endswith(".__main__"):
            importlib.import_module(info.name)
"""
    (result,) = run_without([{"python": code}], tmp_path)
    assert result["code"] is None, result["err"]


# --------------------------------------------------------------------------- each extra missing


@pytest.mark.parametrize(
    ("argv", "extra"),
    [
        (["search", "--method", "embedding", "x-ray results"], "embeddings"),
        (["search", "x-ray results"], "embeddings"),  # hybrid, with its embedding leg
        (["search", "--method", "ci-es", "x-ray results"], "embeddings"),
        (["roles", "resolve", "Zorblaxian Quuxco"], "embeddings"),  # the embedding fallback
        (
            ["check", "--method", "dp", "--llm-model", "m", "--llm-base-url", DEAD_URL, CASE],
            "llm",
        ),
        (["reasoner", "train", "--fast", "--out", "model.json"], "train"),
        (["app", "--port", "9"], "app"),
    ],
    ids=lambda v: " ".join(v[:3]) if isinstance(v, list) else v,
)
def test_a_missing_extra_is_one_line_naming_the_install(
    argv: list[str], extra: str, shared: Path, tmp_path: Path
) -> None:
    if argv[:2] == ["reasoner", "train"]:
        argv = [*argv, "--cases-dir", str(shared / "cases")]
    (result,) = run_without([{"argv": argv}], tmp_path)
    err = str(result["err"])
    assert result["code"] == 1, err
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith(f"pcheck {argv[0]}: ")
    assert f"pip install privacy-checklist[{extra}]" in err
    assert result["out"] == ""
    assert not (tmp_path / "model.json").exists()


def test_the_library_raises_missing_extra_where_the_module_is_first_needed(
    tmp_path: Path,
) -> None:
    code = """
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.kg.extras import MissingExtra
from privacy_checklist.reasoning.llm.client import LLMClient, LLMConfig
from privacy_checklist.retrieval.index import RetrievalIndex

kb = kbmod.load()
index = RetrievalIndex(kb)
assert index.search("a nurse", "bm25", 3)
for call, extra in (
    (lambda: index.search("a nurse", "embedding", 3), "embeddings"),
    (lambda: kb.role_resolver(embeddings=True).resolve("Zorblaxian Quuxco", 1), "embeddings"),
    (lambda: LLMClient(LLMConfig("http://127.0.0.1:9/v1", "m")), "llm"),
):
    try:
        call()
    except MissingExtra as exc:
        assert exc.extra == extra and f"pip install privacy-checklist[{extra}]" in str(exc)
        assert "\\n" not in str(exc)
    else:
        raise AssertionError(f"no MissingExtra for {extra}")
"""
    (result,) = run_without([{"python": code}], tmp_path)
    assert result["code"] is None, result["err"]


def test_require_and_its_message() -> None:
    assert require("json", "llm", "x").__name__ == "json"
    with pytest.raises(MissingExtra) as caught:
        require("no_such_module_for_the_test", "llm", "asking an LLM")
    assert str(caught.value) == (
        "asking an LLM needs the llm extra (no module named 'no_such_module_for_the_test'): "
        "pip install privacy-checklist[llm]"
    )
    assert isinstance(caught.value, ImportError) and caught.value.extra == "llm"
    with pytest.raises(ValueError, match="choose one of embeddings, llm"):
        install("gpu")


# --------------------------------------------------------------------------- declared


def _requirement_names(requirements: list[str]) -> set[str]:
    """Project names of requirement strings, normalized ("Sentence_Transformers>=3" ->
    "sentence-transformers")."""
    return {
        re.sub(r"[-_.]+", "-", re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0]).lower()
        for r in requirements
    }


def _imported_modules() -> set[str]:
    """The top-level modules the package's layers import: import statements (lazy or not),
    ``require("module", ...)`` calls, and the modules kg/extras.py lists."""
    import ast

    found = {m.partition(".")[0] for modules in EXTRAS.values() for m in modules}
    for layer in LAYERS:
        for path in (REPO / layer).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    found |= {alias.name.partition(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    found.add(node.module.partition(".")[0])
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id == "require"
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                ):
                    found.add(str(node.args[0].value).partition(".")[0])
    return found - set(sys.stdlib_module_names) - {"privacy_checklist", "__future__"}


def test_every_imported_package_is_declared() -> None:
    """numpy, Pillow, pandas, scikit-learn ... are declared, in the core or in an extra, and
    each extra of kg/extras.py exists in pyproject.toml; `all` holds every extra pip alone can
    install."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    declared = _requirement_names(project["dependencies"])
    for name, requirements in extras.items():
        if name != "dev":
            declared |= _requirement_names(requirements)
    distributions = importlib.metadata.packages_distributions()
    undeclared = {
        module: distributions.get(module)
        for module in _imported_modules()
        if not _requirement_names(distributions.get(module, [module])) & declared
    }
    assert not undeclared, f"imported but not declared in pyproject.toml: {undeclared}"
    assert set(EXTRAS) <= set(extras)
    assert extras["all"] == ["privacy-checklist[embeddings,llm,app,train,parse,guard]"]
    core = _requirement_names(project["dependencies"])
    assert not core & {"sentence-transformers", "chromadb", "streamlit", "openai", "torch"}


# --------------------------------------------------------------------------- the environment


def test_importing_the_package_leaves_the_environment_alone(tmp_path: Path) -> None:
    code = f"""
import importlib, os, pkgutil
SKIP = {SKIP!r}
before = dict(os.environ)
for layer in {LAYERS!r}:
    package = importlib.import_module("privacy_checklist." + layer)
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not info.name.startswith(SKIP) and not info.name.endswith(".__main__"):
            importlib.import_module(info.name)
changed = {{k for k in set(before) | set(os.environ) if before.get(k) != os.environ.get(k)}}
assert not changed, changed
"""
    (result,) = run_without([{"python": code}], tmp_path, blocked=[])
    assert result["code"] is None, result["err"]


def test_model_env_is_set_for_the_load_only(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in LOAD_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # the user's own choice stays
    with model_env():
        assert os.environ["TRANSFORMERS_VERBOSITY"] == "error"
        assert os.environ["HF_HUB_OFFLINE"] == "0"
    assert "TRANSFORMERS_VERBOSITY" not in os.environ
    assert "HF_HUB_DISABLE_PROGRESS_BARS" not in os.environ
    assert os.environ["HF_HUB_OFFLINE"] == "0"


@pytest.mark.slow
def test_loading_the_model_leaves_the_environment_alone(tmp_path: Path) -> None:
    """The model loads with the hub off and transformers quiet, and the variables that did so
    are gone afterwards (about ten seconds: a real load, in a fresh process)."""
    code = """
import os
from privacy_checklist.kg.embeddings import LOAD_ENV, model
for name in LOAD_ENV:
    os.environ.pop(name, None)
model().encode(["a nurse"])
assert not [name for name in LOAD_ENV if name in os.environ]
import huggingface_hub.constants
assert huggingface_hub.constants.HF_HUB_OFFLINE
"""
    (result,) = run_without([{"python": code}], tmp_path, blocked=[])
    assert result["code"] is None, result["err"]
