"""``python -m bench.ask_floor`` sends the same recorded /act bodies three ways (a raw blocking socket, the
minimal non-blocking exchange, the referee's ``Asker``) and reports each per call: every way reads whole answers
(the referee's raises on any fault), so the three figures are of the same work. With ``--new`` each call goes on
a connection of its own (raw, the referee's alone, the referee's beside a kept call)."""

from __future__ import annotations

import re

import pytest

from bench import ask_floor


def _reported(out: str, header: str, ways: tuple[str, ...]) -> None:
    calls = re.search(rf"^(\d+) /act calls a loop, {header}", out, re.MULTILINE)
    assert calls is not None and int(calls.group(1)) > 10, out  # three Pajarracos matches' turns
    for way in ways:
        pattern = rf"^  {way} +CPU median +([\d.]+) \(least +([\d.]+)\) +wall median +([\d.]+)"
        line = re.search(pattern, out, re.MULTILINE)
        assert line is not None, out
        assert all(float(figure) > 0 for figure in line.groups()), line.group(0)


def test_the_three_ways_each_carry_every_body_and_are_reported(capsys: pytest.CaptureFixture[str]) -> None:
    assert ask_floor.main(["--loops", "2"]) == 0
    _reported(capsys.readouterr().out, "on kept connections, 2 loops each way", ("raw", "minimal", "referee"))


def test_with_new_every_call_opens_a_connection_of_its_own_each_way(capsys: pytest.CaptureFixture[str]) -> None:
    assert ask_floor.main(["--loops", "1", "--new"]) == 0
    _reported(capsys.readouterr().out, "on a new connection each, 1 loops each way", ("raw", "referee", "beside"))
