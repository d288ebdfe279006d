"""Who may read the dashboard: the token rule of ``noetic serve`` off loopback (a browser logs
in once and gets a cookie), loopback only without a token, and ``/mcp`` unchanged."""

from __future__ import annotations

import hashlib
import hmac

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.dashboard import auth
from noetic.dashboard.mount import owns

from ..conftest import serving
from .seed import seed

TOKEN = "s3cret-token"

pytestmark = pytest.mark.subprocess  # a server on loopback


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    home = tmp_path_factory.mktemp("guarded") / "store"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NOETIC_INDEX", "inline")
        ids = seed(home, scored=2)
        with serving(home, token=TOKEN) as url:
            yield url, ids


def test_a_page_without_credentials_redirects_to_the_login_form(guarded):
    url, ids = guarded
    r = httpx.get(f"{url}/tasks/{ids.full_task}?x=1")
    assert r.status_code == 303
    assert r.headers["location"] == f"/login?next=%2Ftasks%2F{ids.full_task}%3Fx%3D1"
    form = httpx.get(url + r.headers["location"])
    assert form.status_code == 200
    assert '<label for="token">Token</label>' in form.text
    assert f'value="/tasks/{ids.full_task}?x=1"' in form.text


def test_logging_in_sets_a_cookie_that_opens_every_page(guarded):
    url, ids = guarded
    with httpx.Client(base_url=url) as client:
        r = client.post("/login", data={"token": TOKEN, "next": f"/tasks/{ids.full_task}"})
        assert r.status_code == 303 and r.headers["location"] == f"/tasks/{ids.full_task}"
        cookie = r.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
        assert TOKEN not in cookie  # a login session's id, never the token itself
        for path in ("/", f"/tasks/{ids.full_task}", "/calibration", "/compare"):
            assert client.get(path).status_code == 200, path
        out = client.post("/logout")
        assert out.status_code == 303
        assert client.get("/").status_code == 303


def test_a_wrong_token_is_refused_with_the_form_again(guarded):
    url, _ = guarded
    r = httpx.post(url + "/login", data={"token": "guess", "next": "/"})
    assert r.status_code == 401
    assert "not the right one" in r.text
    assert "set-cookie" not in r.headers


def test_a_forged_cookie_is_refused(guarded):
    url, _ = guarded
    old_scheme = hmac.new(TOKEN.encode(), b"noetic dashboard session", hashlib.sha256)
    for value in (TOKEN, old_scheme.hexdigest(), ""):
        r = httpx.get(url + "/", cookies={auth.COOKIE: value})
        assert r.status_code == 303, value


def test_the_bearer_header_opens_pages_too(guarded):
    url, _ = guarded
    assert httpx.get(url + "/", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert httpx.get(url + "/", headers={"Authorization": "Bearer nope"}).status_code == 303


def test_the_live_stream_and_unknown_paths_answer_401_not_a_form(guarded):
    url, _ = guarded
    live = httpx.get(url + "/live")
    assert live.status_code == 401
    assert live.headers["www-authenticate"].startswith("Bearer")
    assert httpx.get(url + "/nowhere").status_code == 401  # the server's own bearer check


def test_mcp_still_needs_the_bearer_header_and_ignores_the_cookie(guarded):
    url, _ = guarded
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    login = httpx.post(url + "/login", data={"token": TOKEN, "next": "/"})
    r = httpx.post(url + "/mcp", json=ping, cookies={auth.COOKIE: login.cookies[auth.COOKIE]})
    assert r.status_code == 401
    assert r.json() == {"error": "missing or wrong bearer token"}


def test_login_never_redirects_off_the_site(guarded):
    url, _ = guarded
    for target in ("//evil.example/x", "https://evil.example", "/\\evil.example", "x"):
        r = httpx.post(url + "/login", data={"token": TOKEN, "next": target})
        assert r.status_code == 303
        assert r.headers["location"] == "/", target


def test_without_a_token_only_loopback_hosts_are_answered(site):
    assert httpx.get(site.url + "/").status_code == 200
    r = httpx.get(site.url + "/", headers={"Host": "evil.example:8765"})
    assert r.status_code == 403
    assert httpx.get(site.url + "/", headers={"Host": "localhost:8765"}).status_code == 200


@given(st.text(max_size=60))
def test_safe_next_only_returns_local_paths(target):
    result = auth.safe_next(target)
    assert result.startswith("/") and not result.startswith("//") and "\\" not in result


def test_the_dashboard_owns_its_pages_and_not_the_mcp_endpoint():
    assert owns("/") and owns("/tasks/c_1") and owns("/calibration") and owns("/static/x.css")
    assert not owns("/mcp") and not owns("/hooks/pre-tool-use") and not owns("/nowhere")


def test_every_dashboard_route_is_one_the_dashboard_owns(tmp_path):
    """The server's bearer check leaves the dashboard's paths to it (they also take the login
    cookie): a page missing from that list would refuse a logged-in browser."""
    from starlette.routing import Mount, Route

    from noetic.dashboard.app import dashboard_app

    for route in dashboard_app(tmp_path / "store").routes:
        assert isinstance(route, Route | Mount)
        assert owns(route.path.replace("{id}", "x") or "/"), route.path
