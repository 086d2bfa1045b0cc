"""Which bot URLs and addresses the referee may contact.

Production refuses every address that is not globally routable: loopback, private, link-local (cloud
metadata at 169.254.169.254 included), multicast, reserved, unspecified, shared (100.64/10), and IPv6
forms that embed such an IPv4 address (mapped, 6to4, NAT64). Development allows loopback, so bots on
the same machine can play. The check runs on resolved addresses at connect time (see
``bot_transport``), so DNS rebinding cannot slip past it.

An operator may trust private networks that hold only bots (``allowed_networks``). Inside such a
network the network, first-host (where Docker and most routers put the gateway: the host itself) and
broadcast addresses stay refused, and a deny-list (``denied``: e.g. the arena's own addresses) wins over
everything.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from referee.errors import UnsafeURL

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_SIXTOFOUR = ipaddress.IPv6Network("2002::/16")
_METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in _SIXTOFOUR:
        return ip.sixtofour
    return None


Networks = tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]


def _infrastructure(ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
                    net: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    """The network's own, first-host (gateway) or IPv4 broadcast address: never a bot's."""
    if net.num_addresses < 4:
        return False
    return ip in (net.network_address, net.network_address + 1) or (ip.version == 4 and ip == net.broadcast_address)


def address_problem(address: str, allow_loopback: bool, allowed_networks: Networks = (),
                    denied: Networks = ()) -> str | None:
    """Why ``address`` must not be contacted, or None when it may be. ``allowed_networks`` are trusted
    exceptions an operator configured (e.g. a private network that only holds bots); ``denied``
    addresses are refused whatever else holds."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return f"{address!r} is not an IP address"
    if any(ip.version == net.version and ip in net for net in denied):
        return f"{address} is on the arena's deny list"
    for net in allowed_networks:
        if ip.version == net.version and ip in net:
            if _infrastructure(ip, net):
                return f"{address} is the network, gateway or broadcast address of a trusted network"
            return None
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_ipv4(ip)
        if inner is not None:
            problem = address_problem(str(inner), allow_loopback, allowed_networks, denied)
            return f"{address} embeds {inner}: {problem}" if problem else None
    if ip.is_loopback:
        return None if allow_loopback else f"{address} is a loopback address"
    if ip in _METADATA:
        return f"{address} is a cloud metadata address"
    for label, flag in (
        ("unspecified", ip.is_unspecified),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("reserved", ip.is_reserved),
        ("private", ip.is_private),
    ):
        if flag:
            return f"{address} is a {label} address"
    if not ip.is_global:
        return f"{address} is not a globally routable address"
    return None


def parse_networks(text: str) -> Networks:
    """``"10.89.0.0/24, fd00:b07::/64"`` -> networks; a clear error for anything else."""
    networks = []
    for part in (p.strip() for p in text.split(",")):
        if part:
            try:
                networks.append(ipaddress.ip_network(part, strict=False))
            except ValueError as exc:
                raise ValueError(f"not a network: {part!r} ({exc})") from None
    return tuple(networks)


class AddressPolicy:
    """The guard the bot transport calls with every resolved address before connecting."""

    def __init__(self, allow_loopback: bool, allowed_networks: Networks = (), denied: Networks = ()) -> None:
        self.allow_loopback = allow_loopback
        self.allowed_networks = allowed_networks
        self.denied = denied

    def _fields(self) -> tuple[bool, Networks, Networks]:
        return self.allow_loopback, tuple(self.allowed_networks), tuple(self.denied)

    def __eq__(self, other: object) -> bool:
        """Equal policies allow the same addresses: a connection one checked may serve the other
        (``referee.connection_keeper`` keys idle connections by the policy that let them be opened)."""
        return isinstance(other, AddressPolicy) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __call__(self, address: str, port: int) -> None:
        problem = address_problem(address, self.allow_loopback, self.allowed_networks, self.denied)
        if problem:
            raise UnsafeURL(f"refused to contact {address} port {port}: {problem}")


def check_url_shape(url: str) -> str:
    """The URL without a trailing slash; refuses anything but plain http(s) with a host."""
    if not isinstance(url, str) or len(url) > 2000:
        raise UnsafeURL("a bot URL must be a string of at most 2000 characters")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https"):
        raise UnsafeURL(f"only http and https URLs are allowed, got {parts.scheme or 'no scheme'!r}")
    if not parts.hostname:
        raise UnsafeURL("the URL has no host")
    if parts.username or parts.password:
        raise UnsafeURL("credentials in the URL are not allowed")
    if parts.query or parts.fragment:
        raise UnsafeURL("a bot URL may not carry a query or a fragment")
    try:
        parts.port  # noqa: B018 - raises on an invalid port
    except ValueError as exc:
        raise UnsafeURL(f"invalid port: {exc}") from None
    return url.strip().rstrip("/")
