"""Cookies: the RFC 6265 jar (docs/hostile.md J33, J34), the client's request path, workload h,
and cookies.txt files read and written by the real ``curl``."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import nodelay
import pytest
from nodelay import CookieJar, _core
from scripted import Recv, ScriptedServer, Send, response

pytestmark = pytest.mark.both_drivers

Scripted = Callable[..., ScriptedServer]

OK = response(body=b"ok")


def sent_cookie(request: bytes) -> str | None:
    """The Cookie header of a raw request head, or None."""
    for line in request.split(b"\r\n\r\n")[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"cookie":
            return value.strip().decode("latin-1")
    return None


def set_then_echo(scripted: Scripted, *set_cookies: str) -> ScriptedServer:
    """One keep-alive connection: a response with these Set-Cookie fields, then plain 200s."""
    first = response(body=b"set", headers=[("Set-Cookie", v) for v in set_cookies])
    return scripted([Recv(), Send(first), Recv(), Send(OK), Recv(), Send(OK)])


# -- the jar on its own ---------------------------------------------------------------------


def test_domain_path_and_host_only_rules() -> None:
    jar = CookieJar()
    jar._jar.store(
        "http://www.example.com/app/page",
        ["host=1", "dom=2; Domain=example.com; Path=/", "deep=3; Path=/app/x"],
    )
    assert jar.header_for("http://www.example.com/app/") == "host=1; dom=2"
    assert jar.header_for("http://www.example.com/app/x/y") == "deep=3; host=1; dom=2"
    assert jar.header_for("http://sub.example.com/") == "dom=2"  # host-only stays home
    assert jar.header_for("http://example.com/") == "dom=2"
    assert jar.header_for("http://notexample.com/") is None
    assert jar.header_for("http://www.example.com/other") == "dom=2"  # default path /app


def test_public_suffix_and_foreign_domains_ignored() -> None:
    """J33: Domain=com / .co.uk / github.io / another site → ignored."""
    jar = CookieJar()
    changed = jar._jar.store(
        "http://www.example.co.uk/",
        [
            "a=1; Domain=uk",
            "b=1; Domain=.co.uk",
            "c=1; Domain=evil.co.uk",
            "d=1; Domain=example.com",
            "e=1; Domain=com",
        ],
    )
    assert changed == 0 and len(jar) == 0
    jar._jar.store("https://user.github.io/", ["f=1; Domain=github.io"])  # private section
    assert len(jar) == 0
    # A public suffix is allowed as the host itself, and then host-only (RFC 6265 §5.3).
    jar._jar.store("http://github.io/", ["g=1; Domain=github.io"])
    assert jar.header_for("http://github.io/") == "g=1"
    assert jar.header_for("http://user.github.io/") is None


def test_secure_rules() -> None:
    """J34: a Secure cookie goes over https only (loopback included); one set over http
    is ignored."""
    jar = CookieJar()
    jar._jar.store("https://127.0.0.1/", ["s=1; Secure", "p=2"])
    assert jar.header_for("https://127.0.0.1/") == "s=1; p=2"
    assert jar.header_for("http://127.0.0.1/") == "p=2"
    assert jar._jar.store("http://a.test/", ["t=1; Secure"]) == 0
    jar.set("u", "1", "b.test", secure=True)
    assert jar.header_for("http://b.test/") is None
    assert jar.header_for("https://b.test/") == "u=1"


def test_expiry_deletes() -> None:
    jar = CookieJar()
    jar._jar.store("http://a.test/", ["a=1", "b=2", "c=3; Max-Age=3600"])
    assert len(jar) == 3
    jar._jar.store("http://a.test/", ["a=; Max-Age=0", "b=; Expires=Thu, 01 Jan 1970 00:00:00 GMT"])
    assert dict(jar) == {"c": "3"}
    (cookie,) = jar.cookies()
    assert cookie.expires is not None and abs(cookie.expires - (time.time() + 3600)) < 60


def test_caps() -> None:
    """J34: 10,000 Set-Cookie values → the first MAX_COOKIES_PER_RESPONSE; the jar stops at
    MAX_COOKIES_PER_JAR (replacing a cookie still works)."""
    jar = CookieJar()
    assert jar._jar.store("http://a.test/", [f"c{i}=v" for i in range(10_000)]) == 50
    assert CookieJar.MAX_COOKIES_PER_RESPONSE == 50
    for r in range(100):
        jar._jar.store("http://a.test/", [f"r{r}x{i}=v" for i in range(50)])
    assert len(jar) == CookieJar.MAX_COOKIES_PER_JAR == 3000
    assert jar._jar.store("http://a.test/", ["c0=new"]) == 1
    assert jar.get("c0") == "new"
    assert jar._jar.store("http://a.test/", ["brand=new"]) == 0


def test_dict_like_api() -> None:
    jar = CookieJar({"a": "1"})
    jar["b"] = "2"
    jar.set("c", "3", domain="example.com", path="/x")
    jar.set("c", "4", domain="other.test")
    assert jar["a"] == "1" and "b" in jar and "zz" not in jar
    assert jar.get("c", domain="other.test") == "4"
    assert jar.get("c", domain=".example.com", path="/x") == "3"
    assert jar.get("missing", "dflt") == "dflt"
    assert sorted(jar) == ["a", "b", "c"]
    assert len(jar) == 4
    del jar["a"]
    with pytest.raises(KeyError):
        jar["a"]
    with pytest.raises(KeyError):
        del jar["a"]
    assert jar.delete("c", domain="other.test") == 1
    jar.clear(domain="example.com")
    assert dict(jar) == {"b": "2"}
    jar.clear()
    assert len(jar) == 0 and not jar
    with pytest.raises(ValueError):
        jar.set("bad name", "x")
    copy = pickle.loads(pickle.dumps(CookieJar({"k": "v"})))
    assert copy == {"k": "v"}


# -- the client -----------------------------------------------------------------------------


def test_set_and_send(server: _core.TestServer, client: nodelay.Client) -> None:
    r = client.get(server.url + "/cookies/set?a=1&b=2")
    assert r.cookies == {"a": "1", "b": "2"}
    assert isinstance(client.cookies, CookieJar) and client.cookies == {"a": "1", "b": "2"}
    assert client.get(server.url + "/cookies").json() == {"cookies": {"a": "1", "b": "2"}}
    assert client.get(server.url + "/cookies").cookies == {}


def test_request_cookies_merge_and_are_one_shot(
    server: _core.TestServer, client: nodelay.Client
) -> None:
    client.get(server.url + "/cookies/set?a=1&b=2")
    r = client.get(server.url + "/cookies", cookies={"b": "x", "c": "3"})
    assert r.json() == {"cookies": {"a": "1", "b": "x", "c": "3"}}
    assert client.get(server.url + "/cookies").json() == {"cookies": {"a": "1", "b": "2"}}
    # An explicit Cookie header is sent as given.
    r = client.get(server.url + "/cookies", headers={"Cookie": "mine=1"})
    assert r.json() == {"cookies": {"mine": "1"}}


def test_client_cookies_dict_and_module_functions(server: _core.TestServer) -> None:
    with nodelay.Client(cookies={"k": "v"}) as c:
        assert c.get(server.url + "/cookies").json() == {"cookies": {"k": "v"}}
        c.cookies = {"z": "1"}
        assert c.get(server.url + "/cookies").json() == {"cookies": {"z": "1"}}
    r = nodelay.get(server.url + "/cookies", cookies={"m": "1"})
    assert r.json() == {"cookies": {"m": "1"}}
    r = nodelay.post(server.url + "/anything", cookies={"m": "2"})
    assert ["cookie", "m=2"] in r.json()["headers"]


def test_jar_shared_between_clients(server: _core.TestServer) -> None:
    jar = CookieJar()
    with nodelay.Client(cookies=jar) as one, nodelay.Client(cookies=jar) as two:
        one.get(server.url + "/cookies/set?shared=yes")
        assert two.cookies is jar
        assert two.get(server.url + "/cookies").json() == {"cookies": {"shared": "yes"}}


def test_cookies_stored_on_each_redirect_hop(scripted: Scripted, server: _core.TestServer) -> None:
    hop = response(302, headers=[("Set-Cookie", "hop=1; Path=/"), ("Location", "/next")])
    srv = scripted([Recv(), Send(hop), Recv(), Send(OK)])
    with nodelay.Client(follow_redirects=True) as c:
        r = c.get(srv.url + "/start")
        assert r.status_code == 200 and len(r.history) == 1
        assert sent_cookie(srv.requests[1]) == "hop=1"
        assert r.history[0].cookies == {"hop": "1"}


def test_cross_host_redirect_sends_only_the_new_hosts_cookies(
    scripted: Scripted, other_server: _core.TestServer
) -> None:
    """E22: the user's Cookie header and a's cookies stay on a; the jar adds b's own."""
    target = other_server.url.replace("127.0.0.1", "localhost") + "/cookies"
    hop = response(302, headers=[("Set-Cookie", "a_only=1"), ("Location", target)])
    srv = scripted([Recv(), Send(hop)])
    with nodelay.Client(follow_redirects=True) as c:
        c.cookies.set("b_cookie", "2", domain="localhost")
        r = c.get(srv.url + "/", headers={"Cookie": "explicit=1"})
    assert r.json() == {"cookies": {"b_cookie": "2"}}
    assert sent_cookie(srv.requests[0]) == "explicit=1"


def test_per_request_cookies_not_carried_to_another_host(
    scripted: Scripted, other_server: _core.TestServer
) -> None:
    target = other_server.url.replace("127.0.0.1", "localhost") + "/cookies"
    srv = scripted([Recv(), Send(response(302, headers=[("Location", target)]))])
    r = nodelay.get(srv.url + "/", cookies={"secret": "1"}, follow_redirects=True)
    assert sent_cookie(srv.requests[0]) == "secret=1"
    assert r.json() == {"cookies": {}}


def test_scripted_public_suffix_and_foreign_domain(scripted: Scripted) -> None:
    srv = set_then_echo(
        scripted, "a=1; Domain=com", "b=1; Domain=.com", "c=1; Domain=example.com", "ok=1"
    )
    with nodelay.Client() as c:
        assert c.get(srv.url + "/").cookies == {"ok": "1"}
        c.get(srv.url + "/")
        assert dict(c.cookies) == {"ok": "1"}
    assert sent_cookie(srv.requests[1]) == "ok=1"


def test_scripted_secure_not_sent_over_http(scripted: Scripted) -> None:
    srv = set_then_echo(scripted, "sec=1; Secure", "plain=1")
    with nodelay.Client() as c:
        c.cookies.set("sec2", "1", domain="127.0.0.1", secure=True)
        c.get(srv.url + "/")
        c.get(srv.url + "/")
    assert sent_cookie(srv.requests[1]) == "plain=1"


def test_scripted_attributes_and_deletion(scripted: Scripted) -> None:
    delete = response(
        headers=[
            ("Set-Cookie", "gone=; Max-Age=0; Path=/"),
            ("Set-Cookie", "old=; Path=/; Expires=Wed, 21 Oct 2015 07:28:00 GMT"),
        ]
    )
    first = response(
        headers=[
            ("Set-Cookie", "gone=1; Path=/"),
            ("Set-Cookie", "old=1; Path=/"),
            ("Set-Cookie", "ho=1; HttpOnly; Path=/"),
            ("Set-Cookie", "sub=1; Path=/sub"),
        ]
    )
    srv = scripted([Recv(), Send(first), Recv(), Send(OK), Recv(), Send(delete), Recv(), Send(OK)])
    with nodelay.Client() as c:
        c.get(srv.url + "/")
        c.get(srv.url + "/sub/page")
        c.get(srv.url + "/")
        c.get(srv.url + "/")
        http_only = [x.http_only for x in c.cookies.cookies() if x.name == "ho"]
        assert http_only == [True]
    assert sent_cookie(srv.requests[1]) == "sub=1; gone=1; old=1; ho=1"
    assert sent_cookie(srv.requests[3]) == "ho=1"


def test_set_cookie_flood_is_capped(scripted: Scripted) -> None:
    """J34: 100 Set-Cookie fields → 50 kept; 10,000 → over the header-count limit, an
    error, nothing stored."""
    many = response(headers=[("Set-Cookie", f"c{i}=v") for i in range(100)])
    srv = scripted([Recv(), Send(many)])
    with nodelay.Client() as c:
        c.get(srv.url + "/")
        assert len(c.cookies) == CookieJar.MAX_COOKIES_PER_RESPONSE
    flood = response(headers=[("Set-Cookie", f"c{i}=v") for i in range(10_000)])
    srv = scripted([Recv(), Send(flood)])
    with nodelay.Client() as c:
        try:
            c.get(srv.url + "/")
        except nodelay.RemoteProtocolError:
            pass
        assert len(c.cookies) <= CookieJar.MAX_COOKIES_PER_RESPONSE


def test_autosave_once_per_response(tmp_path: Path, server: _core.TestServer) -> None:
    saves = []

    class Counting(CookieJar):
        __slots__ = ()

        def _changed(self) -> None:
            saves.append(1)
            super()._changed()

    path = tmp_path / "jar.txt"
    jar = Counting(autosave=path)
    with nodelay.Client(cookies=jar) as c:
        c.get(server.url + "/cookies/set?a=1&b=2&c=3")
        assert len(saves) == 1
        c.get(server.url + "/cookies")
        assert len(saves) == 1
    assert "\ta\t1\n" in path.read_text()
    # A new jar with the same autosave path starts from the file.
    again = CookieJar(autosave=path)
    assert again == {"a": "1", "b": "2", "c": "3"}
    again["d"] = "4"  # any-host cookie: not representable in cookies.txt
    again.set("e", "5", domain="127.0.0.1")
    assert "\te\t5\n" in path.read_text()


# -- workload h and cookies.txt -------------------------------------------------------------


def test_workload_h_login_then_mixed_requests(tmp_path: Path, server: _core.TestServer) -> None:
    """Login POST (→ 303 → /cookies/set), 1000 mixed GET/POST that must carry the session
    cookie, then the jar saved, reloaded and used by a new client."""
    base = server.url
    with nodelay.Session() as s:
        login = s.post(
            base + "/redirect-to",
            params={"url": "/cookies/set?session=s3cr3t", "status_code": "303"},
            data={"user": "u", "password": "p"},
        )
        assert login.status_code == 200 and s.cookies == {"session": "s3cr3t"}
        for i in range(1000):
            if i % 2:
                r = s.post(base + "/anything", json={"i": i})
                assert ["cookie", "session=s3cr3t"] in r.json()["headers"], i
            else:
                r = s.get(base + "/cookies")
                assert r.json() == {"cookies": {"session": "s3cr3t"}}, i
        path = tmp_path / "cookies.txt"
        s.cookies.save(path)
    with nodelay.Client(cookies=CookieJar.load(path)) as c:
        assert c.get(base + "/cookies").json() == {"cookies": {"session": "s3cr3t"}}


def test_cookies_txt_round_trip(tmp_path: Path) -> None:
    jar = CookieJar()
    jar._jar.store(
        "https://www.example.com/",
        [
            "a=1",
            "b=2; Domain=example.com; Path=/p; Secure; HttpOnly; Max-Age=86400",
            "c=3; Path=/; Expires=Fri, 01 Jan 2100 00:00:00 GMT",
        ],
    )
    path = tmp_path / "c.txt"
    jar.save(path)
    text = path.read_text()
    assert text.startswith("# Netscape HTTP Cookie File\n")
    assert "www.example.com\tFALSE\t/\tFALSE\t0\ta\t1\n" in text
    assert "#HttpOnly_.example.com\tTRUE\t/p\tTRUE\t" in text
    assert "www.example.com\tFALSE\t/\tFALSE\t4102444800\tc\t3\n" in text
    loaded = CookieJar.load(path)
    assert sorted(loaded.cookies()) == sorted(jar.cookies())
    # Expired lines and junk are skipped.
    path.write_text(
        "# Netscape HTTP Cookie File\n"
        "old.test\tFALSE\t/\tFALSE\t1000\told\t1\n"
        "not a cookie line\n"
        "ok.test\tFALSE\t/\tFALSE\t0\tok\t1\n"
    )
    assert dict(CookieJar.load(path)) == {"ok": "1"}


CURL = shutil.which("curl")
needs_curl = pytest.mark.skipif(CURL is None, reason="curl is not installed")


@needs_curl
def test_curl_reads_our_file(tmp_path: Path, server: _core.TestServer) -> None:
    with nodelay.Client() as c:
        c.get(server.url + "/cookies/set?from_nodelay=1&other=two")
        path = tmp_path / "cookies.txt"
        c.cookies.save(path)
    out = subprocess.run(
        [str(CURL), "-s", "-b", str(path), server.url + "/cookies"],
        capture_output=True,
        timeout=30,
        check=True,
        env={**os.environ, "no_proxy": "*"},
    )
    assert json.loads(out.stdout) == {"cookies": {"from_nodelay": "1", "other": "two"}}


@needs_curl
def test_we_read_curls_file(tmp_path: Path, server: _core.TestServer) -> None:
    path = tmp_path / "curl-jar.txt"
    subprocess.run(
        [str(CURL), "-s", "-o", os.devnull, "-c", str(path), server.url + "/cookies/set?by_curl=1"],
        timeout=30,
        check=True,
        env={**os.environ, "no_proxy": "*"},
    )
    jar = CookieJar.load(path)
    assert dict(jar) == {"by_curl": "1"}
    with nodelay.Client(cookies=jar) as c:
        assert c.get(server.url + "/cookies").json() == {"cookies": {"by_curl": "1"}}


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.txt"
    with pytest.raises(FileNotFoundError) as info:
        CookieJar.load(missing)
    assert info.value.filename == str(missing) and info.value.errno == 2
    assert str(missing) in str(info.value)
    with pytest.raises(IsADirectoryError) as directory:
        CookieJar.load(tmp_path)
    assert directory.value.filename == str(tmp_path)
    with pytest.raises(FileNotFoundError) as unsaved:
        CookieJar({"a": "1"}).save(tmp_path / "no-dir" / "cookies.txt")
    assert unsaved.value.filename == str(tmp_path / "no-dir" / "cookies.txt")
