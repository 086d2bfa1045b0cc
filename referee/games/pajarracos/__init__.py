"""Pajarracos (Paco Yáñez, Zacatrus; Russian edition «Кыш!»), 3-6 players (2 as a flagged mode)."""

from __future__ import annotations

from referee.games.pajarracos.game import ENGINE_VERSION, PAJARRACOS, Pajarracos

__all__ = ["ENGINE_VERSION", "PAJARRACOS", "Pajarracos"]
