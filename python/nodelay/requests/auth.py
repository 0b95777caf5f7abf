"""requests' authentication classes: callables that change a ``PreparedRequest``
(``HTTPDigestAuth`` also adds response hooks that answer the server's challenge)."""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from base64 import b64encode
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse
from urllib.request import parse_http_list

if TYPE_CHECKING:
    from .models import PreparedRequest, Response

__all__ = ["AuthBase", "HTTPBasicAuth", "HTTPDigestAuth", "HTTPProxyAuth"]


def _to_bytes(value: str | bytes) -> bytes:
    return value.encode("latin1") if isinstance(value, str) else value


def _basic_auth_str(username: str | bytes, password: str | bytes) -> str:
    """The value of a Basic ``Authorization`` header."""
    token = b64encode(b":".join((_to_bytes(username), _to_bytes(password)))).strip()
    return "Basic " + token.decode("ascii")


class AuthBase:
    """Base class that all auth implementations derive from."""

    def __call__(self, r: PreparedRequest) -> PreparedRequest:
        raise NotImplementedError("Auth hooks must be callable.")


class HTTPBasicAuth(AuthBase):
    """Attaches HTTP Basic Authentication to the given Request object."""

    def __init__(self, username: str | bytes, password: str | bytes) -> None:
        self.username = username
        self.password = password

    def __eq__(self, other: object) -> bool:
        return (self.username, self.password) == (
            getattr(other, "username", None),
            getattr(other, "password", None),
        )

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def __call__(self, r: PreparedRequest) -> PreparedRequest:
        r.headers["Authorization"] = _basic_auth_str(self.username, self.password)
        return r


class HTTPProxyAuth(HTTPBasicAuth):
    """Attaches HTTP Proxy Authentication to a given Request object."""

    def __call__(self, r: PreparedRequest) -> PreparedRequest:
        r.headers["Proxy-Authorization"] = _basic_auth_str(self.username, self.password)
        return r


class HTTPDigestAuth(AuthBase):
    """Attaches HTTP Digest Authentication to the given Request object.

    As in requests: a response hook answers the server's 401 challenge by resending the
    request with an ``Authorization`` header (the 401 is then in ``history``); the nonce
    count is per thread. Algorithms MD5, MD5-sess, SHA, SHA-256, SHA-512; ``qop=auth``.
    """

    def __init__(self, username: str | bytes, password: str | bytes) -> None:
        self.username = username
        self.password = password
        self._thread_local = threading.local()

    def init_per_thread_state(self) -> None:
        if not hasattr(self._thread_local, "init"):
            self._thread_local.init = True
            self._thread_local.last_nonce = ""
            self._thread_local.nonce_count = 0
            self._thread_local.chal = {}
            self._thread_local.pos = None
            self._thread_local.num_401_calls = None

    def build_digest_header(self, method: str, url: str) -> str | None:
        """The ``Authorization`` value for the last challenge (``None`` if unsupported)."""
        chal: dict[str, str] = self._thread_local.chal
        realm = chal["realm"]
        nonce = chal["nonce"]
        qop = chal.get("qop")
        algorithm = chal.get("algorithm")
        opaque = chal.get("opaque")
        _algorithm = "MD5" if algorithm is None else algorithm.upper()
        hash_name = _DIGEST_HASHES.get(_algorithm)
        if hash_name is None:
            return None

        def hash_utf8(x: str) -> str:
            return hashlib.new(hash_name, x.encode("utf-8"), usedforsecurity=False).hexdigest()

        parsed = urlparse(url)
        path = (parsed.path or "/") + (f"?{parsed.query}" if parsed.query else "")
        user = _to_str(self.username)
        ha1 = hash_utf8(f"{user}:{realm}:{_to_str(self.password)}")
        ha2 = hash_utf8(f"{method}:{path}")
        if nonce == self._thread_local.last_nonce:
            self._thread_local.nonce_count += 1
        else:
            self._thread_local.nonce_count = 1
        ncvalue = f"{self._thread_local.nonce_count:08x}"
        seed = f"{self._thread_local.nonce_count}{nonce}{time.ctime()}".encode() + os.urandom(8)
        cnonce = hashlib.sha1(seed, usedforsecurity=False).hexdigest()[:16]
        if _algorithm == "MD5-SESS":
            ha1 = hash_utf8(f"{ha1}:{nonce}:{cnonce}")
        if not qop:
            respdig = hash_utf8(f"{ha1}:{nonce}:{ha2}")
        elif qop == "auth" or "auth" in qop.split(","):
            respdig = hash_utf8(f"{ha1}:{nonce}:{ncvalue}:{cnonce}:auth:{ha2}")
        else:
            return None
        self._thread_local.last_nonce = nonce
        base = (
            f'username="{user}", realm="{realm}", nonce="{nonce}", '
            f'uri="{path}", response="{respdig}"'
        )
        if opaque:
            base += f', opaque="{opaque}"'
        if algorithm:
            base += f', algorithm="{algorithm}"'
        if qop:
            base += f', qop="auth", nc={ncvalue}, cnonce="{cnonce}"'
        return f"Digest {base}"

    def handle_redirect(self, r: Response, **kwargs: Any) -> None:
        """Reset the 401 counter on redirects."""
        if r.is_redirect:
            self._thread_local.num_401_calls = 1

    def handle_401(self, r: Response, **kwargs: Any) -> Response:
        """Answer a Digest challenge once: resend with credentials through the same
        adapter; the 401 goes into the new response's ``history``."""
        if not 400 <= r.status_code < 500:
            self._thread_local.num_401_calls = 1
            return r
        if self._thread_local.pos is not None:
            seek = getattr(r.request.body, "seek", None)
            if seek is not None:
                seek(self._thread_local.pos)
        s_auth = r.headers.get("www-authenticate", "")
        if "digest" in s_auth.lower() and self._thread_local.num_401_calls < 2:
            self._thread_local.num_401_calls += 1
            pat = re.compile(r"digest ", flags=re.IGNORECASE)
            self._thread_local.chal = parse_dict_header(pat.sub("", s_auth, count=1))
            r.content  # noqa: B018 - read the 401 so its connection is reused
            r.close()
            prep = r.request.copy()
            if prep._cookies is not None:
                prep.prepare_cookies(prep._cookies)
            header = self.build_digest_header(prep.method or "GET", prep.url or "")
            if header:
                prep.headers["Authorization"] = header
            assert r.connection is not None
            _r = r.connection.send(prep, **kwargs)
            _r.history.append(r)
            _r.request = prep
            return _r
        self._thread_local.num_401_calls = 1
        return r

    def __call__(self, r: PreparedRequest) -> PreparedRequest:
        self.init_per_thread_state()
        if self._thread_local.last_nonce:
            header = self.build_digest_header(r.method or "GET", r.url or "")
            if header:
                r.headers["Authorization"] = header
        tell = getattr(r.body, "tell", None)
        self._thread_local.pos = tell() if tell is not None else None
        r.register_hook("response", self.handle_401)
        r.register_hook("response", self.handle_redirect)
        self._thread_local.num_401_calls = 1
        return r

    def __eq__(self, other: object) -> bool:
        return (self.username, self.password) == (
            getattr(other, "username", None),
            getattr(other, "password", None),
        )

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]


_DIGEST_HASHES = {
    "MD5": "md5",
    "MD5-SESS": "md5",
    "SHA": "sha1",
    "SHA-256": "sha256",
    "SHA-512": "sha512",
}
"""Digest ``algorithm`` values requests supports → hashlib names."""


def _to_str(value: str | bytes) -> str:
    return value.decode("latin1") if isinstance(value, bytes) else value


def parse_dict_header(value: str) -> dict[str, str | None]:
    """``a="b", c=d`` (RFC 2068 list of key=value, quotes removed) as a dict."""
    result: dict[str, str | None] = {}
    for item in parse_http_list(value):
        if "=" not in item:
            result[item] = None
            continue
        name, value = item.split("=", 1)
        if value[:1] == value[-1:] == '"':
            value = value[1:-1].replace("\\\\", "\\").replace('\\"', '"')
        result[name] = value
    return result
