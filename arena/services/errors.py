"""Errors a service raises for the web and CLI layers to turn into a status and a clear message."""

from __future__ import annotations

from typing import Any

#: The largest id a stored row can have: the id columns are 32-bit integers on PostgreSQL. A bigger id
#: (or a smaller one than 1) names nothing, and must be answered as such before it reaches the database.
MAX_ID = 2**31 - 1


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


class Unavailable(ServiceError):
    """The database or Redis cannot be reached right now (a restart, a network partition)."""

    status = 503
    retry_after_s = 5


def unavailable(exc: BaseException) -> Unavailable | None:
    """An ``Unavailable`` when ``exc`` says the database or Redis is out of reach, else None: the web
    answers 503 with a message and Retry-After for those, instead of an "internal error"."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError
    from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    if isinstance(exc, OperationalError | InterfaceError | PoolTimeout) or (
            isinstance(exc, DBAPIError) and exc.connection_invalidated):
        return Unavailable("the arena's database cannot be reached at the moment; try again in a few seconds")
    if isinstance(exc, RedisConnectionError | RedisTimeoutError):
        return Unavailable("the arena's match queue cannot be reached at the moment; try again in a few seconds")
    return None


def require_id(value: int, what: str) -> None:
    """``NotFound`` for an id no row can have (out of the id columns' range), without asking the database."""
    if not 1 <= value <= MAX_ID:
        raise NotFound(f"no {what} {value}")
