"""The WSGI entry point for gunicorn: ``gunicorn -c deploy/gunicorn.conf.py arena.web.wsgi:app``.

Each gunicorn worker builds the app when it boots (at start, and whenever one is recycled or replaced).
It brings the schema up to date when it can; when the database cannot be reached at that moment (a
restart, a network partition) it starts anyway and answers 503 until the database is back. Failing the
boot instead made gunicorn's master give up and exit ("Worker failed to boot"): one partition at the
wrong moment took the whole web host down (found by tests/cluster/). Deployments migrate before they
start the web app anyway (`arena db upgrade`: the compose file's migrate service, the systemd unit).
"""

from __future__ import annotations

import logging

from arena.composition import build_context
from arena.config import load_settings
from arena.runtime.logging_setup import configure_logging
from arena.services.errors import unavailable
from arena.web import create_app

settings = load_settings()
configure_logging(settings)
context = build_context(settings, migrate=False)
try:
    context.db.migrate()
except Exception as exc:
    if unavailable(exc) is None:
        raise
    logging.getLogger("arena.web").warning("the database cannot be reached at start (%s); serving 503 until it "
                                           "is back", type(exc).__name__)
app = create_app(settings, context=context)
