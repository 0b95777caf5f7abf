"""Proxy settings: ``proxy=`` and the environment, resolved once per client.

The result is the engine's keywords (``http_proxy``, ``https_proxy``, ``no_proxy``); the
engine parses them once and routes each request in Rust (NO_PROXY matching included), so
a client without proxies pays nothing per request.

Rules (curl's, which requests and httpx mostly share):

- An explicit ``proxy=`` wins: the environment is not read for proxies at all (httpx).
  A string is the proxy for http and https targets; a mapping (requests' ``proxies=``
  shape) may set ``"http"``, ``"https"``, ``"all"`` (fallback for both) and ``"no_proxy"``;
  httpx-style keys (``"http://"``, ``"all://"``) are accepted too.
- With ``trust_env=True`` (and no ``proxy=``): ``http_proxy``, ``https_proxy``,
  ``all_proxy`` and ``no_proxy``, each lowercase first, then uppercase. A variable that is
  set but empty means "no proxy" (and hides its uppercase twin), as for curl and CPython.
- The CGI rule ("httpoxy"): when ``REQUEST_METHOD`` is set, the program runs as a CGI
  script and ``HTTP_PROXY`` may come from a client's ``Proxy:`` request header, so the
  uppercase ``HTTP_PROXY`` is ignored (the lowercase one is not a header name).
- ``trust_env=False`` ignores the environment.

Proxy URLs are ``http://[user:password@]host[:port]``, ``https://...`` (TLS to the
proxy), or a SOCKS proxy: ``socks5://`` (the name resolved here), ``socks5h://`` (resolved
by the proxy), ``socks4://`` and ``socks4a://`` (curl's names, which requests and httpx
share; port 1080 when none is given). ``host:port`` alone means ``http://``. Credentials in
the URL go to the proxy only (``Proxy-Authorization: Basic``, or the SOCKS5
username/password exchange, or the SOCKS4 user id); they never appear in messages (shown
as ``***@``).
"""

from __future__ import annotations

from ._env import any_set, getenv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, TypeAlias

    ProxyTypes: TypeAlias = "str | Mapping[str, str | None]"

__all__ = ["engine_proxy_options", "mask_url"]

_SUPPORTED_SCHEMES = ("http", "https", "socks5", "socks5h", "socks4", "socks4a")
_MAPPING_KEYS = ("http", "https", "all", "no_proxy")


def mask_url(url: str) -> str:
    """``url`` with its ``user:password@`` replaced by ``***@``."""
    start = url.find("://")
    start = 0 if start < 0 else start + 3
    end = len(url)
    for sep in "/?#":
        i = url.find(sep, start)
        if i >= 0:
            end = min(end, i)
    at = url.rfind("@", start, end)
    return url if at < 0 else f"{url[:start]}***@{url[at + 1 :]}"


def _checked(url: str | None, source: str) -> str | None:
    """``url`` stripped (``None`` when empty) after checking its scheme is one we speak."""
    if url is None:
        return None
    if not isinstance(url, str):
        raise TypeError(f"{source} must be a proxy URL string, not {type(url).__name__}")
    url = url.strip()
    if not url:
        return None
    scheme, sep, _ = url.partition("://")
    if sep and scheme.lower() not in _SUPPORTED_SCHEMES:
        hint = " (pass proxy= or trust_env=False to ignore it)" if source[0] == "$" else ""
        raise ValueError(
            f"unsupported proxy scheme {scheme + '://'!r} in {source} ({mask_url(url)}): "
            "nodelay speaks to http://, https://, socks5://, socks5h://, socks4:// and "
            f"socks4a:// proxies{hint}"
        )
    return url


def _options(http: str | None, https: str | None, no_proxy: str | None) -> dict[str, str]:
    options = {}
    if http is not None:
        options["http_proxy"] = http
    if https is not None:
        options["https_proxy"] = https
    if options and no_proxy:
        options["no_proxy"] = no_proxy
    return options


def _explicit(proxy: ProxyTypes) -> dict[str, str]:
    if isinstance(proxy, str):
        url = _checked(proxy, "proxy")
        return _options(url, url, None)
    if not hasattr(proxy, "items"):
        raise TypeError(f"proxy must be a URL string or a mapping, not {type(proxy).__name__}")
    given: dict[str, str | None] = {}
    for key, value in proxy.items():
        name = key.lower().removesuffix("://")
        if name not in _MAPPING_KEYS:
            raise ValueError(f"unknown proxy key {key!r}: use 'http', 'https', 'all' or 'no_proxy'")
        given[name] = value
    fallback = _checked(given.get("all"), "proxy['all']")
    http = _checked(given["http"], "proxy['http']") if "http" in given else fallback
    https = _checked(given["https"], "proxy['https']") if "https" in given else fallback
    return _options(http, https, given.get("no_proxy"))


def _first_set(
    getenv: Callable[[str], str | None], names: tuple[str, ...]
) -> tuple[str | None, str]:
    """The value of the first variable of ``names`` that is set (possibly empty), and its
    name (for messages)."""
    for name in names:
        value = getenv(name)
        if value is not None:
            return value, name
    return None, ""


_PROXY_VARIABLES = (
    "http_proxy",
    "HTTP_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
    "no_proxy",
    "NO_PROXY",
)
"""Every variable ``_from_env`` reads but the CGI marker (which alone sets no proxy)."""


def _from_env(getenv: Callable[[str], str | None]) -> dict[str, str]:
    cgi = getenv("REQUEST_METHOD") is not None
    http_names = ("http_proxy",) if cgi else ("http_proxy", "HTTP_PROXY")
    http, http_source = _first_set(getenv, http_names)
    https, https_source = _first_set(getenv, ("https_proxy", "HTTPS_PROXY"))
    every, every_source = _first_set(getenv, ("all_proxy", "ALL_PROXY"))
    if http is None:
        http, http_source = every, every_source
    if https is None:
        https, https_source = every, every_source
    no_proxy, _ = _first_set(getenv, ("no_proxy", "NO_PROXY"))
    return _options(
        _checked(http, f"${http_source}"), _checked(https, f"${https_source}"), no_proxy
    )


def engine_proxy_options(
    proxy: ProxyTypes | None, trust_env: bool, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The ``_core.Engine`` proxy keywords for ``proxy=`` and ``trust_env`` (empty when
    no proxy applies). ``environ`` defaults to ``os.environ``."""
    if proxy is not None:
        return _explicit(proxy)
    if not trust_env:
        return {}
    if environ is None:
        if not any_set(_PROXY_VARIABLES):
            return {}  # the common case, in one set operation
        return _from_env(getenv)
    return _from_env(environ.get)
