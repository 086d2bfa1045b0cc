"""gunicorn settings for the arena's live streams (``gunicorn -c deploy/gunicorn_live.conf.py arena.web.wsgi:app``).

The same app as the web service, in a process made for many idle connections: the gevent worker gives
every spectator's server-sent event stream (``/live/<topic>``) a greenlet instead of a thread, and one Redis
subscription per process fans every event out to them (``arena.runtime.live_bus``). nginx sends ``/live/``
here and everything else to the threaded web service (deploy/nginx.conf.template). One process held 1,000
spectators at about 20 KiB each, with a p99 delay from a step to its spectators of 26-241 ms on a busy
2-core machine (bench/spectators.py, docs/benchmarks.md).

From the environment: ARENA_LIVE_BIND (default 0.0.0.0:8001), ARENA_LIVE_WORKERS (processes, default 1),
ARENA_LIVE_CONNECTIONS (connections per process, default 10000) and ARENA_LIVE_STREAMS (streams per
process before spectators are told to poll, default 5000 here).
"""

from __future__ import annotations

import os

os.environ.setdefault("ARENA_LIVE_STREAMS", "5000")  # read by the app's settings in each worker

bind = os.environ.get("ARENA_LIVE_BIND", "0.0.0.0:8001")
workers = int(os.environ.get("ARENA_LIVE_WORKERS", "1"))
worker_class = "gevent"
worker_connections = int(os.environ.get("ARENA_LIVE_CONNECTIONS", "10000"))
timeout = 30  # the gevent worker tells the master it lives from its own greenlet, streams or not
graceful_timeout = 5  # streams never end by themselves: browsers reconnect to another process at once
keepalive = 5
max_requests = 0  # a recycled process would cut every stream it holds
forwarded_allow_ips = os.environ.get("ARENA_FORWARDED_ALLOW_IPS", "127.0.0.1")
accesslog = None  # a stream is one long request; the access log would say nothing useful
errorlog = "-"
