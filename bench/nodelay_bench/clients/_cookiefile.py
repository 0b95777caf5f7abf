"""Netscape cookies.txt files for the peers built on ``http.cookiejar`` (requests, httpx).

``MozillaCookieJar`` writes and reads the format curl's ``-b``/``-c`` use. Session cookies
(no expiry) are kept both ways (``ignore_discard``): workload h's login cookie is one.
"""

from __future__ import annotations

from collections.abc import Iterable
from http.cookiejar import Cookie, MozillaCookieJar

__all__ = ["load_cookie_file", "save_cookie_file"]


def save_cookie_file(cookies: Iterable[Cookie], path: str) -> None:
    jar = MozillaCookieJar()
    for cookie in cookies:
        jar.set_cookie(cookie)
    jar.save(path, ignore_discard=True, ignore_expires=True)


def load_cookie_file(path: str) -> MozillaCookieJar:
    jar = MozillaCookieJar()
    jar.load(path, ignore_discard=True, ignore_expires=True)
    return jar
