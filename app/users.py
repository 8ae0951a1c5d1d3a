"""The browser's editors: who may sign in and change norms.

A YAML file in the format of ``streamlit-authenticator`` (the ``app`` extra), made and kept by
the operator with ``pcheck users add NAME`` / ``remove NAME`` / ``list``: each editor's display
name and a bcrypt hash of the password (never the password), and the secret that signs the
browser's sign-in cookie. The file is written whole or not at all, readable by its owner only.
The command line (``pcheck users``) and the browser (the sidebar's sign-in) both read it here.
"""

from __future__ import annotations

import os
import re
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: the cookie that keeps an editor signed in between visits
COOKIE_NAME = "pcheck_signed_in"
COOKIE_DAYS = 7.0
#: what a user name may be (it is recorded in the norms' history)
USER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")
MIN_PASSWORD = 8


class UsersError(ValueError):
    """The users file cannot be read or changed; the message says why and what to do."""


def default_users_path() -> Path:
    """``$PCHECK_USERS``, else ``users.yaml`` in the user's configuration folder."""
    env = os.environ.get("PCHECK_USERS")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "privacy-checklist" / "users.yaml"


@dataclass(frozen=True)
class Users:
    """The editors who may sign in, and the cookie's settings."""

    path: Path
    credentials: dict[str, Any]
    cookie_key: str

    @property
    def names(self) -> list[str]:
        return sorted(self.credentials["usernames"])


def _yaml() -> Any:
    from privacy_checklist.kg.extras import require

    return require("yaml", "app", "the browser's sign-in (pcheck users)")


def load_users(path: Path) -> Users:
    """The users file at ``path``.

    Raises:
        UsersError: no such file, not YAML, or not a users file (naming what is wrong).
    """
    yaml = _yaml()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise UsersError(f"{path}: no users file; make one with pcheck users add NAME") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise UsersError(f"{path}: cannot be read ({exc})") from exc
    except yaml.YAMLError as exc:
        raise UsersError(f"{path}: not YAML ({' '.join(str(exc).split())})") from exc
    data = data if isinstance(data, dict) else {}
    credentials, cookie = data.get("credentials"), data.get("cookie")
    usernames = credentials.get("usernames") if isinstance(credentials, dict) else None
    key = cookie.get("key") if isinstance(cookie, dict) else None
    if not isinstance(usernames, dict) or not isinstance(key, str) or len(key) < 32:
        raise UsersError(
            f"{path}: not a users file (credentials.usernames and a cookie key are needed); "
            "make one with pcheck users add NAME"
        )
    for name, entry in usernames.items():
        password = entry.get("password") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not USER_NAME.fullmatch(name):
            raise UsersError(f"{path}: user name {name!r} is not a plain name")
        if not isinstance(password, str) or not password.startswith("$2"):
            raise UsersError(
                f"{path}: {name} has no password hash; set one: pcheck users add {name}"
            )
    return Users(path, {"usernames": usernames}, key)


def hash_password(password: str) -> str:
    """A bcrypt hash, as the sign-in checks it."""
    import bcrypt

    return bcrypt.hashpw(password.encode("utf-8"), bcrypt.gensalt()).decode("ascii")


def add_user(path: Path, name: str, password: str, display: str = "") -> Users:
    """Add ``name`` (or set its password) in the users file at ``path``, made if missing.

    Raises:
        UsersError: a name or password that cannot be used, or a file that cannot be written.
    """
    if not USER_NAME.fullmatch(name):
        raise UsersError(
            f"user name {name!r}: letters, digits, '.', '_' or '-', at most 40, starting with a "
            "letter or digit"
        )
    if len(password) < MIN_PASSWORD:
        raise UsersError(f"the password is shorter than {MIN_PASSWORD} characters")
    display = " ".join(display.split()) or name
    if not display.isprintable() or len(display) > 80:
        raise UsersError("the display name must be one printable line of at most 80 characters")
    users = (
        load_users(path) if path.exists() else Users(path, {"usernames": {}}, secrets.token_hex(32))
    )
    entries = dict(users.credentials["usernames"])
    entries[name] = {"name": display, "email": "", "password": hash_password(password)}
    return _save(Users(path, {"usernames": entries}, users.cookie_key))


def remove_user(path: Path, name: str) -> Users:
    """Take ``name`` out of the users file.

    Raises:
        UsersError: no such user, or the file cannot be written.
    """
    users = load_users(path)
    entries = dict(users.credentials["usernames"])
    if name not in entries:
        raise UsersError(
            f"{path}: no user {name!r}; the users are {', '.join(users.names) or 'none'}"
        )
    del entries[name]
    return _save(Users(path, {"usernames": entries}, users.cookie_key))


def _save(users: Users) -> Users:
    """Write the file whole (a temporary file renamed over it), readable by its owner only."""
    yaml = _yaml()
    data = {
        "credentials": users.credentials,
        "cookie": {"name": COOKIE_NAME, "key": users.cookie_key, "expiry_days": COOKIE_DAYS},
    }
    text = (
        "# privacy-checklist: who may sign in to the browser and edit norms (pcheck users).\n"
        "# Passwords are bcrypt hashes; keep this file private.\n"
        + yaml.safe_dump(data, sort_keys=True)
    )
    try:
        users.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=users.path.parent, prefix=".users-", suffix=".yaml")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.chmod(tmp, 0o600)
            os.replace(tmp, users.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise UsersError(f"{users.path}: cannot be written ({exc.strerror or exc})") from exc
    return users
