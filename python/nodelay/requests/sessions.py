"""``Session``: requests' settings, redirect handling and adapters over nodelay clients.

Every setting is a plain attribute read when a request is sent (``s.verify = path`` after
construction takes effect on the next request). Redirects are followed here, hop by hop,
with requests' rules (method rewriting, Authorization stripped on a host change, the
fragment kept, ``max_redirects``, response hooks on every hop); each hop is one exchange
through the adapter mounted for its URL.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from http.cookiejar import CookieJar as _StdCookieJar
from typing import Any, ClassVar
from urllib.parse import urljoin, urlparse

from .. import CookieJar
from .._urls import HTTP_DEFAULT_PORTS
from .adapters import BaseAdapter, HTTPAdapter
from .auth import _basic_auth_str
from .cookies import RequestsCookieJar, cookiejar_from_dict
from .exceptions import InvalidSchema, TooManyRedirects
from .hooks import default_hooks, dispatch_hook
from .models import DEFAULT_REDIRECT_LIMIT, PreparedRequest, Request, Response
from .structures import CaseInsensitiveDict
from .utils import (
    default_headers,
    get_auth_from_url,
    get_environ_proxies,
    get_netrc_auth,
    requote_uri,
    resolve_proxies,
    to_key_val_list,
)

__all__ = ["Session", "merge_hooks", "merge_setting", "resolve_proxies", "session"]

DEFAULT_PORTS = dict(HTTP_DEFAULT_PORTS)


def merge_setting(request_setting: Any, session_setting: Any, dict_class: Any = OrderedDict) -> Any:
    """A request's setting over the session's: mappings merged (a ``None`` value removes a
    key), anything else the request's unless it is ``None``."""
    if session_setting is None:
        return request_setting
    if request_setting is None:
        return session_setting
    if not (isinstance(session_setting, Mapping) and isinstance(request_setting, Mapping)):
        return request_setting
    merged = dict_class(to_key_val_list(session_setting))
    merged.update(to_key_val_list(request_setting))
    for key in [k for (k, v) in merged.items() if v is None]:
        del merged[key]
    return merged


def merge_hooks(request_hooks: Any, session_hooks: Any, dict_class: Any = OrderedDict) -> Any:
    """requests' rule: a request's non-empty hooks replace the session's for that event."""
    if session_hooks is None or session_hooks.get("response") == []:
        return request_hooks
    if request_hooks is None or request_hooks.get("response") == []:
        return session_hooks
    return merge_setting(request_hooks, session_hooks, dict_class)


class SessionRedirectMixin:
    max_redirects: int
    trust_env: bool
    cookies: RequestsCookieJar

    def send(self, request: PreparedRequest, **kwargs: Any) -> Response:
        raise NotImplementedError

    def get_redirect_target(self, resp: Response) -> str | None:
        """The Location of a redirect response (``None`` for any other)."""
        if resp.is_redirect:
            location = resp.headers["location"]
            # Servers send UTF-8 in Location; the engine decoded it as Latin-1.
            try:
                return location.encode("latin1").decode("utf8")
            except UnicodeError:
                return location
        return None

    def should_strip_auth(self, old_url: str, new_url: str) -> bool:
        """Whether Authorization must go when redirecting from ``old_url`` to ``new_url``."""
        old_parsed = urlparse(old_url)
        new_parsed = urlparse(new_url)
        if old_parsed.hostname != new_parsed.hostname:
            return True
        if (
            old_parsed.scheme == "http"
            and old_parsed.port in (80, None)
            and new_parsed.scheme == "https"
            and new_parsed.port in (443, None)
        ):
            return False
        changed_port = old_parsed.port != new_parsed.port
        changed_scheme = old_parsed.scheme != new_parsed.scheme
        default_port = (DEFAULT_PORTS.get(old_parsed.scheme, None), None)
        if (
            not changed_scheme
            and old_parsed.port in default_port
            and new_parsed.port in default_port
        ):
            return False
        return changed_port or changed_scheme

    def resolve_redirects(
        self,
        resp: Response,
        req: PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: bool | str = True,
        cert: Any = None,
        proxies: Mapping[str, str] | None = None,
        yield_requests: bool = False,
        **adapter_kwargs: Any,
    ) -> Iterator[Any]:
        """The responses of the redirects after ``resp`` (or, with ``yield_requests``, the
        next request without sending it)."""
        hist: list[Response] = []
        url = self.get_redirect_target(resp)
        previous_fragment = urlparse(req.url or "").fragment
        while url:
            prepared_request = req.copy()
            resp.history = hist[:]
            hist.append(resp)
            try:
                resp.content  # noqa: B018 - read the body so the connection is reused
            except Exception:
                resp.raw.read(decode_content=False)
            if len(resp.history) >= self.max_redirects:
                raise TooManyRedirects(f"Exceeded {self.max_redirects} redirects.", response=resp)
            resp.close()
            if url.startswith("//"):
                url = f"{urlparse(resp.url).scheme}:{url}"
            parsed = urlparse(url)
            if parsed.fragment == "" and previous_fragment:
                parsed = parsed._replace(fragment=previous_fragment)
            elif parsed.fragment:
                previous_fragment = parsed.fragment
            url = parsed.geturl()
            if not parsed.netloc:
                url = urljoin(resp.url, requote_uri(url))
            else:
                url = requote_uri(url)
            prepared_request.url = url
            self.rebuild_method(prepared_request, resp)
            if resp.status_code not in (307, 308):
                for header in ("Content-Length", "Content-Type", "Transfer-Encoding"):
                    prepared_request.headers.pop(header, None)
                prepared_request.body = None
            headers = prepared_request.headers
            headers.pop("Cookie", None)
            cookie_jar = prepared_request._cookies
            if cookie_jar is None:
                cookie_jar = RequestsCookieJar()
            cookie_jar.update(self.cookies)
            prepared_request.prepare_cookies(cookie_jar)
            proxies = self.rebuild_proxies(prepared_request, proxies)
            self.rebuild_auth(prepared_request, resp)
            if prepared_request.body is not None and hasattr(prepared_request.body, "seek"):
                position = prepared_request._body_position
                if isinstance(position, int):
                    prepared_request.body.seek(position)
            req = prepared_request
            if yield_requests:
                yield req
            else:
                resp = self.send(
                    req,
                    stream=stream,
                    timeout=timeout,
                    verify=verify,
                    cert=cert,
                    proxies=proxies,
                    allow_redirects=False,
                    **adapter_kwargs,
                )
                url = self.get_redirect_target(resp)
                yield resp

    def rebuild_auth(self, prepared_request: PreparedRequest, response: Response) -> None:
        """Drop credentials on a redirect to another host; re-read .netrc for the new one."""
        headers = prepared_request.headers
        url = prepared_request.url or ""
        if self.should_strip_auth(response.request.url or "", url):
            headers.pop("Authorization", None)
        new_auth = get_netrc_auth(url) if self.trust_env else None
        if new_auth is not None:
            prepared_request.prepare_auth(new_auth)

    def rebuild_proxies(
        self, prepared_request: PreparedRequest, proxies: Mapping[str, str] | None
    ) -> dict[str, str]:
        """The proxies for the redirect's URL, and its Proxy-Authorization for http."""
        headers = prepared_request.headers
        scheme = urlparse(prepared_request.url or "").scheme
        new_proxies = resolve_proxies(prepared_request, proxies, self.trust_env)
        headers.pop("Proxy-Authorization", None)
        username, password = (
            get_auth_from_url(new_proxies[scheme]) if scheme in new_proxies else ("", "")
        )
        if not scheme.startswith("https") and username and password:
            headers["Proxy-Authorization"] = _basic_auth_str(username, password)
        return new_proxies

    def rebuild_method(self, prepared_request: PreparedRequest, response: Response) -> None:
        """303 (and 302, as browsers) turn any method but HEAD into GET; 301 turns POST into
        GET."""
        method = prepared_request.method
        if response.status_code in (302, 303) and method != "HEAD":
            method = "GET"
        if response.status_code == 301 and method == "POST":
            method = "GET"
        prepared_request.method = method


class Session(SessionRedirectMixin):
    """A requests session: cookie persistence, connection pooling and settings.

    ``headers``, ``auth``, ``proxies``, ``hooks``, ``params``, ``stream``, ``verify`` (bool
    or a CA bundle path), ``cert``, ``max_redirects``, ``trust_env``, ``cookies`` and
    ``adapters`` are plain attributes, read when each request is sent.
    """

    __attrs__: ClassVar[list[str]] = [
        "headers",
        "cookies",
        "auth",
        "proxies",
        "hooks",
        "params",
        "verify",
        "cert",
        "adapters",
        "stream",
        "trust_env",
        "max_redirects",
    ]

    def __init__(self) -> None:
        self.headers: CaseInsensitiveDict[str] = default_headers()
        self.auth: Any = None
        self.proxies: dict[str, str] = {}
        self.hooks: dict[str, list[Any]] = default_hooks()
        self.params: Any = {}
        self.stream = False
        self.verify: bool | str = True
        self.cert: Any = None
        self.max_redirects = DEFAULT_REDIRECT_LIMIT
        self.trust_env = True
        self.cookies = cookiejar_from_dict({})  # type: ignore[assignment]
        self.adapters: OrderedDict[str, BaseAdapter] = OrderedDict()
        self.mount("https://", HTTPAdapter())
        self.mount("http://", HTTPAdapter())

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "cookies" and not isinstance(value, CookieJar):
            # A dict or an http.cookiejar jar becomes a RequestsCookieJar (the engine
            # stores Set-Cookie into this jar, so it must be nodelay's kind).
            jar = RequestsCookieJar()
            if isinstance(value, _StdCookieJar):
                for cookie in value:
                    jar.set_cookie(cookie)
            elif value is not None:
                cookiejar_from_dict(value, jar)
            value = jar
        object.__setattr__(self, name, value)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *args: object) -> None:
        self.close()

    def prepare_request(self, request: Request) -> PreparedRequest:
        """A ``PreparedRequest`` of ``request`` with this session's settings merged in."""
        cookies = request.cookies or {}
        if isinstance(cookies, CookieJar) or cookies:
            merged: CookieJar = RequestsCookieJar(self.cookies)
            if isinstance(cookies, CookieJar):
                merged.update(cookies)
            elif isinstance(cookies, _StdCookieJar):
                for cookie in cookies:
                    merged.set(cookie.name, cookie.value or "", cookie.domain, cookie.path)
            else:
                cookiejar_from_dict(cookies, merged)
        else:
            merged = self.cookies
        auth = request.auth
        if self.trust_env and not auth and not self.auth:
            auth = get_netrc_auth(request.url or "")
        p = PreparedRequest()
        p.prepare(
            method=(request.method or "").upper(),
            url=request.url,
            files=request.files,
            data=request.data,
            json=request.json,
            headers=merge_setting(request.headers, self.headers, dict_class=CaseInsensitiveDict),
            params=merge_setting(request.params, self.params),
            auth=merge_setting(auth, self.auth),
            cookies=merged,
            hooks=merge_hooks(request.hooks, self.hooks),
        )
        return p

    def request(
        self,
        method: str,
        url: str | bytes,
        params: Any = None,
        data: Any = None,
        headers: Mapping[str, Any] | None = None,
        cookies: Any = None,
        files: Any = None,
        auth: Any = None,
        timeout: Any = None,
        allow_redirects: bool = True,
        proxies: Mapping[str, str] | None = None,
        hooks: Mapping[str, Any] | None = None,
        stream: bool | None = None,
        verify: bool | str | None = None,
        cert: Any = None,
        json: Any = None,
    ) -> Response:
        """Build a ``Request``, prepare it with the session's settings and send it."""
        req = Request(
            method=method.upper(),
            url=url.decode("utf-8") if isinstance(url, bytes) else url,
            headers=headers,
            files=files,
            data=data or {},
            json=json,
            params=params or {},
            auth=auth,
            cookies=cookies,
            hooks=hooks,
        )
        prep = self.prepare_request(req)
        settings = self.merge_environment_settings(
            prep.url, dict(proxies or {}), stream, verify, cert
        )
        return self.send(prep, timeout=timeout, allow_redirects=allow_redirects, **settings)

    def get(self, url: str | bytes, **kwargs: Any) -> Response:
        kwargs.setdefault("allow_redirects", True)
        return self.request("GET", url, **kwargs)

    def options(self, url: str | bytes, **kwargs: Any) -> Response:
        kwargs.setdefault("allow_redirects", True)
        return self.request("OPTIONS", url, **kwargs)

    def head(self, url: str | bytes, **kwargs: Any) -> Response:
        kwargs.setdefault("allow_redirects", False)
        return self.request("HEAD", url, **kwargs)

    def post(self, url: str | bytes, data: Any = None, json: Any = None, **kwargs: Any) -> Response:
        return self.request("POST", url, data=data, json=json, **kwargs)

    def put(self, url: str | bytes, data: Any = None, **kwargs: Any) -> Response:
        return self.request("PUT", url, data=data, **kwargs)

    def patch(self, url: str | bytes, data: Any = None, **kwargs: Any) -> Response:
        return self.request("PATCH", url, data=data, **kwargs)

    def delete(self, url: str | bytes, **kwargs: Any) -> Response:
        return self.request("DELETE", url, **kwargs)

    def send(self, request: PreparedRequest, **kwargs: Any) -> Response:
        """Send a ``PreparedRequest`` through the adapter mounted for its URL, following
        redirects unless ``allow_redirects=False`` (then ``response.next`` is the next
        request)."""
        kwargs.setdefault("stream", self.stream)
        kwargs.setdefault("verify", self.verify)
        kwargs.setdefault("cert", self.cert)
        if "proxies" not in kwargs:
            kwargs["proxies"] = resolve_proxies(request, self.proxies, self.trust_env)
        if isinstance(request, Request):
            raise ValueError("You can only send PreparedRequests.")
        allow_redirects = kwargs.pop("allow_redirects", True)
        stream = kwargs.get("stream")
        hooks = request.hooks
        adapter = self.get_adapter(url=request.url or "")
        request._jar = self.cookies
        r: Response = adapter.send(request, **kwargs)
        r = dispatch_hook("response", hooks, r, **kwargs)
        if allow_redirects:
            history = list(self.resolve_redirects(r, request, **kwargs))
        else:
            history = []
        if history:
            history.insert(0, r)
            r = history.pop()
            r.history = history
        if not allow_redirects:
            try:
                r._next = next(self.resolve_redirects(r, request, yield_requests=True, **kwargs))
            except StopIteration:
                pass
        if not stream:
            r.content  # noqa: B018 - read the body now, as requests does
        return r

    def merge_environment_settings(
        self,
        url: str | None,
        proxies: dict[str, str] | None,
        stream: bool | None,
        verify: bool | str | None,
        cert: Any,
    ) -> dict[str, Any]:
        """The effective ``proxies``/``stream``/``verify``/``cert``: the request's, then
        the environment's (proxies, ``REQUESTS_CA_BUNDLE``/``CURL_CA_BUNDLE``) when
        ``trust_env``, then the session's."""
        if self.trust_env:
            no_proxy = proxies.get("no_proxy") if proxies is not None else None
            env_proxies = get_environ_proxies(url or "", no_proxy=no_proxy)
            if proxies is not None:
                for k, v in env_proxies.items():
                    proxies.setdefault(k, v)
            if verify is True or verify is None:
                verify = (
                    os.environ.get("REQUESTS_CA_BUNDLE")
                    or os.environ.get("CURL_CA_BUNDLE")
                    or verify
                )
        return {
            "proxies": merge_setting(proxies, self.proxies),
            "stream": merge_setting(stream, self.stream),
            "verify": merge_setting(verify, self.verify),
            "cert": merge_setting(cert, self.cert),
        }

    def get_adapter(self, url: str) -> BaseAdapter:
        """The adapter mounted on the longest prefix of ``url``."""
        for prefix, adapter in self.adapters.items():
            if url.lower().startswith(prefix.lower()):
                return adapter
        raise InvalidSchema(f"No connection adapters were found for {url!r}")

    def close(self) -> None:
        """Close every adapter (and its connections)."""
        for adapter in self.adapters.values():
            adapter.close()

    def mount(self, prefix: str, adapter: BaseAdapter) -> None:
        """Use ``adapter`` for URLs starting with ``prefix`` (longest prefix first)."""
        self.adapters[prefix] = adapter
        for key in [k for k in self.adapters if len(k) < len(prefix)]:
            self.adapters[key] = self.adapters.pop(key)

    def __getstate__(self) -> dict[str, Any]:
        return {attr: getattr(self, attr, None) for attr in self.__attrs__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for attr, value in state.items():
            setattr(self, attr, value)


def session() -> Session:
    """A new ``Session`` (deprecated in requests; kept for old programs)."""
    return Session()
