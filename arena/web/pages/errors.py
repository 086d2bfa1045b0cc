"""Errors on pages are pages: a service's message with its status, a CSRF refusal that says what to do."""

from __future__ import annotations

import logging

from flask_limiter.errors import RateLimitExceeded
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException

from arena.services.errors import ServiceError, unavailable
from arena.web.pages import pages
from arena.web.pages.common import page
from arena.web.ratelimit import retry_in

log = logging.getLogger("arena.web")
TITLES = {400: "Bad request", 401: "Sign in needed", 403: "Not allowed", 404: "Not found", 405: "Method not allowed",
          409: "Conflict", 422: "Not valid", 429: "Too many requests", 500: "Something went wrong",
          503: "Unavailable for a moment"}


def error_page(status: int, message: str) -> tuple[str, int]:
    return page("error.html", status, status_code=status, title=TITLES.get(status, "Error"), message=message)


@pages.errorhandler(CSRFError)
def csrf_refused(exc: CSRFError) -> tuple[str, int]:
    return error_page(400, f"The form could not be accepted ({exc.description}) Reload the form and try again.")


@pages.errorhandler(ServiceError)
def service_error(exc: ServiceError) -> tuple[str, int]:
    return error_page(exc.status, exc.message)


@pages.errorhandler(RateLimitExceeded)
def rate_limited(exc: RateLimitExceeded) -> tuple[str, int]:
    return error_page(429, f"Too many requests: the limit is {exc.description}. Try again {retry_in()}.")


@pages.errorhandler(HTTPException)
def http_error(exc: HTTPException) -> tuple[str, int]:
    return error_page(exc.code or 500, exc.description or exc.name)


@pages.errorhandler(Exception)
def unexpected(exc: Exception) -> tuple[str, int] | tuple[str, int, dict[str, str]]:
    if isinstance(exc, HTTPException):
        return http_error(exc)
    down = unavailable(exc)
    if down is not None:
        log.warning("unavailable: %s: %s", type(exc).__name__, exc)
        body, status = error_page(down.status, down.message[0].upper() + down.message[1:] + ".")
        return body, status, {"Retry-After": str(down.retry_after_s)}
    log.exception("unexpected error on a page")
    return error_page(500, "An internal error occurred; it has been logged.")
