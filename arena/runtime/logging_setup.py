"""Logging for every arena process: JSON lines in production (one object per line, with ``match_id``
and the other extras a log call carries), readable text in development."""

from __future__ import annotations

import logging
import sys

from pythonjsonlogger.json import JsonFormatter

from arena.config import Settings

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


def json_formatter() -> logging.Formatter:
    return JsonFormatter("%(asctime)s %(levelname)s %(name)s %(message)s",
                         rename_fields={"asctime": "time", "levelname": "level", "name": "logger"})


def configure_logging(settings: Settings, level: int | None = None) -> None:
    """``level``: else ``ARENA_LOG_LEVEL`` (INFO)."""
    level = level if level is not None else logging.getLevelNamesMapping()[settings.log_level.upper()]
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(json_formatter() if settings.log_json else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("rq.worker").setLevel(logging.WARNING)
