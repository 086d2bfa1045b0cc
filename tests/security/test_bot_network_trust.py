"""Issue 15, "docker-compose network trust": ``ARENA_ALLOW_BOT_NETWORKS`` covering the compose network let
users aim health checks at the web, worker, database and gateway containers, and up to 200 bytes of
the answer came back in the 422. Now the arena's own addresses and a trusted network's gateway are
refused before any connection, the compose file trusts only the addresses its bots have, and a 422
names the kind of each problem, never what the address sent.

Every refused address here is refused before a connection is attempted (a spy replaces
``socket.create_connection`` and allows loopback only); the bots that answer are on 127.0.0.1."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
import yaml

from arena.config import ConfigError, load_settings
from arena.services.bots import address_guard
from referee.bot_client import BotClient
from referee.health import check_bot
from referee.url_guard import AddressPolicy, parse_networks
from tests import bot_zoo
from tests.arena.helpers import auth, token_for
from tests.connection_spy import root_calls

COMPOSE = Path(__file__).resolve().parents[2] / "deploy" / "docker-compose.yml"
SECRET = "TOP-SECRET-INTERNAL-ANSWER"


def _production(**overrides: str):  # type: ignore[no-untyped-def]
    return load_settings({}, env="production", secret_key="k", **overrides)


@pytest.mark.parametrize(("address", "word"), [
    ("10.89.0.1", "gateway"), ("10.89.0.0", "gateway"), ("10.89.0.255", "gateway"),
    ("10.89.0.5", "deny list"), ("10.89.0.127", "deny list"), ("172.18.0.3", "private"),
    ("fd00:b07::1", "gateway"), ("::ffff:10.89.0.1", "gateway"),
])
def test_compose_network_trust_lets_health_checks_reach_arena_services(address, word, spy) -> None:
    settings = _production(allow_bot_networks="10.89.0.0/24, fd00:b07::/64",
                           deny_bot_addresses="10.89.0.4/30, 10.89.0.127")
    report = check_bot("http://web:8000", "s", "piranha-pedro", guard=address_guard(settings),
                       resolver=lambda host, port: [address])
    assert not report.ok and "unsafe_url" in report.problems[0] and word in report.problems[0], report.problems
    assert spy.attempts == []


@pytest.mark.parametrize("address", ["10.89.0.5", "10.89.0.1", "172.18.0.3", "fd00:b07::1", "::ffff:10.89.0.1"])
def test_regression_a_refused_host_name_told_any_account_its_internal_address(address, spy) -> None:
    """Submitting ``http://web:8000`` answered "refused to contact 10.89.0.5 port 8000: ... deny list": any
    account could map the arena's internal names to their addresses (and read the trusted network). The
    refusal of a name now says why without the address or the network."""
    settings = _production(allow_bot_networks="10.89.0.0/24, fd00:b07::/64",
                           deny_bot_addresses="10.89.0.4/30, 10.89.0.127")
    report = check_bot("http://web:8000", "s", "piranha-pedro", guard=address_guard(settings),
                       resolver=lambda host, port: [address])
    problem = report.problems[0]
    assert not report.ok and "refused to contact web port 8000" in problem, problem
    for secret in (address, "10.89.0", "fd00:b07", "172.18", "/24", "/64"):
        assert secret not in problem, problem
    assert spy.attempts == []


def test_the_deny_list_wins_over_loopback_and_allowed_networks(spy, random_bots) -> None:
    port = int(random_bots[0].url.rsplit(":", 1)[1])
    guard = AddressPolicy(allow_loopback=True, denied=parse_networks("127.0.0.0/8"))
    client = BotClient(random_bots[0].url, guard=guard)
    (reply,) = root_calls(client)
    assert reply.fault is not None and reply.fault.kind == "unsafe_url" and "deny list" in reply.fault.message
    assert spy.attempts == [] and port
    allowed = AddressPolicy(allow_loopback=False, allowed_networks=parse_networks("10.89.0.128/25"))
    allowed("10.89.0.201", 9001)  # a bot's fixed address passes


def test_a_malformed_deny_list_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="ARENA_DENY_BOT_ADDRESSES"):
        load_settings({"ARENA_DENY_BOT_ADDRESSES": "10.89.0.300"})


def test_the_compose_file_trusts_only_its_bots_addresses() -> None:
    """What bots may be holds bots only: every fixed address in an allowed network belongs to a bot
    service, the dynamic pool (web, workers), the gateway and the deny-list lie outside it, and the
    database and Redis are not on the bots network at all."""
    compose = yaml.safe_load(COMPOSE.read_text())
    env = compose["x-arena-env"]
    allowed = parse_networks(env["ARENA_ALLOW_BOT_NETWORKS"])
    denied = parse_networks(env.get("ARENA_DENY_BOT_ADDRESSES", ""))
    assert allowed
    bots_net = compose["networks"]["bots"]["ipam"]["config"][0]
    dynamic = ipaddress.ip_network(bots_net["ip_range"])
    gateway = ipaddress.ip_address(bots_net["gateway"])
    assert not any(dynamic.overlaps(net) for net in allowed) and not any(gateway in net for net in allowed)
    assert any(dynamic.subnet_of(net) for net in denied) and any(gateway in net for net in denied)
    for name, service in compose["services"].items():
        networks = service.get("networks", [])
        is_bot = "sample_bots" in " ".join(service.get("command", []))
        if not is_bot:
            assert "bots" not in networks or not isinstance(networks, dict) or not networks["bots"], name
            if name in ("postgres", "redis"):
                assert networks == ["internal"], name
            continue
        address = ipaddress.ip_address(networks["bots"]["ipv4_address"])
        assert any(address in net for net in allowed) and not any(address in net for net in denied), name
        AddressPolicy(allow_loopback=False, allowed_networks=allowed, denied=denied)(str(address), 9001)


def _secret_telling(kind: str):  # type: ignore[no-untyped-def]
    """An internal service as seen from the arena: every answer carries something it must not leak."""

    def handler(req, sock):  # type: ignore[no-untyped-def]
        if kind == "status":
            sock.sendall(bot_zoo.http_response(500, SECRET.encode()))
        elif kind == "redirect":
            sock.sendall(bot_zoo.http_response(302, b"", f"Location: http://{SECRET}/\r\n"))
        elif kind == "text":
            sock.sendall(bot_zoo.http_response(200, f"redis_version:7 {SECRET}".encode()))
        elif kind == "schema":
            bot_zoo.ok(sock, {"apiversion": SECRET, "name": "x", "author": "y", "version": "1", "games": [SECRET]})
        elif kind == "games":
            bot_zoo.ok(sock, {"apiversion": "1", "name": "x", "author": "y", "version": "1", "games": [SECRET]})
        elif req.method == "GET":
            bot_zoo.polite(req, sock)
        else:
            bot_zoo.ok(sock, {"action": SECRET})

    return handler


@pytest.mark.parametrize(("kind", "named"), [
    ("status", "http_status (HTTP 500)"), ("redirect", "http_status (HTTP 302)"), ("text", "bad_json (HTTP 200)"),
    ("schema", "bot_info schema"), ("games", "do not include"), ("illegal", "illegal action"),
])
def test_compose_network_trust_422_echoes_the_answer_body(kind, named, client, context) -> None:
    token = token_for(context, "alice")
    with bot_zoo.zoo_bot(_secret_telling(kind)) as zoo:
        response = client.post("/api/bots", json={"name": "probe", "url": zoo.url, "game": "piranha-pedro"},
                               headers=auth(token))
    assert response.status_code == 422
    text = response.get_data(as_text=True)
    assert SECRET not in text, text
    assert any(named in problem for problem in response.get_json()["details"]["problems"]), text
