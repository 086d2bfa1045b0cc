"""A bot's URL and its faults' excerpts are for its owner; its secret is shown once, on registration,
and on no page after that."""

from __future__ import annotations

from tests.pages.builders import log_in

EXCERPT = "definitely not a legal action"  # what the faulty bot answers: quoted in its fault excerpts


def pages_of(client, world) -> dict[str, str]:  # type: ignore[no-untyped-def]
    urls = ["/", f"/bots/{world.bots['faulty']}", f"/bots/{world.bots['rnd1']}", f"/tournaments/{world.tournament}",
            "/leaderboards/pajarracos?players=3", *(f"/matches/{m}" for m in world.finished)]
    return {url: client.get(url).get_data(as_text=True) for url in urls}


def test_anonymous_visitors_see_no_url_no_excerpt_and_no_secret(client, world) -> None:
    for url, page in pages_of(client, world).items():
        assert "127.0.0.1:" not in page, url
        assert EXCERPT not in page, url
        assert not any(secret in page for secret in world.secrets.values()), url
    faulty = client.get(f"/bots/{world.bots['faulty']}").get_data(as_text=True)
    assert "illegal_action" in faulty and "last faults" not in faulty


def test_another_account_sees_neither_the_url_nor_the_excerpts(client, world) -> None:
    log_in(client, world.other_token)
    page = client.get(f"/bots/{world.bots['faulty']}").get_data(as_text=True)
    assert "mallory" in page  # signed in
    assert world.urls["faulty"] not in page and EXCERPT not in page and world.secrets["faulty"] not in page


def test_the_owner_sees_the_url_and_the_last_faults_with_excerpts_but_never_the_secret(client, world) -> None:
    log_in(client, world.owner_token)
    faulty = client.get(f"/bots/{world.bots['faulty']}").get_data(as_text=True)
    assert world.urls["faulty"] in faulty and "only you see this" in faulty
    assert "Your bot's last faults" in faulty and EXCERPT in faulty and "illegal_action" in faulty
    for url, page in pages_of(client, world).items():
        assert not any(secret in page for secret in world.secrets.values()), url
    assert world.urls["rnd1"] in client.get(f"/bots/{world.bots['rnd1']}").get_data(as_text=True)
