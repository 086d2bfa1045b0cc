"""Health check of a bot before it is admitted: the ``arena check`` validation episode
(referee/checker.py) for the game it is submitted to, through the same guarded, deadline-bound client
the matches use. One home for the logic: the CLI, the submission page and the API's 422 all show the
lines of the same report.

The problems reported name the kind of each problem (fault kind, HTTP status, which schema rule) and a
fix, and never quote what the bot sent: a user could otherwise aim the check at a service the arena can
reach and read its answers back from the refusal."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from referee.bot_transport import AddressGuard, Resolver, resolve
from referee.check_report import Status
from referee.checker import check_protocol
from referee.protocol import TimeControls


@dataclass
class HealthReport:
    ok: bool
    info: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    latency_ms: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # with ``knows_secret``: whether the bot refused an /act without a signature (None: not probed)
    refuses_unsigned: bool | None = None


def check_bot(url: str, secret: str, game_name: str, guard: AddressGuard | None = None,
              resolver: Resolver = resolve, timeout_ms: int = 3000, knows_secret: bool = False) -> HealthReport:
    """Everything that would make the bot fault in a match, in words a bot author can act on; never
    raises for bot behaviour. A bot being submitted does not know ``secret`` yet (it is shown once the bot
    is admitted), so unsigned requests are not probed unless ``knows_secret``; one answer per decision kind
    keeps a submission of a bot that thinks for its whole deadline to a few seconds."""
    report = check_protocol(url, secret, [game_name], guard=guard, resolver=resolver,
                            time_controls=TimeControls(decision_ms=timeout_ms), identity_ms=timeout_ms,
                            probe_signatures=knows_secret, asks_per_kind=1, max_seconds=10.0)
    unsigned = [item.status for item in report.items if item.name.startswith("unsigned request")]
    refuses = None if not unsigned or unsigned[0] == Status.SKIP else unsigned[0] == Status.PASS
    return HealthReport(ok=report.ok, info=report.info, problems=report.problems(), latency_ms=report.latency_ms,
                        warnings=report.warnings(), refuses_unsigned=refuses)
