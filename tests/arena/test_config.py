"""Settings (arena.config): the deal key that keeps match seeds unpredictable."""

from __future__ import annotations

import stat

import pytest

from arena.config import DEAL_SECRET_FILE, ConfigError, load_settings


def test_the_deal_key_is_generated_once_and_kept_in_the_data_folder(tmp_path) -> None:
    first = load_settings({}, env="development", data_dir=tmp_path).deal_key()
    path = tmp_path / DEAL_SECRET_FILE
    assert len(first) == 64 and stat.S_IMODE(path.stat().st_mode) == 0o600  # readable by the arena's user only
    again = load_settings({}, env="development", data_dir=tmp_path).deal_key()  # another process, same arena
    assert again == first
    assert load_settings({}, env="development", data_dir=tmp_path / "other").deal_key() != first


def test_the_deal_key_is_set_or_derived_from_the_kept_secret_key_in_production(tmp_path) -> None:
    explicit = load_settings({"ARENA_DEAL_SECRET": "s" * 32}, data_dir=tmp_path)
    assert explicit.deal_key() == b"s" * 32
    with pytest.raises(ConfigError, match="at least 32"):
        load_settings({"ARENA_DEAL_SECRET": " "}, data_dir=tmp_path)
    env = {"ARENA_ENV": "production", "ARENA_SECRET_KEY": "k" * 64}
    one, two = load_settings(env, data_dir=tmp_path / "a"), load_settings(env, data_dir=tmp_path / "b")
    assert one.deal_key() == two.deal_key() != b"k" * 64  # every host alike, and not the session key itself
    assert not (tmp_path / "a" / DEAL_SECRET_FILE).exists()
    rotated = load_settings({"ARENA_ENV": "production", "ARENA_SECRET_KEY": "x" * 64}, data_dir=tmp_path)
    assert rotated.deal_key() != one.deal_key()


def test_an_empty_deal_key_file_regression_made_every_seed_public(tmp_path) -> None:
    """Bug: a file created but not yet written (or left empty by a crash) gave the empty key, and with it
    seeds anyone could compute. The key is now written whole before it appears, and an unusable file is
    refused, never used."""
    (tmp_path / DEAL_SECRET_FILE).write_text("")
    with pytest.raises(ConfigError, match="no usable deal key"):
        load_settings({}, env="development", data_dir=tmp_path).deal_key()
    assert not list(tmp_path.glob(".deal-secret*"))  # no draft left behind
