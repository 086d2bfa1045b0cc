"""A bot's host, resolved and checked by the URL guard before any connection is attempted.

- **The URL guard at connect time.** The host is resolved once and every address is checked by the guard;
  the caller connects to the checked address itself (``bot_transport.guarded_socket``,
  ``connect_ahead``), so a DNS answer that changes between check and connect (rebinding) cannot reach a
  refused address.
- **Bounded name resolution.** ``getaddrinfo`` cannot be interrupted and comes before any socket a watchdog
  could cut, so it runs in a thread of its own; the request stops waiting at the call's deadline or at
  ``DNS_TIMEOUT_S``, whichever comes first, and fails as a ``ResolveTimeout`` (a ``timeout`` fault).
"""

from __future__ import annotations

import ipaddress
import re
import socket
import threading
from collections.abc import Callable

from referee.errors import UnsafeURL

AddressGuard = Callable[[str, int], None]  # (ip, port) -> None or raise UnsafeURL
Resolver = Callable[[str, int], list[str]]

DNS_TIMEOUT_S = 2.0  # the most one name resolution may take, whatever the call's budget
MAX_RESOLVING = 64  # resolutions still running (abandoned ones included) before new ones are refused
_resolving = threading.BoundedSemaphore(MAX_RESOLVING)


def resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to, in the resolver's order."""
    return list(dict.fromkeys(str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)))


class ResolveTimeout(OSError):
    """Name resolution did not finish in time."""


def resolve_within(resolver: Resolver, host: str, port: int, timeout_s: float) -> list[str]:
    """``resolver(host, port)``, waited for ``timeout_s`` at most. An abandoned resolution finishes in
    its daemon thread when the system resolver gives up; at most ``MAX_RESOLVING`` run at once, so a
    flood of slow names cannot pile up threads."""
    if not _resolving.acquire(blocking=False):
        raise socket.gaierror(f"too many name resolutions in progress to resolve {host!r}")
    outcome: list[list[str] | BaseException] = []
    done = threading.Event()

    def work() -> None:
        try:
            outcome.append(resolver(host, port))
        except BaseException as exc:  # handed to the waiting caller
            outcome.append(exc)
        finally:
            _resolving.release()
            done.set()

    try:
        threading.Thread(target=work, name="arena-resolve", daemon=True).start()
    except BaseException:  # no thread to be had: its slot is not held for good
        _resolving.release()
        raise
    if not done.wait(max(timeout_s, 0.0)):
        raise ResolveTimeout(f"name resolution of {host!r} took longer than {timeout_s:.3g} s")
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result


Resolving = Callable[[Resolver, str, int, float], list[str]]  # (resolver, host, port, timeout_s) -> addresses


class ResolveFailed(OSError):
    """The bot's host did not resolve to any address."""


def is_literal(host: str, resolver: Resolver) -> str | None:
    """``host`` as an address when it is a plain IP literal (not scoped IPv6) and the resolver the system's:
    no resolver thread needed. Else None."""
    if resolver is not resolve or "%" in host:
        return None
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return None


def checked_addresses(host: str, port: int, timeout_s: float, guard: AddressGuard | None, resolver: Resolver,
                      dns_timeout_s: float, resolving: Resolving = resolve_within) -> list[str]:
    """Every address ``host`` resolves to, each passed by the guard (raises ``UnsafeURL``, ``ResolveTimeout``,
    ``ResolveFailed``): the first is the one to connect to. ``resolving`` runs the resolver (by default in a
    thread of its own, waited for within the time given)."""
    literal = is_literal(host, resolver)
    try:
        addresses = [literal] if literal else resolving(resolver, host, port, min(timeout_s, dns_timeout_s))
    except OSError as exc:
        if isinstance(exc, ResolveTimeout):
            raise
        raise ResolveFailed(f"cannot resolve {host!r}: {exc}") from exc
    if not addresses:
        raise ResolveFailed(f"{host!r} resolved to no address")
    if guard is not None:
        for address in addresses:
            try:
                guard(address, port)  # raises UnsafeURL before any connection is attempted
            except UnsafeURL as exc:
                if literal is not None:
                    raise
                raise UnsafeURL(_named_refusal(str(exc), host, address)) from None
    return addresses


_IPV4 = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b")


def _named_refusal(message: str, host: str, address: str) -> str:
    """The guard's refusal of a host *name*, without the address it resolved to: whoever submits a URL
    reads the refusal, and naming the address let any account map the arena's internal names (``web``,
    ``redis``) to their addresses. The kind of refusal (private, deny list, ...) stays, so an author whose
    name resolves wrongly still learns why."""
    message = message.replace(f"refused to contact {address}", f"refused to contact {host}")
    return _IPV4.sub("its address", message.replace(address, "its address"))


__all__ = ["DNS_TIMEOUT_S", "AddressGuard", "ResolveFailed", "ResolveTimeout", "Resolver", "Resolving", "UnsafeURL",
           "checked_addresses", "is_literal", "resolve", "resolve_within"]
