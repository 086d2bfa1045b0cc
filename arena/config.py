"""Settings from ``ARENA_*`` environment variables, with safe defaults.

Development (the default) allows bot URLs on loopback and generates a throwaway secret key.
Production (``ARENA_ENV=production``) requires ``ARENA_SECRET_KEY`` and refuses every bot address
that is not globally routable.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from referee.protocol import TimeControls
from referee.url_guard import parse_networks


class ConfigError(ValueError):
    """A setting is missing or malformed."""


@dataclass(frozen=True)
class Settings:
    env: str = "development"
    data_dir: Path = Path("arena-data")
    database_url: str = ""  # empty: SQLite file in data_dir
    redis_url: str = ""  # empty: `arena up` starts an embedded Redis
    secret_key: str = ""
    deal_secret: str = ""  # keys deal seeds; empty: from ARENA_SECRET_KEY in production, else data_dir/deal-secret
    open_signup: bool = True
    allow_loopback_bots: bool = True
    allow_bot_networks: str = ""  # comma-separated CIDRs trusted to hold bots, e.g. a private bots-only network
    deny_bot_addresses: str = ""  # comma-separated addresses/CIDRs never contacted (the arena's own, a gateway)
    queue_name: str = "arena-matches"
    decision_ms: int = 1000
    start_ms: int = 5000
    strike_limit: int = 3
    max_response_bytes: int = 64 * 1024
    max_request_bytes: int = 256 * 1024
    match_lease_s: int = 30
    reconcile_interval_s: int = 15
    refit_delay_s: int = 2  # a leaderboard is refitted at most this often while matches keep finishing
    job_timeout_s: int = 3600
    matches_per_job: int = 16  # a tournament's matches go to the workers in jobs of up to this many (1: one each)
    db_timeout_s: int = 5  # PostgreSQL: connecting, and unacknowledged writes on a connection, fail after this
    health_check: bool = True
    rate_limits: bool = True
    signup_rate: str = "20/hour"
    bot_rate: str = "30/hour"
    tournament_rate: str = "30/hour"
    session_days: int = 14  # a page sign-in lasts this long at most (signing out ends it at once)
    log_json: bool = False
    log_level: str = "INFO"  # the processes' logging threshold (arena demo sets WARNING: its terminal is for people)
    docs_dir: str = ""  # empty: the repository's docs/ folder (set it for installs outside the repository)
    proxy_hops: int = 0  # reverse proxies in front of the web app whose X-Forwarded-* headers to trust
    # The ladder (docs/ladder.md): on for `arena up`, `arena demo` and production; off under ARENA_ENV=test
    # unless ARENA_LADDER is set, so tests that create bots get no ladder match they did not ask for (and
    # there ARENA_LADDER_NEW_SECRET_S is 0 unless set).
    ladder: bool = True
    ladder_players: str = "3"  # comma-separated player counts: one ladder per game and count it allows
    ladder_in_flight: int = 8  # ladder matches queued or running at once, over every ladder
    ladder_spare_workers: int = 1  # workers the ladder's owed matches leave free for a newcomer's first match
    ladder_per_hour: int = 3600  # ladder matches created per hour, over every ladder
    ladder_maintenance_per_hour: int = 30  # per ladder, once its leaderboard has settled
    ladder_tick_ms: int = 1000  # the scheduler looks again at least this often (a new bot wakes it at once)
    # Probation and owner limits on the ladder (arena/services/probation.py, arena/services/bot_owner.py)
    ladder_fault_rate: float = 0.5  # share of recent ladder matches with faults that puts a bot on probation
    ladder_fault_window: int = 10  # how many of its latest ladder matches are looked at
    ladder_fault_min_matches: int = 4  # fewer matches than this since its last resume: never judged
    ladder_recheck_s: int = 60  # first re-check of a bot on probation; doubles with every strike
    ladder_recheck_max_s: int = 6 * 3600  # the back-off never waits longer than this
    # A bot just submitted, or whose secret was just rotated, joins the ladder this long after (its owner
    # restarts it with the secret meanwhile), or when its owner resumes it; 0: at once
    ladder_new_secret_s: int = 120
    ladder_max_capacity: int = 4  # the most concurrent ladder matches an owner may allow one bot
    # "independent": each rotation of a ladder table its own deal; "duplicate": a table's rotations share one,
    # which cancels deal luck but hands a bot that remembers its earlier seats its opponents' hands
    ladder_deals: str = "independent"
    live_streams: int = 200  # open live streams (server-sent events) per web process; past it pages poll
    live_stream_s: int = 300  # one live stream's longest life; the browser opens the next one at once
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def production(self) -> bool:
        return self.env == "production"

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.data_dir / 'arena.db').resolve()}"

    def deal_key(self) -> bytes:
        """The key that makes match seeds unpredictable from a tournament's public seed. Kept, not drawn per
        process, so an organizer can rerun a tournament on the same deals on the same arena."""
        if self.deal_secret:
            return self.deal_secret.encode("utf-8")
        path = self.data_dir / DEAL_SECRET_FILE
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            draft = path.with_name(f".{DEAL_SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
            fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_hex(32))
            try:  # whole or not at all: a reader never sees a file being written
                os.link(draft, path)
            except FileExistsError:  # another process kept its key first: use that one
                pass
            finally:
                draft.unlink()
        key = path.read_bytes().strip()
        if len(key) < MIN_DEAL_SECRET:
            raise ConfigError(f"{path} holds no usable deal key; remove it to have a new one made")
        return key

    def time_controls(self, decision_ms: int | None = None) -> TimeControls:
        return TimeControls(decision_ms=decision_ms or self.decision_ms, start_ms=self.start_ms,
                            strike_limit=self.strike_limit, max_response_bytes=self.max_response_bytes)


def ladder_player_counts(settings: Settings) -> tuple[int, ...]:
    """The player counts of ``ARENA_LADDER_PLAYERS``, sorted, each from 2 to 6."""
    counts = sorted({int(part) for part in settings.ladder_players.split(",") if part.strip()})
    if not counts or not all(2 <= count <= 6 for count in counts):
        raise ValueError(settings.ladder_players)
    return tuple(counts)


DEAL_SECRET_FILE = "deal-secret"
MIN_DEAL_SECRET = 32  # characters: a short key would let anyone search for it from published seeds
_BOOL = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


def _convert(name: str, raw: str, kind: Any) -> Any:
    try:
        if kind in (bool, "bool"):
            return _BOOL[raw.strip().lower()]
        if kind in (int, "int"):
            return int(raw)
        if kind in (float, "float"):
            return float(raw)
        if kind in (Path, "Path"):
            return Path(raw)
    except (KeyError, ValueError):
        raise ConfigError(f"ARENA_{name.upper()}={raw!r} is not a valid {kind}") from None
    return raw


def load_settings(environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Defaults, then ``ARENA_*`` variables, then explicit overrides (tests)."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for f in fields(Settings):
        if f.name == "extra":
            continue
        key = f"ARENA_{f.name.upper()}"
        if key in environ:
            values[f.name] = _convert(f.name, environ[key], f.type)
    settings = replace(Settings(), **values)
    if settings.env not in ("development", "production", "test"):
        raise ConfigError(f"ARENA_ENV must be development, production or test, not {settings.env!r}")
    if settings.production and "ARENA_ALLOW_LOOPBACK_BOTS" not in environ and "allow_loopback_bots" not in overrides:
        settings = replace(settings, allow_loopback_bots=False)
    if settings.production and "ARENA_LOG_JSON" not in environ and "log_json" not in overrides:
        settings = replace(settings, log_json=True)
    settings = replace(settings, **overrides)
    if settings.env == "test" and "ARENA_LADDER" not in environ and "ladder" not in overrides:
        settings = replace(settings, ladder=False)
    if (settings.env == "test" and "ARENA_LADDER_NEW_SECRET_S" not in environ
            and "ladder_new_secret_s" not in overrides):  # a test that asks for the ladder sees its bots placed
        settings = replace(settings, ladder_new_secret_s=0)
    for name in ("allow_bot_networks", "deny_bot_addresses"):
        try:
            parse_networks(getattr(settings, name))
        except ValueError as exc:
            raise ConfigError(f"ARENA_{name.upper()}: {exc}") from None
    if settings.deal_secret and len(settings.deal_secret) < MIN_DEAL_SECRET:
        raise ConfigError(f"ARENA_DEAL_SECRET must be at least {MIN_DEAL_SECRET} characters")
    try:
        ladder_player_counts(settings)
    except ValueError:
        raise ConfigError(f"ARENA_LADDER_PLAYERS must be player counts like '3' or '3,4,6', "
                          f"not {settings.ladder_players!r}") from None
    for name in ("ladder_in_flight", "ladder_tick_ms", "matches_per_job"):
        if getattr(settings, name) < 1:
            raise ConfigError(f"ARENA_{name.upper()} must be at least 1")
    if settings.ladder_spare_workers < 0:
        raise ConfigError("ARENA_LADDER_SPARE_WORKERS must be at least 0")
    if not 0 < settings.ladder_fault_rate <= 1:
        raise ConfigError(f"ARENA_LADDER_FAULT_RATE must be in (0, 1], not {settings.ladder_fault_rate}")
    if settings.ladder_new_secret_s < 0:
        raise ConfigError("ARENA_LADDER_NEW_SECRET_S must be at least 0")
    if settings.ladder_deals not in ("independent", "duplicate"):
        raise ConfigError(f"ARENA_LADDER_DEALS must be independent or duplicate, not {settings.ladder_deals!r}")
    if min(settings.ladder_fault_window, settings.ladder_fault_min_matches, settings.ladder_recheck_s,
           settings.ladder_max_capacity) < 1:
        raise ConfigError("ARENA_LADDER_FAULT_WINDOW, _FAULT_MIN_MATCHES, _RECHECK_S and _MAX_CAPACITY must be >= 1")
    if settings.log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        raise ConfigError(f"ARENA_LOG_LEVEL must be DEBUG, INFO, WARNING or ERROR, not {settings.log_level!r}")
    if settings.session_days < 1:
        raise ConfigError(f"ARENA_SESSION_DAYS must be at least 1, not {settings.session_days}")
    if settings.production and settings.secret_key and not settings.deal_secret:  # every host derives the same key
        settings = replace(settings, deal_secret=hmac.new(settings.secret_key.encode("utf-8"), b"arena deal seeds",
                                                          hashlib.sha256).hexdigest())
    if not settings.secret_key:
        if settings.production:
            raise ConfigError("ARENA_SECRET_KEY is required when ARENA_ENV=production")
        settings = replace(settings, secret_key=secrets.token_hex(32))
    return settings
