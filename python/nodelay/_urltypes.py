"""``URL`` and ``QueryParams``: httpx's URL types.

``URL`` is a ``str`` subclass holding the URL exactly as it is sent: everything that
took a ``str`` URL (``response.url == "http://..."``, string methods, the engine) keeps
working, and httpx's properties (``scheme``, ``host``, ``port``, ``path``, ``query``,
``params``, ...) and methods (``copy_with``, ``join``, ``copy_add_param``, ...) are
computed from it when asked. ``QueryParams`` is an immutable multi-dict of the query.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import SplitResult, parse_qsl, quote, unquote, urlencode, urljoin, urlsplit

from ._urls import DEFAULT_PORTS, param_pairs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import ItemsView, Iterator, KeysView, ValuesView
    from typing import Any

    from ._urls import ParamTypes

__all__ = ["URL", "QueryParams"]

_PATH_SAFE = "/:@!$&'()*+,;=-._~%"
"""Characters left as they are when a ``path`` given to ``copy_with`` is quoted."""


class QueryParams(Mapping[str, str]):
    """The query string as an immutable multi-dict (httpx): ``params["a"]`` and
    ``get`` give a key's first value, ``get_list`` all of them, ``multi_items`` every
    pair in order; ``set``/``add``/``remove``/``merge`` return a new ``QueryParams``;
    ``str()`` is the encoded query."""

    __slots__ = ("_list",)

    def __init__(self, *args: ParamTypes | QueryParams | None, **kwargs: Any) -> None:
        if len(args) > 1:
            raise TypeError("QueryParams takes at most one positional argument")
        value = args[0] if args else (kwargs or None)
        if isinstance(value, QueryParams):
            self._list: list[tuple[str, str]] = list(value._list)
        elif isinstance(value, str | bytes):
            text = value.decode("ascii") if isinstance(value, bytes) else value
            self._list = parse_qsl(text.lstrip("?"), keep_blank_values=True)
        else:
            self._list = param_pairs(value)
        self._list = _grouped(self._list)

    def keys(self) -> KeysView[str]:
        return {name: None for name, _ in self._list}.keys()

    def values(self) -> ValuesView[str]:
        return {name: self[name] for name in self.keys()}.values()

    def items(self) -> ItemsView[str, str]:
        return {name: self[name] for name in self.keys()}.items()

    def multi_items(self) -> list[tuple[str, str]]:
        return list(self._list)

    def get_list(self, key: str) -> list[str]:
        return [value for name, value in self._list if name == key]

    def __getitem__(self, key: str) -> str:
        for name, value in self._list:
            if name == key:
                return value
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return any(name == key for name, _ in self._list)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def __bool__(self) -> bool:
        return bool(self._list)

    def set(self, key: str, value: Any) -> QueryParams:
        """A copy with ``key`` given this one value (replacing all of its values)."""
        rest = [(name, item) for name, item in self._list if name != key]
        return self._with([*rest, *param_pairs({key: value})])

    def add(self, key: str, value: Any) -> QueryParams:
        """A copy with one more value for ``key``."""
        return self._with([*self._list, *param_pairs({key: value})])

    def remove(self, key: str) -> QueryParams:
        """A copy without ``key``."""
        return self._with([(name, value) for name, value in self._list if name != key])

    def merge(self, params: ParamTypes | QueryParams | None = None) -> QueryParams:
        """A copy with ``params``' keys replacing this one's."""
        other = QueryParams(params)
        names = set(other.keys())
        kept = [(name, value) for name, value in self._list if name not in names]
        return self._with([*kept, *other._list])

    def _with(self, pairs: list[tuple[str, str]]) -> QueryParams:
        copy = QueryParams.__new__(QueryParams)
        copy._list = _grouped(pairs)
        return copy

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, QueryParams):
            try:
                other = QueryParams(other)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                return NotImplemented
        return sorted(self._list) == sorted(other._list)

    def __hash__(self) -> int:
        return hash(str(self))

    def __str__(self) -> str:
        return urlencode(self._list)

    def __repr__(self) -> str:
        return f"QueryParams({str(self)!r})"


def _grouped(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``pairs`` with each key's values together, keys in first-seen order (httpx
    keeps a query as a dict of lists)."""
    groups: dict[str, list[str]] = {}
    for name, value in pairs:
        groups.setdefault(name, []).append(value)
    return [(name, value) for name, values in groups.items() for value in values]


class URL(str):
    """A URL (httpx's ``URL``): the string as sent, with its parts as properties.

    ``scheme`` and ``host`` are lower case; ``port`` is ``None`` when it is the
    scheme's default; ``path`` is percent-decoded, ``raw_path`` is the path and query
    as sent (bytes); ``query`` is bytes, ``params`` a ``QueryParams``. Compares equal
    to the same URL as a ``str``.
    """

    __slots__ = ()

    def __new__(cls, url: str | URL = "", **kwargs: Any) -> URL:
        if kwargs:
            return URL(url).copy_with(**kwargs)
        if isinstance(url, bytes):
            url = url.decode("ascii")
        if not isinstance(url, str):
            raise TypeError(f"URL() takes a str or a URL, not {type(url).__name__}")
        return str.__new__(cls, url)

    def _split(self) -> SplitResult:
        return urlsplit(str(self))

    @property
    def scheme(self) -> str:
        return self._split().scheme.lower()

    @property
    def host(self) -> str:
        return self._split().hostname or ""

    @property
    def raw_host(self) -> bytes:
        return self.host.encode("ascii", "backslashreplace")

    @property
    def port(self) -> int | None:
        port = self._split().port
        return None if port == DEFAULT_PORTS.get(self.scheme) else port

    @property
    def netloc(self) -> bytes:
        """``host[:port]`` as bytes (no credentials)."""
        return self._split().netloc.rpartition("@")[2].encode("ascii", "backslashreplace")

    @property
    def userinfo(self) -> bytes:
        netloc = self._split().netloc
        return netloc.rpartition("@")[0].encode("ascii", "backslashreplace")

    @property
    def username(self) -> str:
        return unquote(self._split().username or "")

    @property
    def password(self) -> str:
        return unquote(self._split().password or "")

    @property
    def path(self) -> str:
        parts = self._split()
        return unquote(parts.path or ("/" if parts.netloc else ""))

    @property
    def query(self) -> bytes:
        return self._split().query.encode("ascii", "backslashreplace")

    @property
    def params(self) -> QueryParams:
        return QueryParams(self._split().query)

    @property
    def raw_path(self) -> bytes:
        parts = self._split()
        path = parts.path or ("/" if parts.netloc else "")
        raw = f"{path}?{parts.query}" if parts.query else path
        return raw.encode("ascii", "backslashreplace")

    @property
    def fragment(self) -> str:
        return unquote(self._split().fragment)

    @property
    def is_absolute_url(self) -> bool:
        return bool(self._split().scheme)

    @property
    def is_relative_url(self) -> bool:
        return not self.is_absolute_url

    def copy_with(self, **kwargs: Any) -> URL:
        """A copy with some parts replaced: ``scheme``, ``host``, ``port``, ``path``,
        ``query`` (bytes), ``params``, ``fragment``, ``username``, ``password``,
        ``netloc`` (bytes), ``raw_path`` (bytes)."""
        parts = self._split()
        scheme, netloc, path, query, fragment = parts
        allowed = {
            "scheme", "host", "port", "path", "query", "params", "fragment",
            "username", "password", "netloc", "raw_path",
        }  # fmt: skip
        unknown = kwargs.keys() - allowed
        if unknown:
            raise TypeError(f"{min(unknown)!r} is an invalid keyword argument for copy_with()")
        if "scheme" in kwargs:
            scheme = kwargs["scheme"]
        if "netloc" in kwargs:
            netloc = _text(kwargs["netloc"])
        if {"host", "port", "username", "password"} & kwargs.keys():
            host = kwargs.get("host", parts.hostname or "")
            if ":" in host:
                host = f"[{host}]"
            port = kwargs["port"] if "port" in kwargs else parts.port
            username = kwargs.get("username", unquote(parts.username or ""))
            password = kwargs.get("password", unquote(parts.password or ""))
            userinfo = quote(username, safe="") if username else ""
            if password:
                userinfo += ":" + quote(password, safe="")
            netloc = (userinfo + "@" if userinfo else "") + host
            if port is not None:
                netloc += f":{port}"
        if "raw_path" in kwargs:
            path, _, query = _text(kwargs["raw_path"]).partition("?")
        if "path" in kwargs:
            path = quote(kwargs["path"], safe=_PATH_SAFE)
        if "query" in kwargs:
            query = _text(kwargs["query"])
        if "params" in kwargs:
            query = str(QueryParams(kwargs["params"]))
        if "fragment" in kwargs:
            fragment = kwargs["fragment"]
        return URL(SplitResult(scheme, netloc, path, query, fragment).geturl())

    def copy_set_param(self, key: str, value: Any = None) -> URL:
        return self.copy_with(params=self.params.set(key, value))

    def copy_add_param(self, key: str, value: Any = None) -> URL:
        return self.copy_with(params=self.params.add(key, value))

    def copy_remove_param(self, key: str) -> URL:
        return self.copy_with(params=self.params.remove(key))

    def copy_merge_params(self, params: ParamTypes) -> URL:
        return self.copy_with(params=self.params.merge(params))

    def join(self, url: str) -> URL:  # type: ignore[override]
        """``url`` resolved against this URL (RFC 3986). httpx's meaning, which
        replaces ``str.join`` on URLs (a URL is never a separator)."""
        return URL(urljoin(str(self), str(url)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and str.__eq__(self, other)

    def __hash__(self) -> int:
        return str.__hash__(self)

    def __str__(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"URL({str.__repr__(self)})"


def _text(value: str | bytes) -> str:
    return value.decode("ascii") if isinstance(value, bytes) else value
