"""The forms: sign-up, log-in, log-out, bot submission and tournament creation, with their CSRF
protection (the JSON API stays exempt) and clear validation messages."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import func, select

from arena.runtime.queue import MatchQueue
from arena.services.accounts import authenticate
from arena.storage.models import Bot, Match, Tournament
from tests import bot_zoo
from tests.pages.builders import account, csrf_token, log_in, register


def post_form(client, url: str, data: dict, status: int | None = None):  # type: ignore[no-untyped-def]
    token = csrf_token(client.get(url).get_data(as_text=True))
    response = client.post(url, data={**data, "csrf_token": token})
    if status is not None:
        assert response.status_code == status, response.get_data(as_text=True)[:2000]
    return response


@pytest.mark.parametrize("url", ["/signup", "/login", "/logout", "/bots/new", "/tournaments/new"])
def test_a_form_post_without_its_csrf_token_is_refused(client, context, url) -> None:
    log_in(client, account(context, "org", admin=True))
    response = client.post(url, data={"name": "x", "token": "arena_x", "url": "http://127.0.0.1:1"})
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert "CSRF token is missing" in page and "Reload the form" in page
    bad = client.post(url, data={"csrf_token": "forged"})
    assert bad.status_code == 400 and "CSRF token is invalid" in bad.get_data(as_text=True)


def test_the_json_api_needs_no_csrf_token(client) -> None:
    response = client.post("/api/accounts", json={"name": "apiuser"})
    assert response.status_code == 201 and response.get_json()["token"].startswith("arena_")


def shown_after_redirect(client, response):  # type: ignore[no-untyped-def]
    """Post/redirect/get: a successful form answers 303; the page it points to is what the user sees."""
    assert response.status_code == 303, response.get_data(as_text=True)[:2000]
    return client.get(response.headers["Location"])


def test_sign_up_shows_the_token_once_and_signs_the_account_in(client, context) -> None:
    response = shown_after_redirect(client, post_form(client, "/signup", {"name": "newbie"}, 303))
    page = response.get_data(as_text=True)
    assert response.headers["Cache-Control"] == "no-store" and "shown only" in page
    token = page.split('<code id="token">')[1].split("</code>")[0]
    with context.db.session() as session:
        assert authenticate(session, token).name == "newbie"
    refreshed = client.get("/signup/done", follow_redirects=True).get_data(as_text=True)
    assert token not in refreshed  # a refresh does not sign up again, nor show the token again
    home = client.get("/").get_data(as_text=True)
    assert "newbie" in home and token not in home and "Log out" in home
    assert client.post("/logout", data={"csrf_token": csrf_token(page)}).status_code == 302  # the token page's form
    assert "newbie" not in client.get("/").get_data(as_text=True)


@pytest.mark.parametrize("name, status, message", [
    ("", 422, "Choose a name."), ("a b", 422, "Name must be 2-40 characters"), ("taken", 409, "is taken")])
def test_sign_up_explains_what_is_wrong(client, context, name, status, message) -> None:
    account(context, "taken")
    page = post_form(client, "/signup", {"name": name}, status).get_data(as_text=True)
    assert message in page and ('role="alert"' in page or 'class="errors"' in page)


def test_sign_up_can_be_closed(context) -> None:
    from arena.web import create_app

    closed = create_app(context=replace(context, settings=replace(context.settings, open_signup=False)))
    page = closed.test_client().get("/signup")
    assert page.status_code == 403 and "switched off" in page.get_data(as_text=True)


def test_log_in_with_a_token_then_log_out(client, context) -> None:
    token = account(context, "carol")
    bad = post_form(client, "/login", {"token": "arena_wrong"}, 422).get_data(as_text=True)
    assert "That token is not valid" in bad
    response = post_form(client, "/login?next=/docs", {"token": token}, 302)
    assert response.headers["Location"] == "/docs"
    with client.session_transaction() as session:
        assert token not in str(dict(session)) and "sid" in session and set(session) <= {"sid", "csrf_token"}
    assert "carol" in client.get("/").get_data(as_text=True)
    home = client.get("/").get_data(as_text=True)
    assert client.post("/logout", data={"csrf_token": csrf_token(home)}).status_code == 302
    assert "carol" not in client.get("/").get_data(as_text=True)


def test_log_in_never_redirects_off_site(client, context) -> None:
    token = account(context, "dave")
    for target in ("//evil.example/", "https://evil.example/", "/\\evil.example"):
        response = post_form(client, f"/login?next={target}", {"token": token}, 302)
        assert response.headers["Location"] == "/"


def test_the_bot_form_needs_a_signed_in_account(client) -> None:
    response = client.get("/bots/new")
    assert response.status_code == 302 and response.headers["Location"].startswith("/login?next=")


def test_submitting_a_bot_shows_its_secret_once(client, context, random_bots) -> None:
    log_in(client, account(context, "erin"))
    posted = post_form(client, "/bots/new", {"name": "mybot", "url": random_bots[0].url, "game": "pajarracos"}, 303)
    response = shown_after_redirect(client, posted)
    page = response.get_data(as_text=True)
    assert response.headers["Cache-Control"] == "no-store" and "shown only once" in page
    with context.db.session() as session:
        bot = session.scalar(select(Bot).where(Bot.name == "mybot"))
        secret, bot_id = bot.secret, bot.id
    assert secret in page
    assert secret not in client.get(posted.headers["Location"], follow_redirects=True).get_data(as_text=True)
    later = client.get(f"/bots/{bot_id}").get_data(as_text=True)
    assert secret not in later and random_bots[0].url in later  # the owner sees the URL, not the secret


def test_the_bot_form_explains_what_is_wrong(client, context, random_bots) -> None:
    log_in(client, account(context, "frank"))
    empty = post_form(client, "/bots/new", {"name": "", "url": "", "game": "pajarracos"}, 422).get_data(as_text=True)
    assert "Give your bot a name." in empty and "Where does your bot listen?" in empty
    assert 'aria-invalid="true"' in empty
    bad_url = post_form(client, "/bots/new", {"name": "b", "url": "ftp://x", "game": "pajarracos"}, 422)
    assert "http" in bad_url.get_data(as_text=True).lower()
    with bot_zoo.zoo_bot(bot_zoo.on_act(bot_zoo.illegal)) as zoo:
        failing = post_form(client, "/bots/new", {"name": "bad", "url": zoo.url, "game": "pajarracos"}, 422)
    text = failing.get_data(as_text=True)
    assert "<strong>The bot failed its health check</strong>" in text and "illegal" in text  # a sentence
    post_form(client, "/bots/new", {"name": "twice", "url": random_bots[1].url, "game": "pajarracos"}, 303)
    again = post_form(client, "/bots/new", {"name": "twice", "url": random_bots[1].url, "game": "pajarracos"}, 409)
    assert "<strong>You already have a bot called" in again.get_data(as_text=True)


def test_the_bot_form_shows_each_failed_check_with_its_fix(client, context) -> None:
    """The submission page shows the same lines as ``arena check``: the check, the kind, the fix."""
    log_in(client, account(context, "fiona"))
    with bot_zoo.zoo_bot(bot_zoo.on_act(bot_zoo.wrong_shape)) as zoo:
        failing = post_form(client, "/bots/new", {"name": "bad", "url": zoo.url, "game": "piranha-pedro"}, 422)
    text = failing.get_data(as_text=True)
    assert "/act piranha-pedro choose_card: wrong_shape" in text and "fix: answer a JSON object" in text


def test_the_bot_form_shows_the_warnings_of_a_bot_it_admits(client, context) -> None:
    log_in(client, account(context, "gus"))
    with bot_zoo.zoo_bot(bot_zoo.close_each) as zoo:
        created = shown_after_redirect(client, post_form(client, "/bots/new", {"name": "closer", "url": zoo.url,
                                                                               "game": "piranha-pedro"}, 303))
    text = created.get_data(as_text=True)
    assert "cost it time or safety" in text and "keep-alive:" in text and "keep connections open" in text


def test_only_organizers_may_open_the_tournament_form(client, context) -> None:
    assert client.get("/tournaments/new").headers["Location"].startswith("/login")
    log_in(client, account(context, "gina"))
    page = client.get("/tournaments/new")
    assert page.status_code == 403 and "Only organizers" in page.get_data(as_text=True)


def test_the_tournament_form_explains_what_is_wrong(client, context, random_bots) -> None:
    log_in(client, account(context, "org", admin=True))
    ids = [register(context, "org", f"b{n}", random_bots[n].url, "pajarracos")[0] for n in range(3)]
    form = {"game": "pajarracos", "seats": "3", "cycles": "1", "time_limit_ms": "1000", "seed": "1"}
    few = post_form(client, "/tournaments/new", {**form, "bots": ids[:2]}, 422).get_data(as_text=True)
    assert "A 3-seat tournament needs at least 3 bots" in few
    none = post_form(client, "/tournaments/new", form, 422).get_data(as_text=True)
    assert "Pick the bots that play" in none
    bad_json = post_form(client, "/tournaments/new", {**form, "bots": ids, "params": "{nope"}, 422)
    assert "Not valid JSON" in bad_json.get_data(as_text=True)
    unknown = post_form(client, "/tournaments/new", {**form, "bots": ids, "params": '{"colour": 1}'}, 422)
    assert "Params:" in unknown.get_data(as_text=True)
    seats = post_form(client, "/tournaments/new", {**form, "seats": "x", "bots": ids}, 422).get_data(as_text=True)
    assert "Not a valid integer value" in seats
    with context.db.session() as session:
        assert session.scalar(select(func.count()).select_from(Tournament)) == 0


class RecordingQueue(MatchQueue):
    """The real Redis queue, remembering what it was handed (another test run may share the Redis)."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.enqueued: list[int] = []

    def enqueue(self, match_id: int, at_front: bool = False) -> None:
        super().enqueue(match_id, at_front)
        self.enqueued.append(match_id)

    def enqueue_many(self, match_ids: list[int], size: int | None = None) -> int:
        jobs = super().enqueue_many(match_ids, size)
        self.enqueued.extend(match_ids)
        return jobs


def test_starting_a_tournament_queues_its_matches_and_opens_its_page(queued_context, random_bots) -> None:
    from arena.web import create_app

    queue = RecordingQueue(queued_context.queue.redis, queued_context.settings)
    client = create_app(context=replace(queued_context, queue=queue)).test_client()
    log_in(client, account(queued_context, "org", admin=True))
    ids = [register(queued_context, "org", f"b{n}", random_bots[n].url, "pajarracos")[0] for n in range(3)]
    response = post_form(client, "/tournaments/new", {"game": "pajarracos", "seats": "3", "cycles": "1",
                                                      "time_limit_ms": "500", "seed": "3", "bots": ids}, 302)
    with queued_context.db.session() as session:
        tournament = session.scalar(select(Tournament))
        matches = list(session.scalars(select(Match.id).where(Match.tournament_id == tournament.id).order_by(Match.id)))
    assert response.headers["Location"] == f"/tournaments/{tournament.id}"
    assert tournament.time_limit_ms == 500 and matches and queue.enqueued == matches
    assert "Tournament #" in client.get(response.headers["Location"]).get_data(as_text=True)


def test_page_forms_share_the_apis_rate_limits(context) -> None:
    from arena.web import create_app

    limited = replace(context, settings=replace(context.settings, rate_limits=True, signup_rate="2/hour"))
    client = create_app(context=limited).test_client()
    post_form(client, "/signup", {"name": "first"}, 303)
    client.post("/logout", data={"csrf_token": csrf_token(client.get("/").get_data(as_text=True))})
    post_form(client, "/signup", {"name": "second"}, 303)  # signed in as "second" now: still the same client
    client.set_cookie("session", "forged-or-changed", domain="localhost")
    third = post_form(client, "/signup", {"name": "third"}, 429)
    assert "Too many requests" in third.get_data(as_text=True)
    assert client.get("/signup").status_code == 200  # only creating is limited


def test_an_organizer_cancels_a_tournament_from_its_page(client, context, random_bots) -> None:
    """A user's trial: the page had no way to cancel a tournament (the API alone did). Organizers see a
    Cancel button; anyone else sees none and is refused; a post needs its CSRF token."""
    from tests.pages.builders import tournament

    boss = account(context, "boss", admin=True)
    account(context, "org")
    ids = [register(context, "org", f"b{n}", random_bots[n].url, "pajarracos")[0] for n in range(3)]
    tournament_id, _matches = tournament(context, ids, "pajarracos", 3)
    path = f"/tournaments/{tournament_id}"
    assert "Cancel the tournament" not in client.get(path).get_data(as_text=True)  # signed out
    log_in(client, account(context, "gina"))
    page = client.get(path).get_data(as_text=True)
    assert "Cancel the tournament" not in page
    refused = client.post(f"{path}/cancel", data={"csrf_token": csrf_token(page)})
    assert refused.status_code == 403
    log_in(client, boss)
    page = client.get(path).get_data(as_text=True)
    assert "Cancel the tournament" in page
    assert client.post(f"{path}/cancel").status_code == 400  # no CSRF token
    done = client.post(f"{path}/cancel", data={"csrf_token": csrf_token(page)})
    assert done.status_code == 303 and done.headers["Location"].endswith(path)
    with context.db.session(readonly=True) as session:
        assert session.get(Tournament, tournament_id).status == "cancelled"
    after = client.get(path).get_data(as_text=True)
    assert "Cancel the tournament" not in after and "cancelled" in after
