"""The replay viewer's data: the public view after every step (re-run by the pure engine from the
recorded game, params, seed and actions) as a first view plus per-step changes, and every decision as
the viewer lists it. Computed once per request from the stored document (a few hundred steps at most)."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from arena.web.pages.replay_annotations import annotate_step
from referee.commitments import canonical_json
from referee.errors import RulesError
from referee.games import get_game
from referee.live_view import view_changes

PRIVATE_VIEW_KEYS = ("seat", "hand", "my_unrevealed", "decision", "must_commit")


def replay_views(doc: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """The public view after each step (frame 0: the start), and where they came from.

    The pure engine is re-run from the recorded game, params, seed and actions, so the board at every
    step is what a spectator could have seen. If the engine refuses (another engine version, a
    damaged document), the acting seats' recorded views minus private fields stand in.
    """
    try:
        return _engine_views(doc), "engine"
    except (RulesError, KeyError, TypeError, ValueError, IndexError, AttributeError):
        return _recorded_views(doc), "recorded views"


def replay_frames(doc: dict[str, Any], views: tuple[list[dict[str, Any]], str] | None = None) -> dict[str, Any]:
    """The public views of ``replay_views`` as a first view plus per-step changes (what the page embeds)."""
    views, source = views or replay_views(doc)
    final = doc.get("final_view")
    return {
        "source": source,
        "final_view_matches": final is not None and canonical_json(views[-1]) == canonical_json(final),
        "initial": views[0],
        "changes": [view_changes(a, b) for a, b in pairwise(views)],
    }


def _engine_views(doc: dict[str, Any]) -> list[dict[str, Any]]:
    game = get_game(doc["game"])
    if doc.get("engine_version") != game.spec.engine_version:
        raise RulesError(f"recorded with engine {doc.get('engine_version')!r}")
    state = game.initial_state(len(doc["players"]), doc["seed"], doc["params"])
    views = [game.public_view(state)]
    for step in doc["steps"]:
        actions = {d["seat"]: d["action"] for d in step["decisions"]}
        try:
            state = game.apply(state, actions)
        except RulesError:  # a JSON form the engine only takes once canonicalised (e.g. a multiset's order)
            state = game.apply(state, {seat: game.canonical_action(state, seat, a) for seat, a in actions.items()})
        views.append(game.public_view(state))
    return views


def _recorded_views(doc: dict[str, Any]) -> list[dict[str, Any]]:
    views = []
    for step in doc.get("steps", []):
        view = dict(step["decisions"][0]["view"])
        for key in PRIVATE_VIEW_KEYS:
            view.pop(key, None)
        views.append(view)
    views.append(doc.get("final_view") or (views[-1] if views else {}))
    return views


def replay_steps(doc: dict[str, Any], views: tuple[list[dict[str, Any]], str] | None = None) -> list[dict[str, Any]]:
    """Every decision as the viewer lists it, with the step's notes (``replay_annotations``: its game turn,
    cards revealed or never revealed, Pedro's path). A fault shows only its kind: its message and excerpt
    quote what the bot sent, which the bot's page shows to its owner alone."""
    frames, _source = views or replay_views(doc)
    steps = []
    for k, step in enumerate(doc.get("steps", [])):
        decisions = []
        for d in step["decisions"]:
            fault = d.get("fault")
            decisions.append({
                "seat": d["seat"], "decision": d["decision"], "action": d["action"], "default": d.get("default", False),
                "forfeited": d.get("forfeited", False), "latency_ms": d.get("latency_ms"),
                "fault": fault["kind"] if fault else None,
                "commitment": d["commitment"], "hand": (d.get("view") or {}).get("hand"),
            })
        notes = annotate_step(decisions, frames[k], frames[k + 1]) if k + 1 < len(frames) else {}
        steps.append({"turn": step["turn"], "decisions": decisions, **notes})
    return steps
