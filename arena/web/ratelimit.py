"""Rate limits on the endpoints that create things: sign-up, bot submission, tournament creation.

Flask-Limiter keeps the counters in Redis when the arena has one (so every web process shares them) and
in memory otherwise. The limits come from the settings (``ARENA_SIGNUP_RATE`` ...). Each is one budget
shared by the API endpoint and its page form, keyed by the verified account (``arena.web.identity``)
and by client address otherwise; sign-up always by address.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from flask import Flask, current_app
from flask_limiter import Limiter

from arena.composition import Context
from arena.web.identity import address_key, caller_key


def storage_uri(redis_url: str) -> str:
    """Flask-Limiter's name for the arena's Redis (the embedded one listens on a Unix socket)."""
    if not redis_url:
        return "memory://"
    if redis_url.startswith("unix://"):
        return "redis+unix://" + redis_url[len("unix://"):]
    return redis_url


limiter = Limiter(key_func=caller_key, default_limits=[], headers_enabled=True)


def signup_rate() -> str:
    return current_app.extensions["arena"].settings.signup_rate


def bot_rate() -> str:
    return current_app.extensions["arena"].settings.bot_rate


def tournament_rate() -> str:
    return current_app.extensions["arena"].settings.tournament_rate


# One budget per kind of creation, shared by the API endpoint and its page form.
# Sign-up counts per client address whatever credential is sent: each sign-up yields a new account (and
# signs it in on the pages), so keying on accounts would hand out a new budget with every account made.
signup_limit = limiter.shared_limit(signup_rate, scope="signup", methods=["POST"], key_func=address_key)
bot_limit = limiter.shared_limit(bot_rate, scope="bot-submission", methods=["POST"])
# A changed URL costs a health check like a submission; changes have a budget of their own.
bot_change_limit = limiter.shared_limit(bot_rate, scope="bot-change", methods=["PATCH"])
# A new version or a resume from probation health-checks the bot too: the same budget as URL changes.
bot_check_limit = limiter.shared_limit(bot_rate, scope="bot-change", methods=["POST"])
# Only a tournament made counts: a refused one (422: a typo in its seats) cost nothing, yet spent the budget and
# locked an organizer out for the hour after 20 refusals (a user's trial).
tournament_limit = limiter.shared_limit(tournament_rate, scope="tournament-creation", methods=["POST"],
                                        deduct_when=lambda response: response.status_code < 400)


def retry_in() -> str:
    """When the limit just hit lets the caller try again, in words ("in 12 minutes, at 14:05 UTC")."""
    current = limiter.current_limit
    if current is None:
        return "later"
    wait = max(0, int(current.reset_at - time.time()))
    when = datetime.fromtimestamp(current.reset_at, UTC).strftime("%H:%M UTC")
    return f"in {wait} seconds" if wait < 120 else f"in {round(wait / 60)} minutes, at {when}"


def init_rate_limits(app: Flask, context: Context) -> None:
    settings = context.settings
    app.config["RATELIMIT_ENABLED"] = settings.rate_limits
    app.config["RATELIMIT_STORAGE_URI"] = storage_uri(settings.redis_url)
    app.config["RATELIMIT_KEY_PREFIX"] = f"arena-limits:{settings.queue_name}"
    app.config["RATELIMIT_SWALLOW_ERRORS"] = True  # Redis down: serve without limits rather than fail
    # ... and find out quickly: without timeouts a Redis cut off by the network held every request for minutes
    app.config["RATELIMIT_STORAGE_OPTIONS"] = {"socket_timeout": 2, "socket_connect_timeout": 2}
    limiter.init_app(app)
