"""The browser's editors: ``pcheck users add NAME``, ``remove NAME``, ``list``.

Editing norms in the browser needs a signed-in editor; this makes the file of who may sign in
(:mod:`privacy_checklist.app.users`: bcrypt hashes in YAML), which ``pcheck app --users FILE``
(or ``$PCHECK_USERS``) reads.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path
from typing import Any

from privacy_checklist.app.cli.common import CliError


def _path(args: argparse.Namespace) -> Path:
    from privacy_checklist.app.users import default_users_path

    return Path(args.users) if args.users else default_users_path()


def _password(args: argparse.Namespace) -> str:
    """The new password: a line of standard input (--password-stdin), else asked twice."""
    if args.password_stdin:
        line = sys.stdin.readline()
        return line.rstrip("\r\n")
    if not sys.stdin.isatty():
        raise CliError("no terminal to ask the password on: pass --password-stdin and pipe it")
    first = getpass.getpass(f"Password for {args.name}: ")
    if first != getpass.getpass("The same again: "):
        raise CliError("the two passwords differ; nothing was changed")
    return first


def cmd_users(args: argparse.Namespace) -> int:
    """``pcheck users``: add, remove or list the editors who may sign in."""
    from privacy_checklist.app.users import UsersError, add_user, load_users, remove_user

    path = _path(args)
    try:
        if args.action == "add":
            users = add_user(path, args.name, _password(args), args.display or "")
            print(f"{args.name} may sign in and edit norms ({path}; {len(users.names)} editor(s))")
        elif args.action == "remove":
            users = remove_user(path, args.name)
            print(f"{args.name} removed ({path}; {len(users.names)} editor(s) left)")
        else:
            users = load_users(path)
            for name in users.names:
                print(f"{name}\t{users.credentials['usernames'][name].get('name', '')}")
    except UsersError as exc:
        raise CliError(str(exc)) from exc
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "users",
        help="who may sign in to the browser and edit norms (hashed passwords in a YAML file)",
        description="Editing norms in the browser needs an editor who signed in; anonymous "
        "visitors read. This keeps the file of editors (bcrypt hashes, never the passwords); "
        "start the browser with pcheck app --users FILE (or set PCHECK_USERS).",
    )
    p.add_argument(
        "--users",
        metavar="FILE",
        help="the users file (default: $PCHECK_USERS, else ~/.config/privacy-checklist/users.yaml)",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="add an editor, or set an editor's password")
    add.add_argument("name", help="the user name recorded in the norms' history")
    add.add_argument("--display", metavar="TEXT", help="the name shown (default: the user name)")
    add.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the password from the first line of standard input (else asked twice)",
    )
    remove = actions.add_parser("remove", help="take an editor out")
    remove.add_argument("name")
    actions.add_parser("list", help="the editors who may sign in")
    p.set_defaults(func=cmd_users)
