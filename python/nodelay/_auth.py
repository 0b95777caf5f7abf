"""Authentication: ``BasicAuth``, ``DigestAuth``, ``BearerAuth``, ``NetRCAuth`` and function
auth. As in httpx, ``.netrc`` credentials are sent only with ``auth=NetRCAuth()``
(``nodelay.requests`` reads ``.netrc`` by itself, as requests does).

An auth is an ``Auth`` whose ``auth_flow(request)`` generator yields the request to send,
receives each response, and may yield a new request (Digest's 401 challenge → retry), as in
httpx. ``auth=`` also takes a ``(username, password)`` tuple (Basic) or a plain callable
``f(request) -> request``.

As in httpx, ``Client`` runs ``sync_auth_flow`` and ``AsyncClient`` ``async_auth_flow``;
both default to ``auth_flow`` with the request body read first when
``requires_request_body`` and each response body read before it is sent in when
``requires_response_body``. An auth that overrides only the other client's method raises
``TypeError`` rather than sending the request without credentials (``_flow._auth_flow_of``).

Auth applies to the request's own origin only: the client adds it once, before the first
exchange; a redirect that stays on the origin keeps the ``Authorization`` header, one that
leaves it drops the header for good and auth is never applied again (docs/hostile.md E22).
"""

from __future__ import annotations

import os

from ._models import Request

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Callable, Generator
    from typing import TypeAlias

    from ._models import Response

    AuthTypes: TypeAlias = "tuple[str | bytes, str | bytes] | Auth | Callable[[Request], Request]"

__all__ = [
    "Auth",
    "AuthTypes",
    "BasicAuth",
    "BearerAuth",
    "DigestAuth",
    "FunctionAuth",
    "NetRCAuth",
]


def _to_bytes(value: str | bytes) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


class Auth:
    """Base class of every auth. Subclasses override ``auth_flow``.

    ``auth_flow(request)`` is a generator: it yields a request to send (usually the one
    it was given, with an ``Authorization`` header), receives the response through
    ``send()``, and may yield another request, for challenge-response schemes.

    ``requires_request_body`` / ``requires_response_body``: the flow needs the request's
    body, or each response's body read before it is sent in (``Client`` runs
    ``sync_auth_flow``, ``AsyncClient`` ``async_auth_flow``, which read them). An auth
    that does I/O of its own overrides those two methods instead of ``auth_flow``.
    """

    requires_request_body = False
    requires_response_body = False

    def auth_flow(self, request: Request) -> Generator[Request, Response, None]:
        yield request

    def sync_auth_flow(self, request: Request) -> Generator[Request, Response, None]:
        """``auth_flow`` for ``Client``, with the bodies read that it asks for."""
        if self.requires_request_body:
            request.read()
        flow = self.auth_flow(request)
        request = next(flow)
        while True:
            response = yield request
            if self.requires_response_body:
                response.read()
            try:
                request = flow.send(response)
            except StopIteration:
                break

    async def async_auth_flow(self, request: Request) -> AsyncGenerator[Request, Response]:
        """``auth_flow`` for ``AsyncClient``, with the bodies read that it asks for."""
        if self.requires_request_body:
            await request.aread()
        flow = self.auth_flow(request)
        request = next(flow)
        while True:
            response = yield request
            if self.requires_response_body:
                await response.aread()
            try:
                request = flow.send(response)
            except StopIteration:
                break


class FunctionAuth(Auth):
    """Auth by a callable ``f(request) -> request`` (httpx's function auth)."""

    __slots__ = ("_func",)

    def __init__(self, func: Callable[[Request], Request]) -> None:
        self._func = func

    def auth_flow(self, request: Request) -> Generator[Request, Response, None]:
        yield self._func(request)


class BasicAuth(Auth):
    """HTTP Basic (RFC 7617): ``Authorization: Basic base64(user:password)``, UTF-8."""

    __slots__ = ("_header",)

    def __init__(self, username: str | bytes, password: str | bytes) -> None:
        from base64 import b64encode

        token = b64encode(_to_bytes(username) + b":" + _to_bytes(password)).decode("ascii")
        self._header = f"Basic {token}"

    def auth_flow(self, request: Request) -> Generator[Request, Response, None]:
        request.headers["Authorization"] = self._header
        yield request

    def __repr__(self) -> str:
        return "BasicAuth(...)"


class BearerAuth(Auth):
    """``Authorization: Bearer <token>`` (RFC 6750)."""

    __slots__ = ("_header",)

    def __init__(self, token: str) -> None:
        self._header = f"Bearer {token}"

    def auth_flow(self, request: Request) -> Generator[Request, Response, None]:
        request.headers["Authorization"] = self._header
        yield request

    def __repr__(self) -> str:
        return "BearerAuth(...)"


class NetRCAuth(Auth):
    """Basic credentials of the request's host from a ``.netrc`` file (httpx's
    ``NetRCAuth``): ``file`` or, when None, what the stdlib ``netrc`` reads
    (``~/.netrc``). The file is parsed once, here; a missing file raises
    ``FileNotFoundError`` and a malformed one ``netrc.NetrcParseError``. A host without an
    entry (and no ``default``), or an entry without a password, gets no header."""

    __slots__ = ("_netrc_info",)

    def __init__(self, file: str | None = None) -> None:
        import netrc

        self._netrc_info = netrc.netrc(file)

    def auth_flow(self, request: Request) -> Generator[Request, Response, None]:
        from urllib.parse import urlsplit

        found = self._netrc_info.authenticators(urlsplit(request.url).hostname or "")
        if found is not None and found[2]:
            request.headers["Authorization"] = BasicAuth(found[0], found[2])._header
        yield request

    def __repr__(self) -> str:
        return "NetRCAuth(...)"


# -- Digest (RFC 7616) --------------------------------------------------------------------

# Hashes by algorithm token, strongest first (the order used to pick among challenges).
_DIGEST_HASHES = {"SHA-512-256": "sha512_256", "SHA-256": "sha256", "MD5": "md5"}


def _parse_params(text: str) -> tuple[dict[str, str], str]:
    """``key=value`` / ``key="quoted"`` pairs at the start of ``text``; returns them and
    the rest (starting at the next challenge's scheme, if any)."""
    import re

    param = re.compile(
        r'\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^,\s]*)\s*(,|$)'
    )
    params: dict[str, str] = {}
    pos = 0
    while True:
        m = param.match(text, pos)
        if m is None:
            return params, text[pos:]
        value = m.group(2)
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        params[m.group(1).lower()] = value
        pos = m.end()


def _digest_challenges(values: list[str]) -> list[dict[str, str]]:
    """Every Digest challenge in the WWW-Authenticate values (several challenges may share
    one field, RFC 9110 §11.6.1)."""
    import re

    scheme = re.compile(r"\s*,?\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?:\s+|$)")
    out = []
    for value in values:
        rest = value
        while rest.strip():
            m = scheme.match(rest)
            if m is None:
                break
            params, rest = _parse_params(rest[m.end() :])
            if m.group(1).lower() == "digest" and "nonce" in params:
                out.append(params)
    return out


class DigestAuth(Auth):
    """HTTP Digest (RFC 7616): MD5, SHA-256 and SHA-512-256, their ``-sess`` variants,
    ``qop=auth`` (and ``auth-int`` when the server offers only that), nonce counting.

    The first request goes without credentials; on a 401 with a Digest challenge it is
    sent again with them. Later requests reuse the challenge (next nonce count) and only
    get a second round trip when the server sends a new challenge. Thread-safe.
    """

    def __init__(self, username: str | bytes, password: str | bytes) -> None:
        self._username = _to_bytes(username)
        self._password = _to_bytes(password)
        import threading  # lazily: not needed by ``import nodelay``

        self._lock = threading.Lock()
        self._challenge: dict[str, str] | None = None
        self._nonce_count = 0

    def __repr__(self) -> str:
        return "DigestAuth(...)"

    def auth_flow(self, request: Request) -> Generator[Request, Response, None]:
        with self._lock:
            challenge = self._challenge
        if challenge is not None:
            request.headers["Authorization"] = self._authorization(request, challenge)
        response = yield request
        if response.status_code != 401:
            return
        challenges = _digest_challenges(response.headers.get_list("www-authenticate"))
        supported = [c for c in challenges if self._algorithm(c) is not None]
        if not supported:
            return
        # Strongest algorithm first (RFC 7616 §3.7: the client picks).
        order = list(_DIGEST_HASHES)
        supported.sort(key=lambda c: order.index(self._algorithm(c) or "MD5"))
        with self._lock:
            self._challenge = supported[0]
            self._nonce_count = 0
        request.headers["Authorization"] = self._authorization(request, supported[0])
        yield request

    @staticmethod
    def _algorithm(challenge: dict[str, str]) -> str | None:
        """The base algorithm name if supported (``-sess`` stripped), else None."""
        algorithm = challenge.get("algorithm", "MD5").upper()
        if algorithm.endswith("-SESS"):
            algorithm = algorithm[:-5]
        return algorithm if algorithm in _DIGEST_HASHES else None

    def _authorization(self, request: Request, challenge: dict[str, str]) -> str:
        import hashlib
        from urllib.parse import urlsplit

        algorithm_token = challenge.get("algorithm", "MD5")
        base = self._algorithm(challenge) or "MD5"
        hash_name = _DIGEST_HASHES[base]

        def h(data: bytes) -> str:
            return hashlib.new(hash_name, data).hexdigest()

        realm = challenge.get("realm", "").encode("utf-8")
        nonce = challenge["nonce"].encode("utf-8")
        with self._lock:
            self._nonce_count += 1
            nc = f"{self._nonce_count:08x}"
        cnonce = os.urandom(16).hex()
        parts = urlsplit(request.url)
        uri = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")

        ha1 = h(self._username + b":" + realm + b":" + self._password)
        if algorithm_token.upper().endswith("-SESS"):
            ha1 = h(f"{ha1}:".encode() + nonce + f":{cnonce}".encode())
        offered = [q.strip().lower() for q in challenge.get("qop", "").split(",") if q.strip()]
        qop = "auth" if "auth" in offered else ("auth-int" if "auth-int" in offered else None)
        a2 = f"{request.method}:{uri}".encode()
        if qop == "auth-int":
            a2 += b":" + h(request.content).encode()
        ha2 = h(a2)
        if qop is None:  # RFC 2069 compatibility
            response = h(f"{ha1}:".encode() + nonce + f":{ha2}".encode())
        else:
            response = h(f"{ha1}:".encode() + nonce + f":{nc}:{cnonce}:{qop}:{ha2}".encode())

        username = self._username.decode("utf-8", errors="replace")
        if challenge.get("userhash", "").lower() == "true":
            username = h(self._username + b":" + realm)

        def quote(s: str) -> str:
            return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

        fields = [
            f"username={quote(username)}",
            f"realm={quote(challenge.get('realm', ''))}",
            f"nonce={quote(challenge['nonce'])}",
            f"uri={quote(uri)}",
            f"algorithm={algorithm_token}",
            f"response={quote(response)}",
        ]
        if "opaque" in challenge:
            fields.append(f"opaque={quote(challenge['opaque'])}")
        if qop is not None:
            fields += [f"qop={qop}", f"nc={nc}", f"cnonce={quote(cnonce)}"]
        if challenge.get("userhash", "").lower() == "true":
            fields.append("userhash=true")
        return "Digest " + ", ".join(fields)


# -- building ------------------------------------------------------------------------


def build_auth(auth: AuthTypes | None) -> Auth | None:
    """The ``Auth`` for an ``auth=`` argument."""
    if auth is None or isinstance(auth, Auth):
        return auth
    if isinstance(auth, tuple):
        if len(auth) != 2:
            raise TypeError("auth tuple must be (username, password)")
        return BasicAuth(auth[0], auth[1])
    if callable(auth):
        return FunctionAuth(auth)
    raise TypeError(
        "auth must be a (username, password) tuple, an Auth instance or a callable, "
        f"not {type(auth).__name__}"
    )
