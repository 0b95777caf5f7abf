"""requests' authentication classes: callables that change a ``PreparedRequest``.

``HTTPBasicAuth`` and custom ``AuthBase`` subclasses run in Python on the prepared request,
as in requests. ``HTTPDigestAuth`` needs the server's 401 challenge: its exchange is
nodelay's ``DigestAuth`` flow, which the adapter runs (the 401 is answered inside the send,
so it is not in ``history``, as in requests where the hook resends it).
"""

from __future__ import annotations

from base64 import b64encode
from typing import TYPE_CHECKING

from .._auth import DigestAuth

if TYPE_CHECKING:
    from .models import PreparedRequest

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

    Calling it on a prepared request changes nothing: the challenge-response runs when the
    request is sent (nodelay's ``DigestAuth``; MD5, SHA-256, SHA-512-256, ``qop=auth``).
    """

    def __init__(self, username: str | bytes, password: str | bytes) -> None:
        self.username = username
        self.password = password
        self._flow = DigestAuth(username, password)

    def __eq__(self, other: object) -> bool:
        return (self.username, self.password) == (
            getattr(other, "username", None),
            getattr(other, "password", None),
        )

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def __call__(self, r: PreparedRequest) -> PreparedRequest:
        r._digest = self._flow
        return r
