"""A fake health check for the owner tests: healthy unless its URL is marked sick, and it remembers
every call (a fake, not a mock: it answers like the real one)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from arena.config import Settings
from arena.services.accounts import create_account
from arena.storage.db import Database
from arena.storage.models import Account, Bot, Fault, Match, MatchSeat, MatchStatus, utcnow
from referee.health import HealthReport

INFO = {"apiversion": "1", "name": "fake", "author": "t", "version": "1", "games": ["piranha-pedro"]}


@dataclass
class FakeHealth:
    sick: set[str] = field(default_factory=set)
    calls: list[tuple[str, str]] = field(default_factory=list)
    capacity: int | None = None
    unsigned_answered: set[str] = field(default_factory=set)  # bots that answer an /act without a signature
    probed: list[str] = field(default_factory=list)  # the URLs checked with ``knows_secret``

    def __call__(self, url: str, secret: str, game: str, settings: Settings,
                 knows_secret: bool = False) -> HealthReport:
        self.calls.append((url, secret))
        if url in self.sick:
            return HealthReport(ok=False, problems=["GET /: connection_error: connection refused at the bot's address"])
        info = dict(INFO) | ({"capacity": self.capacity} if self.capacity else {})
        if knows_secret:
            self.probed.append(url)
        refuses = (url not in self.unsigned_answered) if knows_secret else None
        return HealthReport(ok=True, info=info, refuses_unsigned=refuses)


def owner_with_bot(db: Database, name: str = "alice", bot: str = "pedro",
                   url: str = "http://127.0.0.1:9001") -> tuple[int, int]:
    """(account id, bot id) of a fresh account with one active bot."""
    with db.session() as session:
        account, _token = create_account(session, name)
        row = Bot(owner_id=account.id, name=bot, url=url, game="piranha-pedro", secret="s" * 48, info=dict(INFO))
        session.add(row)
        session.flush()
        return account.id, row.id


def account(db: Database, account_id: int):  # type: ignore[no-untyped-def]
    with db.session(readonly=True) as session:
        return session.get(Account, account_id)


def ladder_matches(db: Database, bot_id: int, outcomes: list[bool], ladder_id: int | None = 1,
                   minutes_ago: int = 0) -> list[int]:
    """Finished matches of ``bot_id`` (True: the bot faulted in it), oldest first."""
    ids = []
    with db.session() as session:
        for n, faulted in enumerate(outcomes):
            finished = utcnow() - timedelta(minutes=minutes_ago, seconds=len(outcomes) - n)
            match = Match(ladder_id=ladder_id, game="piranha-pedro", num_players=3, seed=n, time_limit_ms=1000,
                          status=MatchStatus.FINISHED, finished_at=finished)
            session.add(match)
            session.flush()
            session.add(MatchSeat(match_id=match.id, seat=0, bot_id=bot_id, rank=1, faults=int(faulted),
                                  forfeited=False))
            if faulted:
                session.add(Fault(match_id=match.id, bot_id=bot_id, seat=0, turn=3, path="/act", kind="timeout",
                                  message="no complete answer before the deadline"))
            ids.append(match.id)
    return ids
