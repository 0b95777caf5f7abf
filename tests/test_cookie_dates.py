"""Cookie ``Expires`` dates (RFC 6265 §5.1.1), a ``Domain`` with whitespace inside
(§5.2.3) and cookies.txt files written by Python's ``http.cookiejar``, checked against
implementations we did not write, in the same test and on the same server:

- tough-cookie's ``parseDate`` (Node; Debian's ``node-tough-cookie``), an implementation of
  the §5.1.1 algorithm written against the http-state test suite;
- Python's ``http.cookiejar`` (which requests uses), whose ``http2time`` matches a looser
  set of patterns: the two agree on the dates servers send, not on every token order.
"""

from __future__ import annotations

import calendar
import http.cookiejar
import http.server
import json
import os
import shutil
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import nodelay
import pytest
from whoami_server import serving

# Each value with the Unix time §5.1.1 gives it (None: not a cookie date).
SERVER_DATES = {
    "Wed, 09 Jun 2021 10:18:14 GMT": calendar.timegm((2021, 6, 9, 10, 18, 14)),
    "Thursday, 01-Jan-1970 00:00:00 GMT": 0,
    "Sunday, 06-Nov-94 08:49:37 GMT": calendar.timegm((1994, 11, 6, 8, 49, 37)),
    "Sun Nov  6 08:49:37 1994": calendar.timegm((1994, 11, 6, 8, 49, 37)),
    "Wed, 1 Jan 2031 00:00:00 GMT": calendar.timegm((2031, 1, 1, 0, 0, 0)),
    "Wed, 01 Jan 2031 1:2:3 GMT": calendar.timegm((2031, 1, 1, 1, 2, 3)),
    "Wed, 01-Jan-31 00:00:00 GMT": calendar.timegm((2031, 1, 1, 0, 0, 0)),
    "Wed, 01 Jan 2031 00:00:00 +0000": calendar.timegm((2031, 1, 1, 0, 0, 0)),
    "Wed Jan  1 00:00:00 2031": calendar.timegm((2031, 1, 1, 0, 0, 0)),
}
"""The shapes real servers send: IMF-fixdate, RFC 850 (two- and four-digit years),
asctime, one-digit day and time fields, a numeric zone."""

GRAMMAR_DATES = {
    # Parts in any order, any delimiters, case-insensitive months, tails after tokens.
    "10:18:14 2021 Jun 09": calendar.timegm((2021, 6, 9, 10, 18, 14)),
    "2021/jun/09 10:18:14": calendar.timegm((2021, 6, 9, 10, 18, 14)),
    "09-JUNE-2021 10:18:14GMT": calendar.timegm((2021, 6, 9, 10, 18, 14)),
    "09th Jun 2021AD 10:18:14": calendar.timegm((2021, 6, 9, 10, 18, 14)),
    "22:50:12 Thu Apr 18 2007 GMT": calendar.timegm((2007, 4, 18, 22, 50, 12)),
    "Junk  ,  18-apr-07   22:50:12": calendar.timegm((2007, 4, 18, 22, 50, 12)),
    "Sat, 15-Apr-17 21:01:22 GMT-0400 (EDT)": calendar.timegm((2017, 4, 15, 21, 1, 22)),
    # The first time-shaped token is the time, even out of range: no date.
    "Sat, 15-Apr-17 91:22:33 21:01:22": None,
    # A three-digit day is no day (it is read as the year 12, and no day is left).
    "Thu, 012-Aug-2008 20:49:07 GMT": None,
    # "00:" and "00:00" are no time: three fields are needed.
    "Mon, 01-Jan-2011 00: 00:00 GMT": None,
    # Two-digit years: 70-99 are 19xx, 00-69 are 20xx.
    "1 Jan 70 00:00:00": 0,
    "1 Jan 99 00:00:00": calendar.timegm((1999, 1, 1, 0, 0, 0)),
    "1 Jan 00 00:00:00": calendar.timegm((2000, 1, 1, 0, 0, 0)),
    "1 Jan 69 00:00:00": calendar.timegm((2069, 1, 1, 0, 0, 0)),
    "1 Jan 1601 00:00:00": calendar.timegm((1601, 1, 1, 0, 0, 0)),
    # Out of range, or a part missing: not a date.
    "1 Jan 1600 00:00:00": None,
    "0 Jan 2021 00:00:00": None,
    "32 Jan 2021 00:00:00": None,
    "1 Jan 2021 24:00:00": None,
    "1 Jan 2021 23:60:00": None,
    "1 Jan 2021 23:59:60": None,
    "1 Jan 2021": None,
    "Jan 2021 00:00:00": None,
    "1 2021 00:00:00": None,
    "1 Jan 20210 00:00:00": None,
    "1 Jan 2021 100:00:00": None,
    "never": None,
    "0": None,
    "": None,
}
"""Cases from the §5.1.1 grammar (delimiters, tokens, ranges)."""

TOUGH_COOKIE_DIFFERS = {
    # JavaScript's Date.UTC rolls 30 February over into March; §5.1.1 step 6 fails.
    "30 Feb 2021 00:00:00": None,
    "29 Feb 2021 00:00:00": None,
    # tough-cookie splits a time token at every ":" and wants exactly three parts;
    # §5.1.1 matches `hms-time ( non-digit *OCTET )`, and ":" is a non-digit.
    "09 Jun 2021 10:18:14:99": calendar.timegm((2021, 6, 9, 10, 18, 14)),
}
"""Where tough-cookie departs from the RFC's steps: the RFC's answer, and why."""

DEBIAN_NODE_MODULES = "/usr/share/nodejs"
"""Where Debian's ``node-*`` packages (``node-tough-cookie``) live: on Debian's own
``nodejs`` a default search path, for another build of node (NodeSource's) not."""

TOUGH_COOKIE_JS = """
const {parseDate} = require("tough-cookie");
const dates = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(dates.map((d) => {
  const t = parseDate(d);
  return t ? t.getTime() / 1000 : null;
})));
"""


class _SetCookies(http.server.BaseHTTPRequestHandler):
    """``GET /set?v=<Set-Cookie value>&v=...``: a 200 with those Set-Cookie fields."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        query = urllib.parse.urlsplit(self.path).query
        values = urllib.parse.parse_qs(query, keep_blank_values=True).get("v", [])
        self.send_response(200)
        for value in values:
            self.send_header("Set-Cookie", value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def set_cookie_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _SetCookies)
    server.daemon_threads = True
    with serving(server):
        yield f"http://127.0.0.1:{server.server_address[1]}/set"


def with_cookies(url: str, *values: str) -> str:
    return url + "?" + urllib.parse.urlencode([("v", v) for v in values])


def nodelay_expiries(url: str, dates: list[str]) -> dict[str, int | None]:
    """The expiry nodelay stores for ``c<i>=v; Expires=<dates[i]>``; a date in the past
    makes no cookie, so every date is given as the only Expires of a fresh jar's cookie
    and compared by value (a session cookie: None)."""
    out: dict[str, int | None] = {}
    with nodelay.Client() as client:
        for start in range(0, len(dates), 40):  # under the 50 Set-Cookie fields cap
            batch = dates[start : start + 40]
            client.cookies.clear()
            values = [f"c{i}=v; Path=/; Expires={d}" for i, d in enumerate(batch)]
            client.get(with_cookies(url, *values))
            stored = {c.name: c.expires for c in client.cookies.cookies()}
            for i, date in enumerate(batch):
                # Absent: an expiry in the past (the cookie was never stored).
                out[date] = stored.get(f"c{i}", -1)
    return out


def expected(date: str, table: dict[str, int | None], now: float) -> int | None:
    """What the jar shows for a date: the expiry, None for a session cookie, -1 for a
    past date (deleted at once)."""
    t = table[date]
    return -1 if t is not None and t <= now else t


def test_dates_match_the_rfc_table(set_cookie_url: str) -> None:
    import time

    table = {**SERVER_DATES, **GRAMMAR_DATES, **TOUGH_COOKIE_DIFFERS}
    now = time.time()
    got = nodelay_expiries(set_cookie_url, list(table))
    assert got == {d: expected(d, table, now) for d in table}


def test_dates_match_tough_cookie(set_cookie_url: str) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (make test-deps installs node-tough-cookie)")
    dates = [*SERVER_DATES, *GRAMMAR_DATES, *TOUGH_COOKIE_DIFFERS]
    run = subprocess.run(
        [node, "-e", TOUGH_COOKIE_JS],
        input=json.dumps(dates),
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NODE_PATH": DEBIAN_NODE_MODULES},
    )
    if "Cannot find module" in run.stderr:
        pytest.skip("tough-cookie is not installed (Debian: node-tough-cookie)")
    assert run.returncode == 0, run.stderr
    tough = dict(zip(dates, json.loads(run.stdout), strict=True))
    import time

    now = time.time()
    ours = nodelay_expiries(set_cookie_url, dates)
    for date in dates:
        if date in TOUGH_COOKIE_DIFFERS:
            assert tough[date] != TOUGH_COOKIE_DIFFERS[date], f"{date!r} no longer differs"
            continue
        theirs = tough[date]
        theirs = -1 if theirs is not None and theirs <= now else theirs
        assert ours[date] == theirs, date


HTTP_COOKIEJAR_UNREAD = {
    "one-digit minute and second fields": (
        "Wed, 01 Jan 2031 1:2:3 GMT",
        "Thu, 1 Jan 1970 0:0:0 GMT",
    ),
    "asctime with its weekday": ("Wed Jan  1 00:00:00 2031", "Thu Jan  1 00:00:00 1970"),
}
"""Shapes ``http.cookiejar.http2time`` does not read (its patterns want two-digit minutes
and seconds, and the day before the month once a weekday is dropped): it keeps such a
cookie as a session cookie, and a past one is stored instead of deleting the cookie."""

_UNREAD = {date for dates in HTTP_COOKIEJAR_UNREAD.values() for date in dates}


def test_server_dates_match_http_cookiejar(set_cookie_url: str) -> None:
    """Python's ``http.cookiejar`` (requests' jar) reads the same future expiry from the
    same response for the shapes servers send, except the ones it does not read at all."""
    import time

    now = time.time()
    future = {d: t for d, t in SERVER_DATES.items() if t is not None and t > now}
    values = [f"c{i}=v; Path=/; Expires={d}" for i, d in enumerate(future)]
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(with_cookies(set_cookie_url, *values), timeout=10):
        pass
    theirs = {c.name: c.expires for c in jar}
    with nodelay.Client() as client:
        client.get(with_cookies(set_cookie_url, *values))
        ours = {c.name: c.expires for c in client.cookies.cookies()}
    assert len(ours) == len(theirs) == len(future) == 5
    for i, (date, t) in enumerate(future.items()):
        assert ours[f"c{i}"] == t, date
        assert theirs[f"c{i}"] == (None if date in _UNREAD else t), date


@pytest.mark.parametrize(
    "past",
    [
        "Thursday, 01-Jan-1970 00:00:00 GMT",
        "Wed, 09 Jun 2021 10:18:14 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        *sorted(_UNREAD - set(SERVER_DATES)),
    ],
)
def test_a_past_expires_deletes_the_cookie_as_in_requests(set_cookie_url: str, past: str) -> None:
    import requests

    keep = "sid=1; Path=/; Expires=Wed, 1 Jan 2031 00:00:00 GMT"
    delete = f"sid=; Path=/; Expires={past}"
    with requests.Session() as s, nodelay.Client() as c:
        for client in (s, c):
            client.get(with_cookies(set_cookie_url, keep))
        assert dict(s.cookies) == dict(c.cookies) == {"sid": "1"}
        for client in (s, c):
            client.get(with_cookies(set_cookie_url, delete))
        assert dict(c.cookies) == {}
        # requests deletes it too, where http.cookiejar reads the date at all.
        assert dict(s.cookies) == ({"sid": ""} if past in _UNREAD else {})


def test_domain_with_whitespace_inside_sets_no_cookie(set_cookie_url: str) -> None:
    """§5.2.3 trims the ends of ``  .  example.org`` and drops the leading dot, leaving
    ``  example.org``, which no host domain-matches: §5.3 step 6 ignores the cookie.
    curl, given the same fields from ``www.example.org``, keeps only the cookie whose
    whitespace is at the ends; ``http.cookiejar``'s policy refuses the other one too."""
    fields = ["a=1; Domain=  .  example.org", "b=1; Domain=  .example.org  "]
    jar = nodelay.CookieJar()
    jar._jar.store("http://www.example.org/", fields)
    ours = [(c.name, c.domain, c.host_only) for c in jar.cookies()]
    assert ours == [("b", "example.org", False)]
    curl = shutil.which("curl")
    if curl is not None:
        port = urllib.parse.urlsplit(set_cookie_url).port
        url = with_cookies(f"http://www.example.org:{port}/set", *fields)
        run = subprocess.run(
            [curl, "-s", "-c", "-", "--resolve", f"www.example.org:{port}:127.0.0.1", url],
            capture_output=True,
            text=True,
            timeout=60,
        )
        lines = [line.split("\t") for line in run.stdout.splitlines() if "\t" in line]
        assert [(f[5], f[0].lstrip("."), f[1] == "FALSE") for f in lines] == ours
    with nodelay.Client() as client:
        client.get(with_cookies(set_cookie_url, "a=1; Domain=  .  127.0.0.1"))
        assert client.cookies.cookies() == []


def test_cookies_txt_from_mozilla_cookie_jar(tmp_path: Path) -> None:
    """A file written by ``http.cookiejar.MozillaCookieJar`` itself: its session cookies
    have an empty expiry field, and load as session cookies."""
    path = tmp_path / "cookies.txt"
    writer = http.cookiejar.MozillaCookieJar(str(path))

    def cookie(name: str, expires: int | None) -> http.cookiejar.Cookie:
        return http.cookiejar.Cookie(
            0, name, "v", None, False, "example.org", False, False, "/", True, False,
            expires, expires is None, None, None, {},
        )  # fmt: skip

    writer.set_cookie(cookie("session", None))
    writer.set_cookie(cookie("kept", 1_924_992_000))
    writer.save(ignore_discard=True)
    assert "\t\tsession\tv" in path.read_text()  # the empty expiry field
    jar = nodelay.CookieJar.load(path)
    assert sorted((c.name, c.expires) for c in jar.cookies()) == [
        ("kept", 1_924_992_000),
        ("session", None),
    ]
    assert jar.header_for("http://example.org/") in ("session=v; kept=v", "kept=v; session=v")
