"""``pcheck app``: the Streamlit browser, started on 127.0.0.1."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from privacy_checklist.app.cli.common import CliError
from privacy_checklist.app.cli.options import (
    APP_STORE_HELP,
    index_option,
    llm_endpoint_options,
    store_option,
)

# the options handed to the app as environment variables (folders as absolute paths)
APP_ENVIRONMENT = (
    ("PCHECK_KB", "kb"),
    ("PCHECK_STORE", "store"),
    ("PCHECK_INDEX", "index"),
    ("PCHECK_USERS", "users"),
    ("PCHECK_RUNS", "runs"),
    ("PCHECK_LLM_BASE_URL", "llm_base_url"),
    ("PCHECK_LLM_MODEL", "llm_model"),
)
ABSOLUTE = ("PCHECK_KB", "PCHECK_RUNS", "PCHECK_USERS")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def cmd_app(args: argparse.Namespace) -> int:
    """Start the Streamlit browser on 127.0.0.1 and wait for it."""
    import subprocess
    from importlib import resources

    from privacy_checklist.kg.extras import check

    check("app", "pcheck app (the browser)")
    args.users = _users(args)
    if not _loopback(args.address) and args.users is None and not args.behind_auth_proxy:
        raise CliError(
            f"--address {args.address} lets anyone who reaches this machine use the browser, "
            "and nobody could sign in to edit: make the editors' file first (pcheck users add "
            "NAME) and pass --users FILE, or say a proxy in front signs people in "
            "(--behind-auth-proxy)"
        )

    script = Path(str(resources.files("privacy_checklist.app") / "streamlit_app.py"))
    env = dict(os.environ)
    for name, option in APP_ENVIRONMENT:
        value = getattr(args, option)
        if value:
            env[name] = str(Path(value).resolve()) if name in ABSOLUTE else value
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(script),
        "--server.headless",
        "true",
        "--server.address",
        args.address,
        "--server.port",
        str(args.port),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--client.toolbarMode",
        "viewer",
    ]
    print(
        f"privacy-checklist app on http://{args.address}:{args.port}/ (Ctrl-C stops it)",
        flush=True,
    )
    if hasattr(os, "execve"):
        # become the server: a signal to this process (Ctrl-C, a supervisor's stop) reaches it
        os.execve(sys.executable, command, env)
    try:  # pragma: no cover - platforms without exec
        return subprocess.call(command, env=env)
    except KeyboardInterrupt:  # pragma: no cover
        return 0


def _users(args: argparse.Namespace) -> str | None:
    """The users file to pass on: ``--users``, else ``$PCHECK_USERS`` or the default file when
    it exists; a file given that cannot be used is a one-line error here, not in the page."""
    from privacy_checklist.app.users import UsersError, default_users_path, load_users

    given = args.users or os.environ.get("PCHECK_USERS")
    path = Path(given) if given else default_users_path()
    if not given and not path.exists():
        return None
    try:
        users = load_users(path)
    except UsersError as exc:
        raise CliError(str(exc)) from exc
    if not users.names:
        raise CliError(f"{path}: nobody may sign in; add an editor with pcheck users add NAME")
    return str(path)


def _loopback(address: str) -> bool:
    """Whether ``address`` is this machine's own (only its users reach the browser)."""
    import ipaddress

    if address in LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def port_number(value: str) -> int:
    """A TCP port, for argparse (its error is one line)."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port number (1-65535)") from None
    if not 1 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"{number} is not a port number (1-65535)")
    return number


def register(sub: Any) -> None:
    p = sub.add_parser(
        "app",
        help="the browser: read the law, check a case, validate norms, study an evaluation",
        description="Start the Streamlit app on 127.0.0.1 (the knowledge base and models load "
        "once). Everyone reads; editing norms needs an editor who signs in, from the users "
        "file made with pcheck users add NAME (--users FILE, $PCHECK_USERS, or "
        "~/.config/privacy-checklist/users.yaml when it exists). An address other than "
        "loopback is refused unless editors sign in or --behind-auth-proxy says a proxy does.",
    )
    p.add_argument("--port", type=port_number, default=8501, help="port, 1-65535 (default 8501)")
    p.add_argument("--address", default="127.0.0.1", help="address to listen on (default loopback)")
    p.add_argument(
        "--users",
        metavar="FILE",
        help="the editors who may sign in (pcheck users add NAME makes it); without one, read-only",
    )
    p.add_argument(
        "--behind-auth-proxy",
        action="store_true",
        help="allow an address other than loopback without sign-in: a proxy in front signs "
        "people in (editing still needs --users)",
    )
    store_option(p, APP_STORE_HELP)
    index_option(p)
    p.add_argument(
        "--runs", metavar="DIR", help="where the Evaluation page looks for run folders (runs/)"
    )
    llm_endpoint_options(p, env_hint=False)
    p.set_defaults(func=cmd_app)
