"""Sign-up (the token is shown once), sign-in by pasting a token, sign-out."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from flask import make_response, redirect, request, url_for
from werkzeug.wrappers import Response

from arena.services.accounts import authenticate, create_account
from arena.services.errors import ServiceError
from arena.web.context import context, unit_of_work
from arena.web.pages import pages
from arena.web.pages.common import page, sign_in, sign_out
from arena.web.pages.forms import LoginForm, LogoutForm, SignupForm
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
                account, token = create_account(session, form.name.data.strip())
                sign_in(session, account)
                name = account.name
        except ServiceError as exc:
            error, status = exc.message, exc.status
        else:
            response = make_response(page("token.html", 201, name=name, token=token))
            response.headers["Cache-Control"] = "no-store"
            return response
    return page("signup.html", status, form=form, error=error, closed=False)


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
    status = 422 if request.method == "POST" else 200
    return page("login.html", status, form=form, error=error)


@pages.post("/logout")
def logout() -> Response:
    form = LogoutForm()
    if form.validate_on_submit():
        with unit_of_work() as session:
            sign_out(session)
    return redirect(url_for("pages.home"))
