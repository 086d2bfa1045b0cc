"""Sign-up (the token is shown once), sign-in by pasting a token, sign-out."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from flask import make_response, redirect, request, url_for
from werkzeug.wrappers import Response

from arena.services.accounts import authenticate, create_account, issue_token
from arena.services.errors import ServiceError
from arena.web.context import context, unit_of_work
from arena.web.pages import pages
from arena.web.pages.common import page, sign_in, sign_out, viewer
from arena.web.pages.forms import LoginForm, LogoutForm, SignupForm
from arena.web.pages.my_bots import keep_notice, take_notice
from arena.web.ratelimit import signup_limit

# A same-site path as a URI reference in plain ASCII: no whitespace or control character (browsers drop
# tabs and newlines anywhere, so "/\t/evil" becomes "//evil"), no backslash (browsers read it as "/").
_SITE_PATH = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/?#%]*")


def _safe_next(target: str | None) -> str:
    """Where to go after signing in: only a path on this site, so a crafted link cannot send a fresh
    sign-in elsewhere ("//evil", "/\\evil", "/<tab>/evil", "https:evil", "javascript:..."), nor put a
    header break in the redirect."""
    if target and _SITE_PATH.fullmatch(target) and not target.startswith("//"):
        parts = urlsplit(target)
        if not parts.scheme and not parts.netloc:
            return target
    return url_for("pages.home")


@pages.route("/signup", methods=["GET", "POST"])
@signup_limit  # one budget with the API's sign-up
def signup() -> tuple[str, int] | Response:
    if not context().settings.open_signup:
        return page("signup.html", 403, form=None, closed=True)
    form = SignupForm()
    error, status = None, 422 if request.method == "POST" else 200
    if form.validate_on_submit():
        try:
            with unit_of_work() as session:
                account, _unshown = create_account(session, form.name.data.strip())  # see signup_done
                sign_in(session, account)
                name = account.name
        except ServiceError as exc:
            error, status = exc.message, exc.status
        else:  # post/redirect/get: the page after the redirect issues the token and shows it, once
            keep_notice("token", "signed up", name=name)
            return redirect(url_for("pages.signup_done"), 303)
    if request.method == "GET" and _signed_in_name() is not None:  # nothing to offer: say who is signed in
        return page("signed_in.html", name=_signed_in_name())
    return page("signup.html", status, form=form, error=error, closed=False)


@pages.get("/signup/done")
def signup_done() -> Response:
    """The new account's token, once: a refresh finds it gone. Flask's cookie is signed, not encrypted, so
    the token never waits in it: this page issues it (the one made with the account was never shown) to
    the sign-in that signed up, and then replaces that sign-in by a new one, so a copy of the cookie taken
    before (which still says a token is to be shown) is signed out and can never have one shown."""
    notice = take_notice()
    if notice is None or notice.get("kind") != "token":
        return redirect(url_for("pages.my_bots"))
    with unit_of_work() as db_session:
        account = viewer(db_session)
        if account is None or account.name != notice.get("name"):
            return redirect(url_for("pages.my_bots"))
        token = issue_token(db_session, account)
        sign_in(db_session, account)  # a new key: every copy of the cookie taken before is dead
    response = make_response(page("token.html", name=notice["name"], token=token))
    response.headers["Cache-Control"] = "no-store"
    return response


def _signed_in_name() -> str | None:
    with unit_of_work(readonly=True) as session:
        account = viewer(session)
        return account.name if account is not None else None


@pages.route("/login", methods=["GET", "POST"])
def login() -> tuple[str, int] | Response:
    form = LoginForm()
    error = None
    if form.validate_on_submit():
        with unit_of_work() as session:
            account = authenticate(session, form.token.data.strip())
            if account is not None:
                sign_in(session, account)
                return redirect(_safe_next(request.args.get("next")))
        error = "That token is not valid. Tokens start with arena_ and are shown once, at sign-up."
    if request.method == "GET" and _signed_in_name() is not None:
        return page("signed_in.html", name=_signed_in_name())
    status = 422 if request.method == "POST" else 200
    return page("login.html", status, form=form, error=error)


@pages.post("/logout")
def logout() -> Response:
    form = LogoutForm()
    if form.validate_on_submit():
        with unit_of_work() as session:
            sign_out(session)
    return redirect(url_for("pages.home"))
