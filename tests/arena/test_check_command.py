"""``arena check URL`` (arena/cli/check_command.py): a checklist on stdout, exit 1 exactly when the
bot would fault in a match."""

from __future__ import annotations

import json

from arena.cli import main
from sample_bots.random_bot import make_bot
from sample_bots.sdk import start_in_thread
from tests import bot_zoo


def test_a_good_bot_exits_zero_with_a_checklist(capsys) -> None:
    bot = make_bot(2)
    bot.secret = "sekrit"
    server = start_in_thread(bot)
    try:
        assert main(["check", server.url, "--secret", "sekrit", "--game", "pajarracos"]) == 0
    finally:
        server.shutdown()
        server.server_close()
    out = capsys.readouterr().out
    assert "PASS  GET /" in out and "PASS  /act pajarracos turn" in out and "ready to play" in out


def test_a_broken_bot_exits_one_with_the_fix(capsys) -> None:
    with bot_zoo.zoo_bot(bot_zoo.on_act(bot_zoo.wrong_shape)) as zoo:
        assert main(["check", zoo.url, "--game", "piranha-pedro"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  /act piranha-pedro choose_card: wrong_shape" in out
    assert 'fix: answer a JSON object {"action": <one of legal_actions>}' in out
    assert "would fault in a match" in out


def test_warnings_alone_exit_zero(capsys) -> None:
    with bot_zoo.zoo_bot(bot_zoo.close_each) as zoo:
        assert main(["check", zoo.url, "--game", "piranha-pedro", "--secret", "s"]) == 0
    assert "WARN  keep-alive" in capsys.readouterr().out


def test_json_output(capsys) -> None:
    dead = f"http://127.0.0.1:{bot_zoo.closed_port()}"
    assert main(["check", dead, "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False and doc["items"][0]["status"] == "fail" and doc["items"][0]["fix"]
