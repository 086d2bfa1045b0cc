"""``arena demo``'s sample bots can be submitted by a new user, as the demo and the README say."""

from __future__ import annotations

import re
import shlex

from arena.cli.demo import how_to_submit, start_spare_bots
from sample_bots import random_bot
from sample_bots.sdk import start_in_thread
from tests.arena.helpers import auth


def test_a_new_user_submits_a_spare_sample_bot_with_the_real_health_check(client) -> None:
    spares = start_spare_bots()
    try:
        text = how_to_submit("http://127.0.0.1:8000/", spares)
        for _kind, server in spares:
            assert server.url in text
        body = re.search(r"-d '(\{\"name\": \"my-first\".*?\})'", text)
        assert body is not None and "/me/bots" in text and "/bots/new" in text
        token = client.post("/api/accounts", json={"name": "newcomer"}).get_json()["token"]
        for n, (_kind, server) in enumerate(spares):
            response = client.post("/api/bots", json={"name": f"mine-{n}", "url": server.url, "game": "pajarracos"},
                                   headers=auth(token))
            assert response.status_code == 201, response.get_json()
        assert shlex.split(body.group(0))[1].startswith("{")  # the printed command is valid shell
    finally:
        for _kind, server in spares:
            server.shutdown()
            server.server_close()


def test_a_bot_that_checks_another_secret_is_refused_in_words(client) -> None:
    """Why the demo starts spare bots: its own check the demo account's secret, so another account's
    health check got a bare "HTTP 401"; now the refusal says what to do."""
    bot = random_bot.make_bot(1)
    bot.secret = "the-demo-accounts-secret"
    server = start_in_thread(bot)
    try:
        token = client.post("/api/accounts", json={"name": "newcomer"}).get_json()["token"]
        response = client.post("/api/bots", json={"name": "theirs", "url": server.url, "game": "pajarracos"},
                               headers=auth(token))
        problems = response.get_json()["details"]["problems"]
        assert response.status_code == 422
        assert "answered 401" in problems[0] and "start it without a secret first" in problems[0]
    finally:
        server.shutdown()
        server.server_close()
