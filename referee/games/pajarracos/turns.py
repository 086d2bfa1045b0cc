"""The stages of a turn, each a function over a cloned state (Battlesnake-style small stages).

A turn: one action -> (if it shooed a crow out of the orchard) one extra action at once, no draw
between -> the crows on the ACTIVE player's trees eat -> draw up to 5 while the reserve lasts ->
the next seat clockwise, (i + 1) mod n. When a player with no cards would start a turn the game
ends at once (no eating): hands, crows and scarecrows go to the discard pile.
"""

from __future__ import annotations

from referee.games.pajarracos import actions as act
from referee.games.pajarracos import orchards as orch
from referee.games.pajarracos.cards import CROW, SCARECROW, sort_cards, take_cards
from referee.games.pajarracos.state import (
    EXTRA_ACTION,
    MORE_CROWS,
    MORE_SCARECROWS,
    OVER,
    TURN,
    PajarracosState,
    Spot,
    Tree,
)


def apply_move(state: PajarracosState, seat: int, move: act.Move) -> PajarracosState:
    """Carry out a parsed, already checked ``move`` of the active ``seat`` on a cloned state."""
    kind = move[0]
    if kind == act.FRUIT:
        _, target, cards, crow_from, rest = move
        _set_hand(state, seat, rest)
        play_fruit(state, target, cards, crow_from)
        return end_turn(state)
    if kind == act.DISCARD:
        _set_hand(state, seat, move[2])
        state.discard = (*state.discard, *move[1])
        return end_turn(state)
    if kind == act.CROW_ACTION:
        _, card, spot = move
        _take_from_hand(state, seat, (card,))
        _set_tree(state, spot, crow=card)
        if act.can_place_crow(state, seat):
            state.phase = MORE_CROWS
            return state
        return end_turn(state)
    if kind == act.SCARECROW_ACTION:
        return place_scarecrow(state, seat, move[1], move[2], move[3])
    # done: the crow or scarecrow action under way ends here
    if state.phase == MORE_SCARECROWS:
        return end_scarecrow_action(state)
    return end_turn(state)


def play_fruit(state: PajarracosState, target: int, cards: tuple[str, ...], crow_from: Spot | None) -> None:
    """Cards go on top of the target tree (ordinary below juicy); a juicy card pulls the named crow
    over from its tree, which is freed."""
    fruit = cards[0].rstrip("*")
    tree = orch.find(state.orchards[target], fruit)
    below = tree.cards if tree is not None else ()
    _replace_orchard(state, target, orch.put(state.orchards[target], Tree(fruit, (*below, *cards))))
    if crow_from is not None:
        bird = orch.find(state.orchards[crow_from[0]], crow_from[1]).crow
        _set_tree(state, crow_from, crow=None)
        _set_tree(state, (target, fruit), crow=bird)


def place_scarecrow(state: PajarracosState, seat: int, fruit: str, mode: str, to: Spot | None) -> PajarracosState:
    """Protect a tree, shoo its crow out (extra action earned) or shoo it to another player's tree
    (the turn ends at once, forfeiting any extra action earned earlier in this action)."""
    _take_from_hand(state, seat, (SCARECROW,))
    state.scarecrowed = (*state.scarecrowed, fruit)
    spot = (seat, fruit)
    if mode == act.PROTECT:
        _set_tree(state, spot, scarecrow=True)
    else:
        bird = orch.find(state.orchards[seat], fruit).crow
        _set_tree(state, spot, crow=None)
        if mode == act.SHOO_OUT:
            state.discard = (*state.discard, SCARECROW, bird)
            state.shooed_out = True
        else:
            state.discard = (*state.discard, SCARECROW)
            _set_tree(state, to, crow=bird)
            return end_turn(state)
    if act.can_place_scarecrow(state, seat):
        state.phase = MORE_SCARECROWS
        return state
    return end_scarecrow_action(state)


def end_scarecrow_action(state: PajarracosState) -> PajarracosState:
    """One extra action if any crow was shooed out (and the hand still holds a card to act with)."""
    earned = state.shooed_out
    state.shooed_out = False
    state.scarecrowed = ()
    if earned and state.hands[state.active]:
        state.phase = EXTRA_ACTION
        return state
    return end_turn(state)


def end_turn(state: PajarracosState) -> PajarracosState:
    """Crows on the active player's trees eat, the active player draws, the next seat starts."""
    state.shooed_out = False
    state.scarecrowed = ()
    seat = state.active
    eat(state, seat)
    draw(state, seat)
    following = (seat + 1) % state.num_players
    if not state.hands[following]:
        return finish(state)
    state.active = following
    state.turn += 1
    state.phase = TURN
    return state


def eat(state: PajarracosState, seat: int) -> None:
    """A lone crow eats the top fruit card (and leaves with the last one); a flock eats the whole tree."""
    discarded: list[str] = []
    trees: list[Tree] = []
    for tree in state.orchards[seat]:
        if tree.crow is None:
            trees.append(tree)
        elif tree.crow == CROW:
            discarded.append(tree.cards[-1])
            if len(tree.cards) > 1:
                trees.append(Tree(tree.fruit, tree.cards[:-1], tree.crow, tree.scarecrow))
            else:
                discarded.append(CROW)  # the tree is empty: it disappears and the crow leaves
        else:
            discarded.extend(tree.cards)
            discarded.append(tree.crow)
    if discarded:
        state.discard = (*state.discard, *discarded)
        _replace_orchard(state, seat, tuple(trees))


def draw(state: PajarracosState, seat: int) -> None:
    """Up to the hand size, from the top of the reserve, while it lasts (it is never reshuffled)."""
    hand = state.hands[seat]
    count = min(state.rules.hand_size - len(hand), len(state.reserve))
    if count <= 0:
        return
    cut = len(state.reserve) - count
    drawn = state.reserve[cut:]
    state.reserve = state.reserve[:cut]
    hands = list(state.hands)
    hands[seat] = sort_cards((*hand, *drawn))
    state.hands = tuple(hands)


def finish(state: PajarracosState) -> PajarracosState:
    """The game ends: hands, then every crow and scarecrow on the trees, go to the discard pile."""
    discarded = [card for hand in state.hands for card in hand]
    orchards = []
    for orchard in state.orchards:
        for tree in orchard:
            if tree.crow is not None:
                discarded.append(tree.crow)
            if tree.scarecrow:
                discarded.append(SCARECROW)
        orchards.append(tuple(Tree(t.fruit, t.cards) for t in orchard))
    state.discard = (*state.discard, *discarded)
    state.hands = ((),) * state.num_players
    state.orchards = tuple(orchards)
    state.phase = OVER
    return state


# -- small field updates -----------------------------------------------------------------------
def _take_from_hand(state: PajarracosState, seat: int, cards: tuple[str, ...]) -> None:
    rest = take_cards(state.hands[seat], cards)
    assert rest is not None, "moves are checked before they are applied"
    _set_hand(state, seat, rest)


def _set_hand(state: PajarracosState, seat: int, rest: tuple[str, ...]) -> None:
    hands = list(state.hands)
    hands[seat] = rest
    state.hands = tuple(hands)


_KEEP = object()


def _set_tree(state: PajarracosState, spot: Spot, crow: object = _KEEP, scarecrow: object = _KEEP) -> None:
    seat, fruit = spot
    tree = orch.find(state.orchards[seat], fruit)
    new = Tree(
        fruit,
        tree.cards,
        tree.crow if crow is _KEEP else crow,
        tree.scarecrow if scarecrow is _KEEP else scarecrow,
    )
    _replace_orchard(state, seat, tuple(new if t.fruit == fruit else t for t in state.orchards[seat]))


def _replace_orchard(state: PajarracosState, seat: int, orchard: tuple[Tree, ...]) -> None:
    orchards = list(state.orchards)
    orchards[seat] = orchard
    state.orchards = tuple(orchards)
