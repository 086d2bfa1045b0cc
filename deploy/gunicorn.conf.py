"""gunicorn settings for the arena web app (``gunicorn -c deploy/gunicorn.conf.py arena.web.wsgi:app``).

Every value can be overridden from the environment: ARENA_BIND, WEB_CONCURRENCY, ARENA_WEB_THREADS.
Live streams (server-sent events) would each hold one of these threads, so this service serves none
(``ARENA_LIVE_STREAMS=0``: a page that asks is told to poll); nginx sends ``/live/`` to the gevent
service of deploy/gunicorn_live.conf.py instead.
Requests are short (pages read stored tables, the API never waits on a match), so a few threaded
workers per core serve a lot. A thread waits while its client sends the request, though, so a few
hundred slow clients hold them all: never let clients reach gunicorn directly, put nginx in front
(deploy/nginx.conf.template, the compose file's proxy service; tests/deploy/test_slow_clients.py).
"""

from __future__ import annotations

import multiprocessing
import os

os.environ.setdefault("ARENA_LIVE_STREAMS", "0")  # see the docstring: streams go to the live service

bind = os.environ.get("ARENA_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1))
worker_class = "gthread"
threads = int(os.environ.get("ARENA_WEB_THREADS", "4"))
timeout = 30
graceful_timeout = 20
keepalive = 5
max_requests = 10000  # recycle workers now and then: bounded memory whatever happens
max_requests_jitter = 1000
forwarded_allow_ips = os.environ.get("ARENA_FORWARDED_ALLOW_IPS", "127.0.0.1")


def post_worker_init(worker) -> None:  # type: ignore[no-untyped-def]
    """Move everything loaded at start-up out of the garbage collector's sight: full collections of
    it were the 80-145 ms outliers at the 99th percentile of page times (docs/benchmarks.md)."""
    import gc

    gc.collect()
    gc.freeze()


accesslog = "-"
errorlog = "-"
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        }
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}},
    "loggers": {
        "gunicorn.error": {"handlers": ["console"], "level": "INFO", "propagate": False},
        "gunicorn.access": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
    "root": {"handlers": ["console"], "level": "INFO"},
}
