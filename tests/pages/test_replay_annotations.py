"""The replay viewer's notes on each step (arena/web/pages/replay_annotations.py): the game's turn the step
belongs to (the slider's label and the side panel print this one number), which committed cards were
revealed and which went under the board when Pedro fell, and Pedro's path square by square."""

from __future__ import annotations

from itertools import pairwise

import pytest

from arena.web.pages.replay_annotations import annotate_step, committed_cards, game_turn, pedro_path
from arena.web.pages.replay_data import replay_steps, replay_views
from referee.runner import BotSpec, play_match


def reveal_view(pedro, history, fall=None, played=(("x",),)):  # type: ignore[no-untyped-def]
    return {"pedro": pedro, "history": history, "fall": fall, "played": [list(p) for p in played], "move_round": 1}


def test_regression_the_last_move_line_cut_diagonally_instead_of_following_pedro() -> None:
    """Two cards in one step (N2 then E1) took Pedro from (4,4) to (2,5): the viewer drew one diagonal line."""
    before = reveal_view([4, 4], [])
    after = reveal_view([2, 5], [[1, 0, "N2", None], [1, 1, "E1", None]])
    path = pedro_path(before, [[0, "N2", None], [1, "E1", None]], after)
    assert path == [[4, 4], [3, 4], [2, 4], [2, 5]]
    assert all(abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1 for a, b in pairwise(path))


def test_a_fall_ends_the_path_on_the_last_square_pedro_safely_entered() -> None:
    after = reveal_view([0, 4], [[1, 0, "N2", None], [1, 1, "N3", "edge"]], fall={"seat": 1, "at": [0, 4]})
    assert pedro_path(reveal_view([4, 4], []), [[0, "N2", None], [1, "N3", "edge"]], after) == [
        [4, 4], [3, 4], [2, 4], [1, 4], [0, 4]]
    # Fell on his first step: no line at all.
    stuck = reveal_view([4, 4], [[1, 0, "W1", "piranha"]], fall={"seat": 0, "at": [4, 4]})
    assert pedro_path(reveal_view([4, 4], []), [[0, "W1", "piranha"]], stuck) == []


def test_a_walk_that_does_not_end_where_the_view_puts_pedro_draws_nothing() -> None:
    after = reveal_view([9, 9], [[1, 0, "N2", None]])
    assert pedro_path(reveal_view([4, 4], []), [[0, "N2", None]], after) == []


def test_regression_a_step_listed_plays_for_a_card_that_was_never_revealed() -> None:
    """Pedro fell on the first card turned over: the other seats' committed cards went under the board
    unseen, so the step listed "plays N3" while the Played column (revealed cards, right) showed N2."""
    before = reveal_view([4, 4], [[1, 2, "N2", None]], played=((), (), ("N2",)))
    after = reveal_view([4, 4], [[1, 2, "N2", None], [2, 0, "W1", "piranha"]], fall={"seat": 0, "at": [4, 4]},
                        played=(("W1",), (), ("N2",)))
    decisions = [{"seat": 0, "decision": "choose_card", "action": "W1"},
                 {"seat": 1, "decision": "choose_card", "action": "N3"},
                 {"seat": 2, "decision": "choose_card", "action": ["E1", "S2"]}]
    notes = annotate_step(decisions, before, after)
    assert notes["reveals"] == [[0, "W1", "piranha"]]
    assert decisions[0]["cards"] == [{"card": "W1", "revealed": True}]
    assert decisions[1]["cards"] == [{"card": "N3", "revealed": False}]
    assert decisions[2]["cards"] == [{"card": "E1", "revealed": False}, {"card": "S2", "revealed": False}]
    assert not notes["hands_back"]


def test_committed_cards_keep_commitment_order_and_mark_only_what_was_turned_over() -> None:
    assert committed_cards(["S3", "N1"], ["S3"]) == [{"card": "S3", "revealed": True},
                                                     {"card": "N1", "revealed": False}]
    assert committed_cards("E2", []) == [{"card": "E2", "revealed": False}]


def test_game_turn_is_the_turn_of_the_view_before_the_step() -> None:
    assert game_turn({"move_round": 5, "turn": 99}) == {"label": "move round", "number": 5}
    assert game_turn({"turn": 9}) == {"label": "turn", "number": 9}
    assert game_turn({}) is None


PIRANHA_MATCHES = [("piranha-pedro", 2, 3), ("piranha-pedro-ko", 3, 4), ("piranha-pedro-ko-advanced", 4, 2)]


def play(random_bots, game: str, players: int, seed: int) -> tuple[dict, list[dict]]:  # type: ignore[no-untyped-def]
    doc = play_match(game, [BotSpec(url=b.url, name=f"r{i}") for i, b in enumerate(random_bots[:players])], seed=seed)
    views, _source = replay_views(doc)
    return doc, views


@pytest.fixture(scope="module", params=[("pajarracos", 3, 5), *PIRANHA_MATCHES])
def recorded(request, random_bots) -> tuple[dict, list[dict]]:
    return play(random_bots, *request.param)


@pytest.fixture(scope="module", params=PIRANHA_MATCHES)
def recorded_piranha(request, random_bots) -> tuple[dict, list[dict]]:
    return play(random_bots, *request.param)


def test_regression_the_slider_and_the_side_panel_disagreed_on_the_turn(recorded) -> None:
    """The label printed the referee's step counter, the side panel the game's turn after the step (10 vs 11 in
    Pajarracos after an extra action; 40 vs 37 in Piranha Pedro after piranha choices): both now print the game's
    turn of the step, the turn of the view before it."""
    doc, views = recorded
    steps = replay_steps(doc, (views, "engine"))
    key = "move_round" if doc["game"].startswith("piranha") else "turn"
    assert [s["game_turn"]["number"] for s in steps] == [v[key] for v in views[:-1]]
    assert [s["turn"] for s in steps] == [s["turn"] for s in doc["steps"]]  # the commitments' counter, untouched


def test_every_recorded_step_has_a_grid_path_and_marks_exactly_the_unrevealed_cards(recorded_piranha) -> None:
    doc, views = recorded_piranha
    steps = replay_steps(doc, (views, "engine"))
    hidden_steps = 0
    for k, step in enumerate(steps):
        before, after = views[k], views[k + 1]
        if step["path"]:
            assert step["path"][0] == before["pedro"] and step["path"][-1] == after["pedro"]
            assert all(abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1 for a, b in pairwise(step["path"]))
        else:
            assert before["pedro"] == after["pedro"] or not step["reveals"]
        revealed = sorted((seat, card) for seat, card, _ in step["reveals"])
        shown = sorted((d["seat"], c["card"]) for d in step["decisions"] for c in d.get("cards", []) if c["revealed"])
        assert revealed == shown
        hidden = [c for d in step["decisions"] for c in d.get("cards", []) if not c["revealed"]]
        if hidden:
            hidden_steps += 1
            assert after["fall"] is not None and after["phase"] in ("take_piranha", "over")
    falls = sum(1 for k in range(len(steps)) if views[k + 1].get("fall") and not views[k].get("fall"))
    assert falls >= 1 and hidden_steps <= falls
