"""An RQ job for tests: what the worker running it has in Redis at that moment (importable by RQ)."""

from __future__ import annotations

from rq import get_current_job


def worker_key() -> tuple[int, str]:
    """(seconds left before the running worker's key expires, the state it says it is in)."""
    job = get_current_job()
    assert job is not None and job.worker_name is not None
    redis, key = job.connection, f"rq:worker:{job.worker_name}"
    return int(redis.ttl(key)), (redis.hget(key, "state") or b"").decode()
