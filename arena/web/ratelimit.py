"""Rate limits on the endpoints that create things: sign-up, bot submission, tournament creation.

Flask-Limiter keeps the counters in Redis when the arena has one (so every web process shares them) and
in memory otherwise. The limits come from the settings (``ARENA_SIGNUP_RATE`` ...), keyed by API token
when one is sent and by client address otherwise.
"""

from __future__ import annotations

import hashlib

from flask import Flask, current_app, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

from arena.bootstrap import Context


def _caller() -> str:
    """The API token when one is sent (a caller cannot dodge its limit by changing cookies), else the
    client address."""
    header = request.headers.get("Authorization", "")
    if header.lower().startswith("bearer "):
        return "token:" + hashlib.sha256(header[7:].strip().encode()).hexdigest()[:32]
    return "ip:" + get_remote_address()


def storage_uri(redis_url: str) -> str:
    """Flask-Limiter's name for the arena's Redis (the embedded one listens on a Unix socket)."""
    if not redis_url:
        return "memory://"
    if redis_url.startswith("unix://"):
        return "redis+unix://" + redis_url[len("unix://"):]
    return redis_url


limiter = Limiter(key_func=_caller, default_limits=[], headers_enabled=True)


def signup_rate() -> str:
    return current_app.extensions["arena"].settings.signup_rate


def bot_rate() -> str:
    return current_app.extensions["arena"].settings.bot_rate


def tournament_rate() -> str:
    return current_app.extensions["arena"].settings.tournament_rate


def init_rate_limits(app: Flask, context: Context) -> None:
    settings = context.settings
    app.config["RATELIMIT_ENABLED"] = settings.rate_limits
    app.config["RATELIMIT_STORAGE_URI"] = storage_uri(settings.redis_url)
    app.config["RATELIMIT_KEY_PREFIX"] = f"arena-limits:{settings.queue_name}"
    app.config["RATELIMIT_SWALLOW_ERRORS"] = True  # Redis down: serve without limits rather than fail
    limiter.init_app(app)
