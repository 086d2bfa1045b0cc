"""The page forms. They check shape only (present, a number, a JSON object); the services decide
what is valid, and their messages are shown next to the form."""

from __future__ import annotations

from typing import Any

from flask_wtf import FlaskForm
from wtforms import IntegerField, PasswordField, SelectField, SelectMultipleField, StringField, TextAreaField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import DataRequired, InputRequired, Length, NumberRange, Optional, ValidationError
from wtforms.widgets import CheckboxInput, ListWidget

from arena.services import tournaments as limits
from arena.services.errors import Invalid
from arena.services.untrusted_json import parse_json
from referee.games import GAMES


def game_choices() -> list[SelectChoice]:
    return [SelectChoice(name, f"{GAMES[name].spec.title} ({name})") for name in sorted(GAMES)]


class SignupForm(FlaskForm):
    name = StringField("Account name", validators=[DataRequired("Choose a name."), Length(2, 40)],
                       description="2-40 letters, digits, '_', '.' or '-', starting with a letter or digit.",
                       render_kw={"autocomplete": "username"})


class LoginForm(FlaskForm):
    token = PasswordField("API token", validators=[DataRequired("Paste the token you got at sign-up.")],
                          description="The token starts with arena_. It is never stored in your browser.",
                          render_kw={"autocomplete": "current-password", "spellcheck": "false"})


class LogoutForm(FlaskForm):
    """Only the CSRF token: signing out is a POST so another site cannot do it for you."""


class BotForm(FlaskForm):
    name = StringField("Bot name", validators=[DataRequired("Give your bot a name."), Length(1, 60)])
    url = StringField("Base URL", validators=[DataRequired("Where does your bot listen?"), Length(1, 2000)],
                      description="The arena checks it now (GET {url}/, /start, /act, /end: as arena check does).")
    game = SelectField("Game", choices=[], validators=[DataRequired()])

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.game.choices = game_choices()


class MultiCheckboxField(SelectMultipleField):
    widget = ListWidget(prefix_label=False)
    option_widget = CheckboxInput()


def _json_object(_form: FlaskForm, field: TextAreaField) -> None:
    text = (field.data or "").strip()
    if not text:
        field.parsed = {}
        return
    try:
        value = parse_json(text)
    except Invalid as exc:
        raise ValidationError(exc.message[:1].upper() + exc.message[1:]) from None
    if not isinstance(value, dict):
        raise ValidationError('Parameters must be a JSON object, e.g. {"supply": 50}.')
    field.parsed = value


class TournamentForm(FlaskForm):
    game = SelectField("Game", choices=[], validators=[DataRequired()])
    seats = IntegerField("Seats per table", validators=[InputRequired("How many players per match?"),
                                                        NumberRange(*limits.SEATS)], default=3)
    cycles = IntegerField("Cycles", validators=[InputRequired(), NumberRange(*limits.CYCLES)], default=1,
                          description="Each cycle plays every table in every seat rotation once.")
    time_limit_ms = IntegerField("Decision time (ms)", validators=[InputRequired(), NumberRange(*limits.TIME_LIMIT_MS)],
                                 default=limits.DEFAULT_TIME_LIMIT_MS)
    seed = IntegerField("Seed (optional)", validators=[Optional(), NumberRange(*limits.SEED)],
                        description="Leave empty for a random one. The same seed with the same bots and settings "
                                    "replays the same deals on this arena; it is shown once the tournament is "
                                    "over.")
    deals = SelectField("Deals", choices=[], default="duplicate",
                        description="Duplicate cancels deal luck, but a bot that remembers its earlier rotations "
                                    "knows part of a deal it plays again; independent deals for bots you do not "
                                    "trust.")
    bots = MultiCheckboxField("Bots", coerce=int, choices=[],
                              validators=[DataRequired("Pick the bots that play (at least as many as seats).")])
    params = TextAreaField("Game parameters (JSON object, optional)", validators=[_json_object],
                           description="See the game's documentation; unknown parameters are refused.")

    def __init__(self, *args: Any, bots: list[dict[str, Any]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.game.choices = game_choices()
        self.deals.choices = [SelectChoice("duplicate", "Duplicate (rotations share a deal)"),
                              SelectChoice("independent", "Independent (a deal per match)")]
        self.bot_rows = bots or []
        self.bots.choices = [SelectChoice(b["id"], f"{b['name']} ({b['owner']})") for b in self.bot_rows]

    def body(self) -> dict[str, Any]:
        """The request body ``create_tournament`` takes, as the API would send it."""
        return {"game": self.game.data, "seats": self.seats.data, "cycles": self.cycles.data,
                "time_limit_ms": self.time_limit_ms.data, "seed": self.seed.data, "deals": self.deals.data,
                "bots": list(self.bots.data or []), "params": getattr(self.params, "parsed", {})}


class LadderPauseForm(FlaskForm):
    reason = StringField("Reason (shown on the ladder's page)", validators=[Optional(), Length(0, 500)])


class LadderResumeForm(FlaskForm):
    """Only the CSRF token."""


class LadderTuneForm(FlaskForm):
    """Each field empty: the arena's default (``ARENA_LADDER_*``); the service checks the ranges."""

    per_hour = IntegerField("Matches per hour", validators=[Optional()])
    maintenance_per_hour = IntegerField("Matches per hour once settled", validators=[Optional()])
    in_flight = IntegerField("Matches in flight at once", validators=[Optional()])
    weight = IntegerField("Share against other ladders (weight)", validators=[Optional()])
    time_limit_ms = IntegerField("Decision time (ms)", validators=[Optional()])

    def changes(self) -> dict[str, Any]:
        values = {name: getattr(self, name).data for name in
                  ("per_hour", "maintenance_per_hour", "in_flight", "weight")}
        if self.time_limit_ms.data is not None:
            values["time_limit_ms"] = self.time_limit_ms.data
        return values
