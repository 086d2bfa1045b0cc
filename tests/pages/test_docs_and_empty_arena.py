"""The docs page renders the repository's docs (or says where they are), and every page works on an
empty arena."""

from __future__ import annotations

import os

from arena.web.pages import docs as docs_module


def test_docs_show_the_tutorial_and_the_protocol(client) -> None:
    page = client.get("/docs").get_data(as_text=True)
    assert 'id="tutorial"' in page and 'id="protocol"' in page
    assert "Bot protocol v1" in page and "<table>" in page and "X-Arena-Signature" in page
    assert "first bot" in page.lower()
    assert 'href="/docs/games/pajarracos"' in page
    assert "Pajarracos" in client.get("/docs/games/pajarracos").get_data(as_text=True)


def test_docs_prefer_docs_tutorial_md_when_there_is_one(app, tmp_path) -> None:
    (tmp_path / "protocol.md").write_text("# Bot protocol\n\nHello.\n")
    (tmp_path / "tutorial.md").write_text("# Tutorial\n\nStep one: **write** a bot.\n")
    app.config["ARENA_DOCS_DIR"] = str(tmp_path)
    page = app.test_client().get("/docs").get_data(as_text=True)
    assert "<strong>write</strong>" in page and "Hello." in page


def test_docs_fall_back_to_the_readme_tutorial_section(app, tmp_path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "protocol.md").write_text("# Bot protocol\n")
    (tmp_path / "README.md").write_text("# X\n\n## Tutorial: a bot\n\nDo *this*.\n\n## Layout\n\nNot this.\n")
    app.config["ARENA_DOCS_DIR"] = str(folder)
    page = app.test_client().get("/docs").get_data(as_text=True)
    assert "<em>this</em>" in page and "Not this." not in page


def test_docs_without_the_docs_folder_say_where_to_find_them(app, tmp_path) -> None:
    app.config["ARENA_DOCS_DIR"] = str(tmp_path / "missing")
    response = app.test_client().get("/docs")
    assert response.status_code == 503
    assert "were not found" in response.get_data(as_text=True) and "docs/" in response.get_data(as_text=True)


def test_rendered_docs_are_cached_until_the_file_changes(tmp_path) -> None:
    path = tmp_path / "a.md"
    path.write_text("one")
    assert "one" in docs_module.render(path)
    path.write_text("two")
    os.utime(path, (1, 1))
    assert "two" in docs_module.render(path)


def test_every_page_works_on_an_empty_arena(client) -> None:
    home = client.get("/").get_data(as_text=True)
    assert "No tournament is running right now." in home and "No rated matches yet." in home
    assert 'The <a href="/ladders">ladders</a>' in home  # where matches are played when no tournament is
    board = client.get("/leaderboards/pajarracos")
    assert board.status_code == 200 and "No rated matches for 3 players yet" in board.get_data(as_text=True)
    for url in ("/signup", "/login", "/docs"):
        assert client.get(url).status_code == 200
