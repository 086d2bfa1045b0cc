"""``python -m bench.ask_floor`` sends the same recorded /act bodies three ways (a raw blocking socket, the
minimal non-blocking exchange, the referee's ``Asker``) and reports each per call: every way reads whole answers
(the referee's raises on any fault), so the three figures are of the same work."""

from __future__ import annotations

import re

import pytest

from bench import ask_floor


def test_the_three_ways_each_carry_every_body_and_are_reported(capsys: pytest.CaptureFixture[str]) -> None:
    assert ask_floor.main(["--loops", "2"]) == 0
    out = capsys.readouterr().out
    calls = re.search(r"^(\d+) /act calls a loop, 2 loops each way", out, re.MULTILINE)
    assert calls is not None and int(calls.group(1)) > 10, out  # three Pajarracos matches' turns
    for way in ("raw", "minimal", "referee"):
        pattern = rf"^  {way} +CPU median +([\d.]+) \(least +([\d.]+)\) +wall median +([\d.]+)"
        line = re.search(pattern, out, re.MULTILINE)
        assert line is not None, out
        assert all(float(figure) > 0 for figure in line.groups()), line.group(0)
