"""``arena bot ...`` drives the owner's API of a running arena (here the app on a loopback server)."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from werkzeug.serving import make_server

from arena.cli import main
from tests.arena.helpers import token_for
from tests.arena.owner_fakes import FakeHealth


@pytest.fixture
def served(context):  # type: ignore[no-untyped-def]
    from arena.web import create_app

    app = create_app(context=replace(context, health_check=FakeHealth(sick={"http://127.0.0.1:9999"})))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", token_for(context, "carol")
    finally:
        server.shutdown()
        server.server_close()


def test_an_owner_manages_a_bot_from_the_command_line(served, capsys) -> None:
    url, token = served
    arena = ["bot", "--arena", url, "--token", token]
    assert main([*arena, "submit", "pedro", "http://127.0.0.1:9001", "piranha-pedro"]) == 0
    submitted = capsys.readouterr()
    assert '"secret"' in submitted.out and "shown only once" in submitted.err
    assert main([*arena, "pause", "1"]) == 0 and main([*arena, "list"]) == 0
    assert "paused: paused by its owner" in capsys.readouterr().out
    assert main([*arena, "move", "1", "http://127.0.0.1:9999"]) == 1
    assert "connection refused at the bot's address" in capsys.readouterr().err
    assert main([*arena, "version", "1"]) == 0 and main([*arena, "capacity", "2", "3"]) == 0
    assert main([*arena, "list"]) == 0
    listed = capsys.readouterr().out
    assert "pedro (v1)" in listed and "retired" in listed and "placing" in listed
    assert main([*arena, "events", "1"]) == 0 and "version published" in capsys.readouterr().out
    assert main(["bot", "--arena", url, "list"]) == 1 and "API token" in capsys.readouterr().err
