"""Every error as JSON with the right status: service errors, HTTP errors, and the unexpected."""

from __future__ import annotations

import logging

from flask import jsonify, request
from werkzeug.exceptions import HTTPException, MethodNotAllowed

from arena.services.errors import ServiceError, unavailable
from arena.web.api import api
from arena.web.ratelimit import retry_in

log = logging.getLogger("arena.web")


def error_response(status: int, message: str, details: object = None):  # type: ignore[no-untyped-def]
    body: dict = {"error": message, "status": status}
    if details is not None:
        body["details"] = details
    response = jsonify(body)
    response.status_code = status
    routing = request.routing_exception if status == 405 else None
    if isinstance(routing, MethodNotAllowed) and routing.valid_methods:
        response.headers["Allow"] = ", ".join(sorted(routing.valid_methods))  # RFC 9110: a 405 lists them
    return response


@api.errorhandler(ServiceError)
def service_error(exc: ServiceError):  # type: ignore[no-untyped-def]
    response = error_response(exc.status, exc.message, exc.details)
    if exc.status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="arena"'
    return response


@api.errorhandler(HTTPException)
def http_error(exc: HTTPException):  # type: ignore[no-untyped-def]
    messages = {413: "the request body is too large", 404: "no such resource", 405: "method not allowed",
                429: f"too many requests: {exc.description}; try again {retry_in()}"}
    return error_response(exc.code or 500, messages.get(exc.code or 0, exc.description or exc.name))


@api.errorhandler(Exception)
def unexpected(exc: Exception):  # type: ignore[no-untyped-def]
    if isinstance(exc, HTTPException):
        return http_error(exc)
    down = unavailable(exc)
    if down is not None:
        log.warning("unavailable: %s: %s", type(exc).__name__, exc)
        response = error_response(down.status, down.message)
        response.headers["Retry-After"] = str(down.retry_after_s)
        return response
    log.exception("unexpected error")
    return error_response(500, "internal error; it has been logged")
