"""The WSGI entry point for gunicorn: ``gunicorn -c deploy/gunicorn.conf.py arena.web.wsgi:app``."""

from __future__ import annotations

from arena.config import load_settings
from arena.runtime.logging_setup import configure_logging
from arena.web import create_app

settings = load_settings()
configure_logging(settings)
app = create_app(settings)
