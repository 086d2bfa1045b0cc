"""One rule for where a bot stands on the ladder, in a word and a reason."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

from arena.domain.ladder_state import LadderState, ladder_state

NOW = datetime(2026, 12, 1, 23, 0, tzinfo=UTC)


def _bot(**changes):  # type: ignore[no-untyped-def]
    return SimpleNamespace(**({"retired_at": None, "paused_by": None, "paused_reason": None, "recheck_at": None,
                               "status": "active"} | changes))


def test_each_state_with_its_reason() -> None:
    settled = SimpleNamespace(provisional=False, games=40)
    assert ladder_state(_bot(), None).state == LadderState.PLACING
    placing = ladder_state(_bot(), SimpleNamespace(provisional=True, games=1))
    assert placing.state == LadderState.PLACING and "1 rated match so far" in placing.reason
    assert ladder_state(_bot(), settled).state == LadderState.ACTIVE
    owner = ladder_state(_bot(paused_by="owner", paused_reason="rebuilding"), settled)
    assert owner.to_json() == {"state": "paused", "reason": "paused by its owner: rebuilding"}
    probation = ladder_state(_bot(paused_by="probation", paused_reason="4 of its last 5 ladder matches had faults",
                                  recheck_at=NOW), settled)
    assert probation.state == LadderState.PAUSED and "to be re-checked at 2026-12-01 23:00 UTC" in probation.reason
    retired = ladder_state(_bot(retired_at=NOW, paused_by="owner"), settled)
    assert retired.state == LadderState.RETIRED and "keeps its page" in retired.reason
    assert ladder_state(_bot(status="disabled"), settled).state == LadderState.PAUSED


def test_regression_a_placing_bots_reason_repeated_its_state() -> None:
    """The pages show the state as a tag beside the reason: "[placing] placing: 3 rated matches so far"."""
    for rating in (None, SimpleNamespace(provisional=True, games=3)):
        status = ladder_state(_bot(), rating)
        assert status.state == LadderState.PLACING and not status.reason.startswith("placing"), status
    assert ladder_state(_bot(), SimpleNamespace(provisional=True, games=3)).reason == (
        "3 rated matches so far, its rating is still provisional")
