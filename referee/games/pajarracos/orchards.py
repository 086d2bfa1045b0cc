"""Reading and rebuilding orchards: which trees take fruit, crows or scarecrows, and the score.

Orchards are tuples of trees in FRUITS order; a tree with no cards left disappears at once, so its
fruit kind can be planted again later.
"""

from __future__ import annotations

from referee.games.pajarracos.cards import FRUIT_INDEX
from referee.games.pajarracos.state import Orchard, Spot, Tree


def find(orchard: Orchard, fruit: str) -> Tree | None:
    for tree in orchard:
        if tree.fruit == fruit:
            return tree
    return None


def put(orchard: Orchard, tree: Tree) -> Orchard:
    """``orchard`` with ``tree`` in place of its tree of that kind (or added, in fruit order)."""
    rank = FRUIT_INDEX[tree.fruit]
    for i, old in enumerate(orchard):
        if old.fruit == tree.fruit:
            return (*orchard[:i], tree, *orchard[i + 1 :])
        if FRUIT_INDEX[old.fruit] > rank:
            return (*orchard[:i], tree, *orchard[i:])
    return (*orchard, tree)


def takes_fruit(orchard: Orchard, fruit: str) -> bool:
    """A new tree may be planted, or the tree of that kind is neither attacked nor protected."""
    tree = find(orchard, fruit)
    return tree is None or (tree.crow is None and not tree.scarecrow)


def landing_spots(orchards: tuple[Orchard, ...], player: int) -> list[Spot]:
    """Trees of OTHER players with no crow and no scarecrow: where ``player`` may send a crow."""
    return [
        (seat, tree.fruit)
        for seat, orchard in enumerate(orchards)
        if seat != player
        for tree in orchard
        if tree.crow is None and not tree.scarecrow
    ]


def crow_spots(orchards: tuple[Orchard, ...]) -> list[Spot]:
    """Every tree with a crow or flock on it: the crows a juicy fruit can attract."""
    return [(seat, tree.fruit) for seat, orchard in enumerate(orchards) for tree in orchard if tree.crow]


def score(orchard: Orchard) -> int:
    """All fruit cards in the orchard, plus the largest tree once more."""
    sizes = [len(tree.cards) for tree in orchard]
    return sum(sizes) + max(sizes, default=0)


def tiebreak(orchard: Orchard) -> int:
    """Kinds of fruit in the orchard: more wins a tie on points."""
    return len(orchard)
