"""``/ladders`` and ``/ladders/<id>``: every ladder's state, and the organizers' pause, resume and tune forms
(the same service calls as the API and ``arena ladder``)."""

from __future__ import annotations

from flask import redirect, url_for
from werkzeug.wrappers import Response

from arena.services import ladder_pages
from arena.services import ladders as service
from arena.services.errors import ServiceError
from arena.web.context import context, unit_of_work
from arena.web.live import live_seq
from arena.web.pages import pages
from arena.web.pages.common import page, viewer
from arena.web.pages.errors import error_page
from arena.web.pages.find import game_titles
from arena.web.pages.forms import LadderPauseForm, LadderResumeForm, LadderTuneForm
from referee.games import GAMES


@pages.get("/ladders")
def ladders_page() -> tuple[str, int]:
    settings = context().settings
    with unit_of_work() as session:
        viewer(session)
        rows = [service.ladder_json(session, ladder, settings) for ladder in service.list_ladders(session)]
    return page("ladders.html", ladders=rows, titles={name: GAMES[name].spec.title for name in GAMES})


def _ladder_page(ladder_id: int, status: int = 200, error: str | None = None,
                 tune: LadderTuneForm | None = None) -> tuple[str, int]:
    settings = context().settings
    live_seq(f"ladder-{ladder_id}")  # before the database: an event after it is newer than the page
    with unit_of_work(readonly=True) as session:
        account = viewer(session)
        data = ladder_pages.ladder_page_data(session, ladder_id, settings)
    if tune is None:
        shown = data["overrides"] | {"time_limit_ms": data["settings"]["time_limit_ms"]}
        tune = LadderTuneForm(formdata=None, data=shown)
    admin = account is not None and account.is_admin
    title = GAMES[data["game"]].spec.title if data["game"] in GAMES else data["game"]
    return page("ladder.html", status, ladder=data, admin=admin, error=error, tune=tune, pause=LadderPauseForm(),
                resume=LadderResumeForm(), title=title, tunable=service.TUNABLE, games=game_titles())


@pages.get("/ladders/<int:ladder_id>")
def ladder_page(ladder_id: int) -> tuple[str, int]:
    return _ladder_page(ladder_id)


def _organizer_action(ladder_id: int, action, *args) -> tuple[str, int] | Response:  # type: ignore[no-untyped-def]
    try:
        with unit_of_work() as session:
            account = viewer(session)
            if account is None:
                return redirect(url_for("pages.login", next=url_for("pages.ladder_page", ladder_id=ladder_id)))
            if not account.is_admin:
                return error_page(403, "Only organizers may pause, resume or tune a ladder.")
            action(session, account, ladder_id, *args)
    except ServiceError as exc:
        return _ladder_page(ladder_id, exc.status, exc.message)
    return redirect(url_for("pages.ladder_page", ladder_id=ladder_id))


@pages.post("/ladders/<int:ladder_id>/pause")
def ladder_pause(ladder_id: int) -> tuple[str, int] | Response:
    form = LadderPauseForm()
    if not form.validate_on_submit():
        return _ladder_page(ladder_id, 422, "The reason is at most 500 characters.")
    return _organizer_action(ladder_id, service.pause_ladder, form.reason.data or None)


@pages.post("/ladders/<int:ladder_id>/resume")
def ladder_resume(ladder_id: int) -> tuple[str, int] | Response:
    if not LadderResumeForm().validate_on_submit():
        return _ladder_page(ladder_id, 422, "The form expired; try again.")
    return _organizer_action(ladder_id, service.resume_ladder)


@pages.post("/ladders/<int:ladder_id>/tune")
def ladder_tune(ladder_id: int) -> tuple[str, int] | Response:
    form = LadderTuneForm()
    if not form.validate_on_submit():
        return _ladder_page(ladder_id, 422, "Every setting is a whole number (or empty for the default).", form)
    return _organizer_action(ladder_id, service.tune_ladder, form.changes())
