"""An RQ job for tests: publishes one kept live event through the worker's own context (importable by RQ)."""

from __future__ import annotations

from arena.runtime.jobs import worker_context


def publish_status(topic: str) -> None:
    live = worker_context().live
    assert live is not None
    live.publish(topic, "status", {"status": "finished"}, keep=True)
