"""The Flask application factory: one app per call, resources attached, nothing connects at import."""

from __future__ import annotations

import logging

from flask import Flask

from arena.composition import Context, build_context
from arena.config import Settings


def create_app(settings: Settings | None = None, context: Context | None = None) -> Flask:
    """Build the web app. Tests pass a context wired to their own database and queue."""
    context = context or build_context(settings)
    app = Flask(__name__)
    app.config.update(
        SECRET_KEY=context.settings.secret_key,
        MAX_CONTENT_LENGTH=context.settings.max_request_bytes,
        JSON_SORT_KEYS=False,
        ARENA_DOCS_DIR=context.settings.docs_dir or None,
        # The session cookie: never readable by scripts, not sent on cross-site subrequests or posts,
        # and only over HTTPS in production. It carries a random key, never the account (pages/common.py).
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=context.settings.production,
    )
    app.extensions["arena"] = context
    if context.settings.proxy_hops:
        from werkzeug.middleware.proxy_fix import ProxyFix

        hops = context.settings.proxy_hops
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)  # type: ignore[method-assign]
    from arena.web.api import api
    from arena.web.headers import init_security_headers
    from arena.web.ratelimit import init_rate_limits

    init_security_headers(app, context.settings.production)

    init_rate_limits(app, context)

    app.register_blueprint(api, url_prefix="/api")
    from arena.web.ops import ops

    app.register_blueprint(ops)
    from arena.web.live import live, live_seq

    app.register_blueprint(live)
    app.jinja_env.globals["live_seq"] = live_seq
    from arena.web.pages import register_pages

    register_pages(app)  # the HTML pages, with CSRF checks on their forms only
    _json_errors_under_api(app)
    if context.settings.env == "development":
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
    return app


def _json_errors_under_api(app: Flask) -> None:
    """Unknown URLs and methods under /api answer JSON too (the blueprint only sees matched routes); anywhere
    else they get the styled error page, never the bare one of the framework."""
    from flask import request
    from werkzeug.exceptions import HTTPException

    from arena.web.api.errors import error_response
    from arena.web.pages.errors import error_page

    @app.errorhandler(404)
    @app.errorhandler(405)
    def not_found(exc: HTTPException):  # type: ignore[no-untyped-def]
        if request.path == "/api" or request.path.startswith("/api/"):
            return error_response(exc.code or 404, "no such resource" if exc.code == 404 else "method not allowed")
        if exc.code == 405:
            return error_page(405, "This address does not take that kind of request.")
        return error_page(404, "There is no page at this address. The lists of bots, matches, tournaments and "
                               "leaderboards are linked below.")
