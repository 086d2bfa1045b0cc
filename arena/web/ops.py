"""Operations endpoints: ``/healthz`` (database and Redis reachable) and ``/metrics`` (Prometheus)."""

from __future__ import annotations

import logging

from flask import Blueprint, Response, current_app, jsonify
from prometheus_client import CONTENT_TYPE_LATEST
from sqlalchemy import text

from arena.composition import Context
from arena.services.metrics import exposition

ops = Blueprint("ops", __name__)
log = logging.getLogger("arena.web")


def _context() -> Context:
    return current_app.extensions["arena"]


@ops.get("/healthz")
def healthz():  # type: ignore[no-untyped-def]
    ctx = _context()
    checks: dict[str, str] = {}
    try:
        with ctx.db.session(readonly=True) as session:
            session.execute(text("SELECT 1"))
        checks["database"] = "ok"
    except Exception as exc:
        checks["database"] = f"error: {type(exc).__name__}"
        log.warning("health check: database unreachable: %s", exc)
    if ctx.queue is None:
        checks["redis"] = "not configured"
    else:
        try:
            ctx.queue.redis.ping()
            checks["redis"] = "ok"
        except Exception as exc:
            checks["redis"] = f"error: {type(exc).__name__}"
            log.warning("health check: Redis unreachable: %s", exc)
    healthy = all(v in ("ok", "not configured") for v in checks.values())
    response = jsonify({"status": "ok" if healthy else "unavailable", **checks})
    response.status_code = 200 if healthy else 503
    return response


@ops.get("/metrics")
def metrics():  # type: ignore[no-untyped-def]
    ctx = _context()
    depth = None
    if ctx.queue is not None:
        try:
            depth = ctx.queue.depth()
        except Exception:  # Redis down: the other metrics still matter
            depth = None
    with ctx.db.session(readonly=True) as session:
        body = exposition(session, depth)
    return Response(body, mimetype=CONTENT_TYPE_LATEST)
