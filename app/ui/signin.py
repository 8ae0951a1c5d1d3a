"""The editors' sign-in in the browser's sidebar (streamlit-authenticator).

With a users file (``pcheck app --users FILE`` or ``$PCHECK_USERS``, made by ``pcheck users
add``), an editor signs in with a name and password and edits norms under that name, which the
norms' history records; everyone else reads. Without one, nobody edits: the sidebar says how
the operator adds editors. A users file that cannot be read leaves the browser read-only and
says why.
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from privacy_checklist.app.users import COOKIE_DAYS, COOKIE_NAME, UsersError, load_users

#: the session keys streamlit-authenticator sets
STATUS, USERNAME = "authentication_status", "username"


def users_path() -> Path | None:
    """The users file the operator configured, or None (nobody signs in)."""
    env = os.environ.get("PCHECK_USERS")
    return Path(env) if env else None


def editor() -> str | None:
    """The signed-in editor's user name, or None: editing needs a signed-in editor."""
    if users_path() is None or st.session_state.get(STATUS) is not True:
        return None
    name = st.session_state.get(USERNAME)
    return str(name) if name else None


def sidebar() -> None:
    """Sign in or out, in the sidebar (call it inside ``with st.sidebar``)."""
    path = users_path()
    if path is None:
        st.caption(
            "Read-only. Editors sign in once the operator adds them (`pcheck users add NAME`) "
            "and starts `pcheck app --users FILE`."
        )
        return
    try:
        users = load_users(path)
    except UsersError as exc:
        st.warning(f"Read-only: the users file cannot be used ({exc}).")
        return
    import streamlit_authenticator as stauth

    authenticator = stauth.Authenticate(
        {"usernames": users.credentials["usernames"]},
        cookie_name=COOKIE_NAME,
        cookie_key=users.cookie_key,
        cookie_expiry_days=COOKIE_DAYS,
        auto_hash=False,
        login_sleep_time=0,
    )
    if st.session_state.get(STATUS) is True and st.session_state.get(USERNAME) in users.names:
        st.caption(f"Editing as **{st.session_state[USERNAME]}**")
        authenticator.logout("Sign out", "sidebar", key="pcheck-sign-out")
        return
    fields = {
        "Form name": "Editors sign in",
        "Username": "User name",
        "Password": "Password",
        "Login": "Sign in",
    }
    authenticator.login(location="sidebar", fields=fields, key="pcheck-sign-in")
    if st.session_state.get(STATUS) is True:
        st.rerun()
    if st.session_state.get(STATUS) is False:
        st.error("That user name and password do not match.")
    st.caption("Read-only until an editor signs in.")
