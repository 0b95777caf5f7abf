"""``CookieJar``: an RFC 6265 cookie jar (the Rust ``_core.CookieJar``) with dict-like access.

The jar follows the browser rules: domain and path matching, host-only cookies, expiry
(``Max-Age`` over ``Expires``; a date in the past deletes), ``Secure`` cookies only over
https, ``Domain`` attributes that are a public suffix (``com``, ``co.uk``) or another site
ignored, and caps (``MAX_COOKIES_PER_RESPONSE`` Set-Cookie fields looked at per response,
``MAX_COOKIES_PER_JAR`` cookies kept). It is thread-safe and may be shared by several
clients. ``save()`` / ``CookieJar.load()`` use the Netscape ``cookies.txt`` format that
curl (``-b``/``-c``), wget and LWP read and write.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, MutableMapping

from . import _core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NamedTuple, TypeAlias

    from ._models import _RawLike

    CookieTypes: TypeAlias = "CookieJar | Mapping[str, str]"
    StrPath: TypeAlias = "str | os.PathLike[str]"

__all__ = ["Cookie", "CookieJar", "CookieTypes"]

MAX_COOKIES_PER_RESPONSE: int = _core.CookieJar.MAX_COOKIES_PER_RESPONSE
MAX_COOKIES_PER_JAR: int = _core.CookieJar.MAX_COOKIES_PER_JAR


_OS_ERROR_CODE = re.compile(r"\(os error (\d+)\)$")
"""The errno at the end of the engine's I/O error messages ("... (os error 2)")."""


def _with_path(operation: Callable[[str], object], path: str) -> None:
    """Run ``operation(path)``; an ``OSError`` from the engine is raised again as Python's
    own are, naming the file: ``[Errno 2] No such file or directory: 'cookies.txt'``."""
    try:
        operation(path)
    except OSError as exc:
        if exc.filename is not None:
            raise
        found = _OS_ERROR_CODE.search(str(exc))
        if found is None:
            raise type(exc)(f"{exc}: {path!r}") from exc
        code = int(found.group(1))
        raise type(exc)(code, os.strerror(code), path) from exc


_COOKIE_DOC = """One stored cookie. ``domain`` has no leading dot and is ``""`` for a cookie sent
to every host; ``host_only`` means "this host, not its subdomains"; ``expires`` is a Unix
time, or ``None`` for a session cookie."""

if TYPE_CHECKING:

    class Cookie(NamedTuple):
        name: str
        value: str
        domain: str
        host_only: bool
        path: str
        secure: bool
        http_only: bool
        expires: int | None

else:  # collections.namedtuple: importing typing would slow ``import nodelay`` down
    from collections import namedtuple

    Cookie = namedtuple(
        "Cookie", "name value domain host_only path secure http_only expires", module=__name__
    )
    Cookie.__doc__ = _COOKIE_DOC


class CookieJar(MutableMapping[str, str]):
    """Cookies by name, like ``requests``' jar and ``httpx.Cookies``.

    ``jar["name"]`` / ``jar.get(name, default, domain=, path=)`` read the first cookie of
    that name (use ``domain``/``path`` to choose among several); ``jar["name"] = "v"`` and
    ``jar.set(name, value, domain="", path="/")`` store one (without a domain it is sent to
    every host, as in requests and httpx); ``del jar["name"]``, ``jar.delete()``,
    ``jar.clear(domain=None)``; ``len(jar)``; iterating yields names; ``jar.cookies()``
    lists ``Cookie`` tuples with every attribute.

    ``autosave=path`` loads ``path`` if it exists, then writes the jar back to it after
    each change: after each call that changes it, and at most once per response that sets
    cookies (the write is atomic: a temporary file renamed over the old one).
    """

    __slots__ = ("_autosave", "_jar")

    _jar: _core.CookieJar
    _autosave: str | None

    MAX_COOKIES_PER_RESPONSE = MAX_COOKIES_PER_RESPONSE
    MAX_COOKIES_PER_JAR = MAX_COOKIES_PER_JAR

    def __init__(
        self, cookies: CookieTypes | None = None, *, autosave: StrPath | None = None
    ) -> None:
        self._jar = _core.CookieJar()
        self._autosave = None
        if cookies:
            if isinstance(cookies, CookieJar):
                self._jar.load_netscape(cookies._jar.to_netscape())
                for c in cookies.cookies():
                    if not c.domain:  # not in cookies.txt: copy by hand
                        self._jar.set(c.name, c.value, "", c.path, secure=c.secure)
            else:
                for name, value in cookies.items():
                    self._jar.set(name, value)
        if autosave is not None:
            self._autosave = os.fspath(autosave)
            if os.path.exists(self._autosave):
                _with_path(self._jar.load, self._autosave)
            if cookies:
                self._changed()

    # -- reading ----------------------------------------------------------------------------

    def get(  # type: ignore[override]
        self,
        name: str,
        default: str | None = None,
        domain: str | None = None,
        path: str | None = None,
    ) -> str | None:
        """The value of the cookie called ``name`` (``domain``/``path`` narrow the
        search; a leading dot in ``domain`` is ignored), or ``default``; raises
        ``CookieConflict`` when more than one cookie matches (httpx's rule)."""
        found = self._jar.get_all(name, domain, path)
        if len(found) > 1:
            raise _conflict(name)
        return found[0][1] if found else default

    def __getitem__(self, name: str) -> str:
        found = self._jar.get_all(name)
        if not found:
            raise KeyError(name)
        if len(found) > 1:
            raise _conflict(name)
        return found[0][1]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(self._jar.get_all(name))

    def __iter__(self) -> Iterator[str]:
        seen: set[str] = set()
        for item in self._jar.items():
            if item[0] not in seen:
                seen.add(item[0])
                yield item[0]

    def __len__(self) -> int:
        return len(self._jar)

    def __bool__(self) -> bool:
        return len(self._jar) > 0

    def cookies(self) -> list[Cookie]:
        """Every cookie with its attributes."""
        return [Cookie(*item) for item in self._jar.items()]

    def header_for(self, url: str) -> str | None:
        """The ``Cookie`` header a request to ``url`` would carry, or ``None``."""
        return self._jar.header_for(url)

    # -- writing ----------------------------------------------------------------------------

    def set(
        self,
        name: str,
        value: str,
        domain: str = "",
        path: str = "/",
        *,
        secure: bool = False,
        http_only: bool = False,
        expires: int | None = None,
        host_only: bool = False,
    ) -> None:
        """Store a cookie. ``domain=""`` sends it to every host; otherwise to ``domain``
        and its subdomains (only ``domain`` with ``host_only=True``). ``expires`` is a
        Unix time (``None``: until the process ends or the jar is saved with it)."""
        self._jar.set(
            name,
            value,
            domain,
            path,
            host_only=host_only,
            secure=secure,
            http_only=http_only,
            expires=expires,
        )
        self._changed()

    def __setitem__(self, name: str, value: str) -> None:
        self.set(name, value)

    def __delitem__(self, name: str) -> None:
        if not self._jar.delete(name):
            raise KeyError(name)
        self._changed()

    def delete(self, name: str, domain: str | None = None, path: str | None = None) -> int:
        """Remove the cookies called ``name`` (narrowed by ``domain``/``path``); returns
        how many were removed."""
        removed = self._jar.delete(name, domain, path)
        if removed:
            self._changed()
        return removed

    def clear(self, domain: str | None = None) -> None:
        """Remove every cookie, or those of ``domain``."""
        self._jar.clear(domain)
        self._changed()

    def update(  # type: ignore[override]
        self, cookies: CookieTypes | None = None, /, **kwargs: str
    ) -> None:
        """Set every cookie of a mapping or another jar (any-host for plain names)."""
        if isinstance(cookies, CookieJar):
            self._jar.load_netscape(cookies._jar.to_netscape())
            for c in cookies.cookies():
                if not c.domain:
                    self._jar.set(c.name, c.value, "", c.path, secure=c.secure)
        elif cookies is not None:
            for name, value in cookies.items():
                self._jar.set(name, value)
        for name, value in kwargs.items():
            self._jar.set(name, value)
        self._changed()

    # -- files ------------------------------------------------------------------------------

    def save(self, path: StrPath | None = None) -> None:
        """Write the jar to ``path`` (default: the ``autosave`` path) in Netscape
        ``cookies.txt`` format, atomically. Session cookies are written with expiry 0 (as
        curl does); cookies without a domain cannot be written and are left out."""
        if path is None:
            if self._autosave is None:
                raise ValueError("save() needs a path (this jar has no autosave path)")
            path = self._autosave
        _with_path(self._jar.save, os.fspath(path))

    @classmethod
    def load(cls, path: StrPath, *, autosave: bool | StrPath = False) -> CookieJar:
        """A jar with the cookies of a Netscape ``cookies.txt`` file (curl ``-c``, wget,
        LWP, browser exports); expired cookies and lines that do not parse are skipped.
        ``autosave=True`` saves changes back to the same file."""
        jar = cls()
        _with_path(jar._jar.load, os.fspath(path))
        if autosave is True:
            jar._autosave = os.fspath(path)
        elif autosave:
            jar._autosave = os.fspath(autosave)
        return jar

    def _changed(self) -> None:
        if self._autosave is not None:
            _with_path(self._jar.save, self._autosave)

    # -- display ----------------------------------------------------------------------------

    def __repr__(self) -> str:
        names = ", ".join(f"{c.name}={c.value!r}" for c in self.cookies())
        return f"<CookieJar[{names}]>"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CookieJar):
            return sorted(self.cookies()) == sorted(other.cookies())
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __getstate__(self) -> tuple[list[Cookie], str | None]:
        return (self.cookies(), self._autosave)

    def __setstate__(self, state: tuple[list[Cookie], str | None]) -> None:
        self._jar = _core.CookieJar()
        cookies, self._autosave = state
        for c in cookies:
            self._jar.set(
                c.name,
                c.value,
                c.domain,
                c.path,
                host_only=c.host_only,
                secure=c.secure,
                http_only=c.http_only,
                expires=c.expires,
            )


def from_response(raw: _RawLike) -> CookieJar:
    """The cookies one response sets (``Response.cookies``)."""
    jar = CookieJar()
    if isinstance(raw, _core.RawResponse):
        jar._jar.extract(raw)
        return jar
    values = [value for name, value in raw.headers() if name.lower() == "set-cookie"]
    if values:
        try:
            jar._jar.store(raw.url, values)
        except ValueError:
            pass  # a hand-made response without a usable URL
    return jar


def _conflict(name: str) -> Exception:
    from ._exceptions import CookieConflict

    return CookieConflict(
        f"Multiple cookies exist with name={name}: give domain= or path= to choose one"
    )
