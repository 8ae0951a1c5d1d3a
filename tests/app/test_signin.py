"""Editors sign in to edit norms in the browser: ``pcheck users`` makes the file of who may
(bcrypt hashes in YAML), the sidebar signs them in and out, anonymous visitors read, and
``pcheck app`` refuses an address other than loopback unless someone signs people in."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from privacy_checklist.app.cli import main
from privacy_checklist.app.users import load_users
from tests.conftest import EDITORS


@pytest.fixture(autouse=True)
def _no_users_of_the_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PCHECK_USERS", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def users(capsys, monkeypatch, *argv: str, password: str = "") -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(password + "\n"))
    code = main(["users", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_users_add_list_remove(tmp_path: Path, capsys, monkeypatch) -> None:
    path = tmp_path / "users.yaml"
    code, out, _ = users(
        capsys, monkeypatch, "--users", str(path), "add", "ann", "--password-stdin",
        "--display", "Ann Lee", password="a-long-password",
    )  # fmt: skip
    assert code == 0 and "ann may sign in" in out
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text(encoding="utf-8")
    assert "a-long-password" not in text and "$2b$" in text  # a bcrypt hash, never the password
    import bcrypt

    stored = load_users(path).credentials["usernames"]["ann"]
    assert bcrypt.checkpw(b"a-long-password", stored["password"].encode())
    assert stored["name"] == "Ann Lee"
    code, out, _ = users(capsys, monkeypatch, "--users", str(path), "list")
    assert code == 0 and out.split() == ["ann", "Ann", "Lee"]
    code, _, err = users(
        capsys,
        monkeypatch,
        "--users",
        str(path),
        "add",
        "bob",
        "--password-stdin",
        password="short",
    )
    assert code == 1 and "shorter than 8" in err and "bob" not in path.read_text()
    code, _, err = users(
        capsys, monkeypatch, "--users", str(path), "add", "bo b\x1b", "--password-stdin",
        password="a-long-password",
    )  # fmt: skip
    assert code == 1 and "user name" in err
    code, out, _ = users(capsys, monkeypatch, "--users", str(path), "remove", "ann")
    assert code == 0 and load_users(path).names == []
    path.write_text("credentials: [1, 2]\n", encoding="utf-8")
    code, _, err = users(capsys, monkeypatch, "--users", str(path), "list")
    assert code == 1 and "not a users file" in err and len(err.strip().splitlines()) == 1


class Started(Exception):
    """os.execve called: the browser would start (the test stops there)."""


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> dict:
    seen: dict = {}

    def execve(path: str, argv: list[str], env: dict) -> None:
        seen.update(argv=argv, env=env)
        raise Started

    monkeypatch.setattr(os, "execve", execve)
    return seen


def test_an_address_others_reach_needs_sign_in(users_file: Path, capsys, started: dict) -> None:
    assert main(["app", "--address", "0.0.0.0"]) == 1
    err = capsys.readouterr().err
    assert "--address 0.0.0.0 lets anyone" in err and len(err.strip().splitlines()) == 1
    assert not started
    with pytest.raises(Started):  # editors sign in: allowed
        main(["app", "--address", "0.0.0.0", "--users", str(users_file)])
    assert started["env"]["PCHECK_USERS"] == str(users_file.resolve())
    assert "0.0.0.0" in started["argv"]
    with pytest.raises(Started):  # a proxy in front signs people in
        main(["app", "--address", "0.0.0.0", "--behind-auth-proxy"])
    with pytest.raises(Started):  # loopback: anyone here reads, nobody edits
        main(["app", "--address", "::1"])
    assert "PCHECK_USERS" not in started["env"]


def test_a_users_file_that_cannot_be_used_is_one_line(tmp_path: Path, capsys, started) -> None:
    bad = tmp_path / "users.yaml"
    bad.write_text("{not yaml: [", encoding="utf-8")
    assert main(["app", "--users", str(bad)]) == 1
    assert "not YAML" in capsys.readouterr().err and not started


def sidebar_script() -> None:
    import streamlit as st

    from privacy_checklist.app.ui import common, signin

    with st.sidebar:
        signin.sidebar()
    st.write(f"editor: {common.editor()}")


def sidebar_app(users_file: Path | None, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    if users_file is not None:
        monkeypatch.setenv("PCHECK_USERS", str(users_file))
    at = AppTest.from_function(sidebar_script, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


def test_sign_in_and_out_in_the_sidebar(users_file: Path, monkeypatch) -> None:
    at = sidebar_app(users_file, monkeypatch)
    assert "editor: None" in at.markdown[-1].value

    def sign_in(password: str) -> None:
        at.sidebar.text_input[0].input("alice")
        at.sidebar.text_input[1].input(password)
        next(b for b in at.sidebar.button if b.label == "Sign in").click()
        at.run()
        assert not at.exception, at.exception

    sign_in("wrong-password")
    assert any("do not match" in e.value for e in at.sidebar.error)
    assert "editor: None" in at.markdown[-1].value
    sign_in(EDITORS["alice"])
    assert "editor: alice" in at.markdown[-1].value
    assert any("Editing as **alice**" in c.value for c in at.sidebar.caption)
    next(b for b in at.sidebar.button if b.label == "Sign out").click()
    at.run()
    assert "editor: None" in at.markdown[-1].value


def test_without_a_users_file_nobody_edits(monkeypatch) -> None:
    at = sidebar_app(None, monkeypatch)
    at.session_state["authentication_status"] = True  # even a session that says so
    at.session_state["username"] = "mallory"
    at.run()
    assert "editor: None" in at.markdown[-1].value
    assert any("pcheck users add NAME" in c.value for c in at.sidebar.caption)
