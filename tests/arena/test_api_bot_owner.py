"""The owner's API: versions, pause and resume, capacity, a new secret, retire, the event log."""

from __future__ import annotations

from dataclasses import replace

import pytest

from arena.web import create_app
from tests.arena.helpers import auth, token_for
from tests.arena.owner_fakes import FakeHealth


@pytest.fixture
def owner_client(context):  # type: ignore[no-untyped-def]
    health = FakeHealth(sick={"http://127.0.0.1:9999"})
    client = create_app(context=replace(context, health_check=health)).test_client()
    token = token_for(context, "alice")
    bot = client.post("/api/bots", json={"name": "pedro", "url": "http://127.0.0.1:9001", "game": "piranha-pedro"},
                      headers=auth(token)).get_json()
    return client, auth(token), bot


def test_publishing_a_version_over_the_api(owner_client) -> None:
    client, headers, bot = owner_client
    new = client.post(f"/api/bots/{bot['id']}/versions", json={"url": "http://127.0.0.1:9002"}, headers=headers)
    assert new.status_code == 201, new.get_json()
    v2 = new.get_json()
    assert v2["version_number"] == 2 and v2["lineage_id"] == bot["id"] and "secret" not in v2
    shown = client.get(f"/api/bots/{v2['id']}").get_json()
    assert shown["ladder"]["state"] == "placing" and shown["rating"] is None
    assert [v["version"] for v in shown["versions"]] == [1, 2]
    old = client.get(f"/api/bots/{bot['id']}").get_json()
    assert old["ladder"]["state"] == "retired" and old["name"] == "pedro (v1)"
    again = client.post(f"/api/bots/{bot['id']}/versions", json={}, headers=headers)
    assert again.status_code == 409
    sick = client.post(f"/api/bots/{v2['id']}/versions", json={"url": "http://127.0.0.1:9999"}, headers=headers)
    assert sick.status_code == 422 and "connection refused" in sick.get_json()["details"]["problems"][0]


def test_pause_resume_capacity_secret_and_retire_over_the_api(owner_client) -> None:
    client, headers, bot = owner_client
    path = f"/api/bots/{bot['id']}"
    paused = client.post(f"{path}/pause", json={"reason": "rebuilding"}, headers=headers).get_json()
    assert paused["paused_by"] == "owner" and paused["paused_reason"] == "rebuilding"
    assert client.get(path).get_json()["ladder"]["state"] == "paused"
    assert client.post(f"{path}/resume", headers=headers).get_json()["paused_by"] is None
    assert client.post(f"{path}/capacity", json={"capacity": 2}, headers=headers).get_json()["capacity"] == 2
    assert client.post(f"{path}/capacity", json={"capacity": 99}, headers=headers).status_code == 422
    rotated = client.post(f"{path}/secret", headers=headers)
    assert rotated.headers["Cache-Control"] == "no-store" and len(rotated.get_json()["secret"]) == 48
    assert "secret" not in client.get(path, headers=headers).get_json()
    retired = client.post(f"{path}/retire", headers=headers).get_json()
    assert retired["retired_at"] is not None and retired["name"] == "pedro"
    assert client.post(f"{path}/pause", headers=headers).status_code == 409
    kinds = [e["kind"] for e in client.get(f"{path}/events").get_json()]
    assert kinds == ["retired", "secret_rotated", "capacity_changed", "resumed", "paused"]
    assert all(e["created_at"].endswith("+00:00") for e in client.get(f"{path}/events").get_json())


def test_only_the_owner_may_act_and_strangers_hear_401_before_any_body_check(owner_client, context) -> None:
    client, _headers, bot = owner_client
    path = f"/api/bots/{bot['id']}"
    for action, body in (("versions", {"bogus": 1}), ("pause", {"bogus": 1}), ("capacity", {"bogus": 1}),
                         ("secret", None), ("resume", None), ("retire", None)):
        assert client.post(f"{path}/{action}", json=body).status_code == 401, action
    mallory = auth(token_for(context, "mallory"))
    for action, body in (("versions", {}), ("pause", {}), ("capacity", {"capacity": 1}), ("secret", None),
                         ("resume", None), ("retire", None)):
        assert client.post(f"{path}/{action}", json=body, headers=mallory).status_code == 403, action


def test_url_moves_show_their_urls_to_the_owner_only(owner_client) -> None:
    client, headers, bot = owner_client
    path = f"/api/bots/{bot['id']}"
    assert client.patch(path, json={"url": "http://127.0.0.1:9003"}, headers=headers).status_code == 200
    (mine,) = client.get(f"{path}/events", headers=headers).get_json()
    (public,) = client.get(f"{path}/events").get_json()
    assert mine["detail"]["new_url"] == "http://127.0.0.1:9003" and public["detail"] == {}
    assert "9001" not in public["summary"] and mine["kind"] == public["kind"] == "url_moved"
