"""Security headers (issue 15): pages had no Content-Security-Policy, nosniff, framing or referrer
policy. Every response now carries them, HSTS in production only, and the pages hold nothing the strict
policy would block (no inline script, style attribute or event handler), so it needs no 'unsafe-inline'.
The browser test (tests/browser) checks that Chromium logs no violation on the same pages."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from arena.web import create_app
from arena.web.headers import CONTENT_SECURITY_POLICY
from tests.pages.builders import log_in

EXPECTED = {"Content-Security-Policy": CONTENT_SECURITY_POLICY, "X-Content-Type-Options": "nosniff",
            "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin"}
INLINE = [re.compile(r"<[a-z][^>]*\sstyle\s*=", re.I), re.compile(r"<[a-z][^>]*\son[a-z]+\s*=", re.I),
          re.compile(r"javascript:", re.I)]


def _pages(world) -> list[str]:  # type: ignore[no-untyped-def]
    return ["/", "/leaderboards/pajarracos?players=3", "/leaderboards/piranha-pedro",
            f"/tournaments/{world.tournament}", f"/tournaments/{world.piranha_tournament}",
            f"/matches/{world.finished[0]}", f"/matches/{world.finished[-1]}",
            f"/bots/{world.bots['rnd1']}", f"/bots/{world.bots['faulty']}",
            "/docs", "/docs/games/pajarracos", "/signup", "/login", "/bots/new", "/tournaments/new", "/bots/999999"]


def test_pages_had_no_security_headers(client, world) -> None:
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY and "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
    log_in(client, world.organizer_token)
    for url in [*_pages(world), "/api/games", "/api/bots/999999", "/static/arena.css", "/healthz", "/no-such-page"]:
        with client.get(url) as response:  # closes the static file's stream too
            headers = response.headers
        for name, value in EXPECTED.items():
            assert headers.get(name) == value, (url, name, headers.get(name))
        assert "Strict-Transport-Security" not in headers, url  # HTTP on a development machine


def test_hsts_in_production_only(context) -> None:
    production = create_app(context=replace(context, settings=replace(context.settings, env="production")))
    response = production.test_client().get("/", base_url="https://localhost")
    assert response.headers["Strict-Transport-Security"].startswith("max-age=31536000")
    assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY


@pytest.mark.parametrize("signed_in", [False, True])
def test_pages_hold_nothing_a_strict_csp_blocks(client, world, signed_in: bool) -> None:
    if signed_in:
        log_in(client, world.organizer_token)
    for url in _pages(world):
        page = client.get(url).get_data(as_text=True)
        for pattern in INLINE:
            found = pattern.search(page)
            assert found is None, (url, page[max(0, found.start() - 80):found.end() + 80])
        for script in re.findall(r"<script\b[^>]*>", page):
            assert " src=" in script or 'type="application/json"' in script, (url, script)
