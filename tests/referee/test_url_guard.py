"""The URL guard: every refused address family is refused before any connection is attempted, and the
address checked is the address connected to (DNS rebinding cannot slip through)."""

from __future__ import annotations

import pytest

from referee.bot_client import BotClient
from referee.errors import UnsafeURL
from referee.health import check_bot
from referee.runner import BotSpec, play_match
from referee.url_guard import AddressPolicy, address_problem, check_url_shape, parse_networks
from referee.watchdog import Watchdog
from tests.connection_spy import ConnectionSpy, root_calls  # the ``spy`` fixture is in tests/conftest.py

REFUSED = [
    ("127.0.0.1", "loopback"), ("127.255.0.9", "loopback"), ("::1", "loopback"),
    ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("192.168.1.1", "private"), ("fd00::1", "private"),
    ("169.254.169.254", "metadata"), ("fd00:ec2::254", "metadata"), ("169.254.1.1", "link-local"),
    ("fe80::1", "link-local"), ("224.0.0.1", "multicast"), ("ff02::1", "multicast"),
    ("0.0.0.0", "unspecified"), ("::", "unspecified"), ("240.0.0.1", "reserved"), ("255.255.255.255", ""),
    ("100.64.0.1", "routable"), ("192.0.2.10", ""), ("198.18.0.1", ""),
    ("::ffff:127.0.0.1", "loopback"), ("::ffff:10.0.0.1", "private"), ("2002:7f00:1::", "loopback"),
    ("64:ff9b::a00:1", "private"), ("2001::1", ""), ("fe80::1%eth0", "link-local"),
]
ALLOWED_PUBLIC = ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"]


@pytest.mark.parametrize(("address", "word"), REFUSED, ids=[a for a, _ in REFUSED])
def test_every_non_global_address_is_refused_in_production(address: str, word: str) -> None:
    problem = address_problem(address, allow_loopback=False)
    assert problem is not None and word in problem


@pytest.mark.parametrize("address", ALLOWED_PUBLIC)
def test_global_addresses_pass_the_guard(address: str) -> None:
    assert address_problem(address, allow_loopback=False) is None


def test_development_allows_loopback_and_nothing_else() -> None:
    assert address_problem("127.0.0.1", allow_loopback=True) is None
    assert address_problem("::1", allow_loopback=True) is None
    assert address_problem("::ffff:127.0.0.1", allow_loopback=True) is None
    for address in ("10.0.0.1", "169.254.169.254", "192.168.0.1", "fd00::1", "0.0.0.0"):
        assert address_problem(address, allow_loopback=True) is not None


@pytest.mark.parametrize("url", ["ftp://x.org/", "file:///etc/passwd", "gopher://x", "http://", "//x.org",
                                 "http://a:b@x.org/", "http://x.org/?a=1", "http://x.org/#f", "http://x.org:99999/",
                                 "x.org", 5, None])
def test_only_plain_http_urls_are_accepted(url) -> None:
    with pytest.raises(UnsafeURL):
        check_url_shape(url)


def test_url_shape_keeps_a_path_and_drops_a_trailing_slash() -> None:
    assert check_url_shape("https://bots.example.org/alice/") == "https://bots.example.org/alice"


@pytest.mark.parametrize(("address", "word"), REFUSED, ids=[a for a, _ in REFUSED])
def test_a_refused_address_is_never_connected_to(address: str, word: str, spy: ConnectionSpy) -> None:
    """A host resolving to a refused address: the match call fails as unsafe_url, no connection attempted."""
    client = BotClient("http://bot.example.test:8080", guard=AddressPolicy(allow_loopback=False),
                       resolver=lambda host, port: [address.split("%")[0] if "%" not in address else address])
    (reply,) = root_calls(client)
    assert reply.fault is not None and reply.fault.kind == "unsafe_url"
    assert spy.attempts == []


def test_one_refused_address_among_several_refuses_the_host(spy: ConnectionSpy) -> None:
    client = BotClient("http://mixed.example.test", guard=AddressPolicy(allow_loopback=False),
                       resolver=lambda host, port: ["8.8.8.8", "10.0.0.7"])
    (reply,) = root_calls(client)
    assert reply.fault is not None and reply.fault.kind == "unsafe_url" and "private address" in reply.fault.message
    assert "10.0.0.7" not in reply.fault.message  # a name's refusal does not tell where it resolved
    assert spy.attempts == []


def test_dns_rebinding_between_check_and_connect_cannot_reach_a_refused_address(spy, random_bots) -> None:
    """The name first resolves to loopback (allowed in development), then to a private address. Each
    connection resolves once and connects to exactly the address it checked, so the second answer is
    refused before any connection to it is attempted."""
    port = int(random_bots[0].url.rsplit(":", 1)[1])
    answers = iter([["127.0.0.1"], ["10.0.0.5"], ["10.0.0.5"], ["10.0.0.5"]])
    client = BotClient(f"http://rebind.example.test:{port}", guard=AddressPolicy(allow_loopback=True),
                       resolver=lambda host, p: next(answers))
    watchdog = Watchdog()
    try:
        first = client.call(watchdog, "GET", "/", None, {}, 2.0)
        assert first.fault is None and first.data["apiversion"] == "1"
        client.session.close()  # the next request needs a new connection, hence a new resolution
        second = client.call(watchdog, "GET", "/", None, {}, 2.0)
    finally:
        client.close()
        watchdog.close()
    assert second.fault is not None and second.fault.kind == "unsafe_url" and "private address" in second.fault.message
    assert spy.attempts == [("127.0.0.1", port)]


def test_production_health_check_refuses_a_loopback_bot_before_connecting(spy, random_bots) -> None:
    report = check_bot(random_bots[0].url, "s", "piranha-pedro", guard=AddressPolicy(allow_loopback=False))
    assert not report.ok and "loopback" in report.problems[0]
    assert spy.attempts == []


def test_a_match_seat_whose_address_is_refused_forfeits_without_a_connection(spy, random_bots) -> None:
    bots = [BotSpec("http://evil.example.test:80", name="evil"), BotSpec(random_bots[1].url, name="ok")]
    replay = play_match("piranha-pedro", bots, seed=2, guard=AddressPolicy(allow_loopback=True),
                        resolver=lambda host, port: ["169.254.169.254"] if host == "evil.example.test"
                        else ["127.0.0.1"])
    assert replay["faults"][0]["kind"] == "unsafe_url" and replay["result"]["forfeited"] == [0]
    assert all(address[0] == "127.0.0.1" for address in spy.attempts)


def test_an_operator_may_trust_a_bots_only_network_and_nothing_more() -> None:
    networks = parse_networks("10.89.0.0/24, fd00:b07::/64")
    assert address_problem("10.89.0.17", False, networks) is None
    assert address_problem("fd00:b07::5", False, networks) is None
    assert address_problem("10.89.1.17", False, networks) is not None
    assert address_problem("127.0.0.1", False, networks) is not None
    with pytest.raises(ValueError):
        parse_networks("10.0.0.0/33")
