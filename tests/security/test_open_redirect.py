"""``/login?next=`` after signing in (issue 15): only same-site paths. ``/%09/evil.com`` answered
``Location: //evil.com`` (browsers drop tabs and newlines anywhere in a URL), and a CRLF in ``next``
was a 500 (a header break in the redirect)."""

from __future__ import annotations

from urllib.parse import unquote

import pytest

from tests.pages.builders import account, csrf_token

OFF_SITE = [
    "/%09/evil.com", "/%0a/evil.com", "/%0d/evil.com", "%09//evil.com", "/%09%09/evil.com", "/%20/evil.com",
    "//evil.com", "///evil.com", "//evil.com/%2F..", "/\\evil.com", "\\\\evil.com", "/%5Cevil.com", "%5C%5Cevil.com",
    "%2F%2Fevil.com", "%2F%5Cevil.com", "https:evil.com", "https://evil.com", "http:/evil.com", "HTTPS://evil.com",
    "javascript:alert(1)", "data:text/html,x", "evil.com", "%00//evil.com", "/%00/evil.com", "/%7F/evil.com",
    "%E2%80%8B//evil.com", "/%EF%BC%8F/evil.com", " //evil.com", "%0d%0a//evil.com", "",
]
CRLF = ["/docs%0d%0aSet-Cookie:%20stolen=1", "/docs%0aX-Injected:%201", "/x%0d%0a%0d%0a<script>", "/%E5%98%8A%E5%98%8D"]
SAME_SITE = ["/docs", "/bots/new", "/leaderboards/pajarracos?players=3", "/tournaments/1%23standings", "/docs%3Fx",
             "/a%2F%2Fb", "/@evil.com", "/:evil.com", "/.//evil.com"]


def _log_in_with_next(client, token: str, target: str):  # type: ignore[no-untyped-def]
    url = f"/login?next={target}"
    csrf = csrf_token(client.get(url).get_data(as_text=True))
    return client.post(url, data={"token": token, "csrf_token": csrf})


@pytest.fixture
def token(context) -> str:  # type: ignore[no-untyped-def]
    return account(context, "walker")


@pytest.mark.parametrize("target", OFF_SITE)
def test_open_redirect_login_next_tab_evil(client, token, target) -> None:
    response = _log_in_with_next(client, token, target)
    assert response.status_code == 302 and response.headers["Location"] == "/", target


@pytest.mark.parametrize("target", CRLF)
def test_crlf_in_login_next_is_500(client, token, target) -> None:
    response = _log_in_with_next(client, token, target)
    assert response.status_code == 302 and response.headers["Location"] == "/", target
    assert "stolen" not in str(response.headers) and "X-Injected" not in response.headers


@pytest.mark.parametrize("target", SAME_SITE)
def test_login_next_keeps_same_site_paths(client, token, target) -> None:
    response = _log_in_with_next(client, token, target)
    assert response.status_code == 302 and response.headers["Location"] == unquote(target)
