"""``RequestsCookieJar``: requests' dict-like jar over nodelay's ``CookieJar``.

The jar is nodelay's (RFC 6265 matching in the engine), so a session's jar is the very jar
its connections store Set-Cookie into and read Cookie headers from; this class adds
requests' extra methods (``get_dict``, ``list_domains``, ``set(..., value=None)``...).
"""

from __future__ import annotations

import http.cookiejar
from collections.abc import Iterator, Mapping
from typing import Any

from .. import Cookie, CookieJar

__all__ = [
    "CookieConflictError",
    "RequestsCookieJar",
    "cookiejar_from_dict",
    "create_cookie",
    "extract_cookies_to_jar",
    "get_cookie_header",
    "merge_cookies",
    "morsel_to_cookie",
    "remove_cookie_by_name",
]


class CookieConflictError(RuntimeError):
    """More than one cookie matches a name (requests' jar raises it for ``jar[name]``;
    nodelay's returns the first match instead, so this is never raised)."""


def _domain_arg(domain: str | None) -> str:
    # requests writes cookie domains with or without the leading dot; nodelay stores none.
    return (domain or "").lstrip(".")


class RequestsCookieJar(CookieJar):
    """A cookie jar with requests' dict interface (``jar["name"]``, ``get_dict()``...)."""

    __slots__ = ()

    def set(
        self,
        name: str,
        value: str | None,
        domain: str | None = "",
        path: str | None = "/",
        **kwargs: Any,
    ) -> None:
        """Store a cookie (``value=None`` removes it, as in requests). ``secure``,
        ``expires`` (a Unix time) and ``rest={"HttpOnly": ...}`` are honoured."""
        if value is None:
            self.delete(name, _domain_arg(domain) or None, path or None)
            return
        rest = kwargs.get("rest") or {}
        expires = kwargs.get("expires")
        super().set(
            name,
            value,
            _domain_arg(domain),
            path or "/",
            secure=bool(kwargs.get("secure", False)),
            http_only="HttpOnly" in rest or "httponly" in rest,
            expires=None if expires is None else int(expires),
        )

    def set_cookie(self, cookie: http.cookiejar.Cookie | Cookie, *args: Any, **kwargs: Any) -> None:
        """Store an ``http.cookiejar.Cookie`` (e.g. from ``create_cookie``) or a nodelay
        ``Cookie``."""
        if isinstance(cookie, Cookie):
            super().set(
                cookie.name,
                cookie.value,
                cookie.domain,
                cookie.path,
                secure=cookie.secure,
                http_only=cookie.http_only,
                expires=cookie.expires,
                host_only=cookie.host_only,
            )
            return
        self.set(
            cookie.name,
            cookie.value or "",
            cookie.domain,
            cookie.path,
            secure=cookie.secure,
            expires=cookie.expires,
        )

    def get_dict(self, domain: str | None = None, path: str | None = None) -> dict[str, str]:
        """Name → value of the cookies matching ``domain`` and ``path`` (all by default)."""
        want = None if domain is None else _domain_arg(domain)
        return {
            c.name: c.value
            for c in self.cookies()
            if (want is None or c.domain == want) and (path is None or c.path == path)
        }

    def list_domains(self) -> list[str]:
        """The domains in the jar, each once, in storage order."""
        return list(dict.fromkeys(c.domain for c in self.cookies()))

    def list_paths(self) -> list[str]:
        """The paths in the jar, each once, in storage order."""
        return list(dict.fromkeys(c.path for c in self.cookies()))

    def multiple_domains(self) -> bool:
        """Whether the jar holds cookies for more than one domain."""
        return len(self.list_domains()) > 1

    def __iter__(self) -> Iterator[Cookie]:  # type: ignore[override]
        """Every cookie with its attributes (``.name``, ``.value``, ``.domain``...), as
        iterating requests' ``http.cookiejar``-based jar does; ``keys()`` gives names."""
        return iter(self.cookies())

    def iterkeys(self) -> list[str]:
        return [c.name for c in self.cookies()]

    def itervalues(self) -> list[str]:
        return [c.value for c in self.cookies()]

    def iteritems(self) -> list[tuple[str, str]]:
        return [(c.name, c.value) for c in self.cookies()]

    def keys(self) -> list[str]:  # type: ignore[override]
        """Every cookie's name (several cookies may share one), as in requests."""
        return self.iterkeys()

    def values(self) -> list[str]:  # type: ignore[override]
        return self.itervalues()

    def items(self) -> list[tuple[str, str]]:  # type: ignore[override]
        return self.iteritems()

    def copy(self) -> RequestsCookieJar:
        return RequestsCookieJar(self)

    def get_policy(self) -> None:
        """requests returns the cookielib policy; nodelay's jar follows RFC 6265 only."""
        return None

    def __repr__(self) -> str:
        return f"<RequestsCookieJar{self.cookies()!r}>"


def create_cookie(name: str, value: str, **kwargs: Any) -> http.cookiejar.Cookie:
    """An ``http.cookiejar.Cookie`` with requests' defaults (for ``jar.set_cookie``)."""
    result: dict[str, Any] = {
        "version": 0,
        "name": name,
        "value": value,
        "port": None,
        "domain": "",
        "path": "/",
        "secure": False,
        "expires": None,
        "discard": True,
        "comment": None,
        "comment_url": None,
        "rest": {"HttpOnly": None},
        "rfc2109": False,
    }
    badargs = set(kwargs) - set(result)
    if badargs:
        raise TypeError(f"create_cookie() got unexpected keyword arguments: {list(badargs)}")
    result.update(kwargs)
    result["port_specified"] = bool(result["port"])
    result["domain_specified"] = bool(result["domain"])
    result["domain_initial_dot"] = result["domain"].startswith(".")
    result["path_specified"] = bool(result["path"])
    return http.cookiejar.Cookie(**result)


def cookiejar_from_dict(
    cookie_dict: Mapping[str, str] | None,
    cookiejar: CookieJar | None = None,
    overwrite: bool = True,
) -> CookieJar:
    """A jar (``cookiejar``, or a new ``RequestsCookieJar``) with the cookies of a dict."""
    if cookiejar is None:
        cookiejar = RequestsCookieJar()
    if cookie_dict is not None:
        names = set(cookiejar.keys())
        for name, value in cookie_dict.items():
            if overwrite or name not in names:
                cookiejar.set(name, value)
    return cookiejar


def merge_cookies(cookiejar: CookieJar, cookies: Mapping[str, str] | CookieJar | None) -> CookieJar:
    """``cookiejar`` with ``cookies`` (a dict or another jar) added to it."""
    if not isinstance(cookiejar, CookieJar):
        raise ValueError("You can only merge into CookieJar")
    if isinstance(cookies, CookieJar):
        cookiejar.update(cookies)
    elif cookies is not None:
        cookiejar_from_dict(cookies, cookiejar=cookiejar, overwrite=False)
    return cookiejar


def get_cookie_header(jar: CookieJar, request: Any) -> str | None:
    """The ``Cookie`` header ``jar`` gives ``request``'s URL (``None`` for no cookie)."""
    return jar.header_for(request.url or "")


def remove_cookie_by_name(
    cookiejar: CookieJar, name: str, domain: str | None = None, path: str | None = None
) -> None:
    """Remove the cookies called ``name`` (narrowed by ``domain``/``path``)."""
    cookiejar.delete(name, _domain_arg(domain) or None, path)


def extract_cookies_to_jar(jar: CookieJar, request: Any, response: Any) -> None:
    """Store the Set-Cookie fields of ``response`` (a ``Response.raw``) into ``jar`` for
    ``request``'s URL. The session does this itself (the engine stores every response's
    cookies into the session jar); this is for jars of the program's own."""
    nd = getattr(response, "_response", None)
    if nd is None:
        return
    values = [v for k, v in nd.headers.multi_items() if k.lower() == "set-cookie"]
    if values and jar._jar.store(request.url or "", values):
        jar._changed()


def morsel_to_cookie(morsel: Any) -> http.cookiejar.Cookie:
    """An ``http.cookies.Morsel`` as a cookie for ``jar.set_cookie``."""
    import calendar
    import time

    expires = None
    if morsel["max-age"]:
        try:
            expires = int(time.time() + int(morsel["max-age"]))
        except ValueError as exc:
            raise TypeError(f"max-age: {morsel['max-age']} must be integer") from exc
    elif morsel["expires"]:
        expires = calendar.timegm(time.strptime(morsel["expires"], "%a, %d-%b-%Y %H:%M:%S GMT"))
    return create_cookie(
        comment=morsel["comment"],
        comment_url=bool(morsel["comment"]),
        discard=False,
        domain=morsel["domain"],
        expires=expires,
        name=morsel.key,
        path=morsel["path"],
        port=None,
        rest={"HttpOnly": morsel["httponly"]},
        rfc2109=False,
        secure=bool(morsel["secure"]),
        value=morsel.value,
        version=morsel["version"] or 0,
    )
