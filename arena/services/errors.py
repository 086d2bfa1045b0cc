"""Errors a service raises for the web and CLI layers to turn into a status and a clear message."""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    status = 400

    def __init__(self, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class Invalid(ServiceError):
    status = 422


class NotFound(ServiceError):
    status = 404


class Forbidden(ServiceError):
    status = 403


class Unauthorized(ServiceError):
    status = 401


class Conflict(ServiceError):
    status = 409
