"""Module-level helpers: ``nodelay.get(url)`` and friends.

Each call opens a ``Client``, sends one request and closes the client (like httpx), so no
connection is reused between calls: use a ``Client`` for more than a few requests.
Redirects are not followed unless ``follow_redirects=True`` (or ``allow_redirects=True``).
"""

from __future__ import annotations

from contextlib import contextmanager

from ._client import Client
from ._config import UNSET, _Unset

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ._auth import AuthTypes
    from ._config import CertTypes, TimeoutTypes, VerifyTypes
    from ._cookies import CookieTypes
    from ._models import Response
    from ._prepare import RequestContent, RequestData, RequestHeaderTypes
    from ._proxy import ProxyTypes
    from ._upload import RequestFiles
    from ._urls import ParamTypes

__all__ = ["delete", "get", "head", "options", "patch", "post", "put", "request", "stream"]


def request(
    method: str,
    url: str,
    *,
    params: ParamTypes | None = None,
    headers: RequestHeaderTypes | None = None,
    content: RequestContent | None = None,
    data: RequestData | None = None,
    files: RequestFiles | None = None,
    json: Any = None,
    timeout: TimeoutTypes | _Unset = UNSET,
    verify: VerifyTypes = True,
    cert: CertTypes | None = None,
    follow_redirects: bool | None = None,
    allow_redirects: bool | None = None,
    cookies: CookieTypes | None = None,
    auth: AuthTypes | None = None,
    trust_env: bool = True,
    proxy: ProxyTypes | None = None,
    stream: bool = False,
) -> Response:
    """Send one request with a throw-away ``Client`` (see ``Client.request``).

    ``cookies`` and ``auth`` apply to this request's origin only (never carried by a
    redirect to another one); ``trust_env``: use ``.netrc`` credentials when no ``auth``,
    and the ``*_proxy`` environment variables when no ``proxy`` (see ``Client``).
    """
    with Client(verify=verify, cert=cert, trust_env=trust_env, proxy=proxy) as client:
        return client.request(
            method,
            url,
            params=params,
            headers=headers,
            content=content,
            data=data,
            files=files,
            json=json,
            timeout=timeout,
            follow_redirects=follow_redirects,
            allow_redirects=allow_redirects,
            cookies=cookies,
            auth=auth,
            stream=stream,
        )


def get(
    url: str,
    *,
    params: ParamTypes | None = None,
    headers: RequestHeaderTypes | None = None,
    timeout: TimeoutTypes | _Unset = UNSET,
    verify: VerifyTypes = True,
    cert: CertTypes | None = None,
    follow_redirects: bool | None = None,
    allow_redirects: bool | None = None,
    cookies: CookieTypes | None = None,
    auth: AuthTypes | None = None,
    trust_env: bool = True,
    proxy: ProxyTypes | None = None,
    stream: bool = False,
) -> Response:
    """Send a GET request with a throw-away ``Client``."""
    return request(
        "GET",
        url,
        params=params,
        headers=headers,
        timeout=timeout,
        verify=verify,
        cert=cert,
        follow_redirects=follow_redirects,
        allow_redirects=allow_redirects,
        cookies=cookies,
        auth=auth,
        trust_env=trust_env,
        proxy=proxy,
        stream=stream,
    )


def head(
    url: str,
    *,
    params: ParamTypes | None = None,
    headers: RequestHeaderTypes | None = None,
    timeout: TimeoutTypes | _Unset = UNSET,
    verify: VerifyTypes = True,
    cert: CertTypes | None = None,
    follow_redirects: bool | None = None,
    allow_redirects: bool | None = None,
    cookies: CookieTypes | None = None,
    auth: AuthTypes | None = None,
    trust_env: bool = True,
    proxy: ProxyTypes | None = None,
    stream: bool = False,
) -> Response:
    """Send a HEAD request with a throw-away ``Client``."""
    return request(
        "HEAD",
        url,
        params=params,
        headers=headers,
        timeout=timeout,
        verify=verify,
        cert=cert,
        follow_redirects=follow_redirects,
        allow_redirects=allow_redirects,
        cookies=cookies,
        auth=auth,
        trust_env=trust_env,
        proxy=proxy,
        stream=stream,
    )


def options(
    url: str,
    *,
    params: ParamTypes | None = None,
    headers: RequestHeaderTypes | None = None,
    timeout: TimeoutTypes | _Unset = UNSET,
    verify: VerifyTypes = True,
    cert: CertTypes | None = None,
    follow_redirects: bool | None = None,
    allow_redirects: bool | None = None,
    cookies: CookieTypes | None = None,
    auth: AuthTypes | None = None,
    trust_env: bool = True,
    proxy: ProxyTypes | None = None,
    stream: bool = False,
) -> Response:
    """Send a OPTIONS request with a throw-away ``Client``."""
    return request(
        "OPTIONS",
        url,
        params=params,
        headers=headers,
        timeout=timeout,
        verify=verify,
        cert=cert,
        follow_redirects=follow_redirects,
        allow_redirects=allow_redirects,
        cookies=cookies,
        auth=auth,
        trust_env=trust_env,
        proxy=proxy,
        stream=stream,
    )


def delete(
    url: str,
    *,
    params: ParamTypes | None = None,
    headers: RequestHeaderTypes | None = None,
    timeout: TimeoutTypes | _Unset = UNSET,
    verify: VerifyTypes = True,
    cert: CertTypes | None = None,
    follow_redirects: bool | None = None,
    allow_redirects: bool | None = None,
    cookies: CookieTypes | None = None,
    auth: AuthTypes | None = None,
    trust_env: bool = True,
    proxy: ProxyTypes | None = None,
    stream: bool = False,
) -> Response:
    """Send a DELETE request with a throw-away ``Client``."""
    return request(
        "DELETE",
        url,
        params=params,
        headers=headers,
        timeout=timeout,
        verify=verify,
        cert=cert,
        follow_redirects=follow_redirects,
        allow_redirects=allow_redirects,
        cookies=cookies,
        auth=auth,
        trust_env=trust_env,
        proxy=proxy,
        stream=stream,
    )


def post(
    url: str,
    *,
    content: RequestContent | None = None,
    data: RequestData | None = None,
    files: RequestFiles | None = None,
    json: Any = None,
    params: ParamTypes | None = None,
    headers: RequestHeaderTypes | None = None,
    timeout: TimeoutTypes | _Unset = UNSET,
    verify: VerifyTypes = True,
    cert: CertTypes | None = None,
    follow_redirects: bool | None = None,
    allow_redirects: bool | None = None,
    cookies: CookieTypes | None = None,
    auth: AuthTypes | None = None,
    trust_env: bool = True,
    proxy: ProxyTypes | None = None,
    stream: bool = False,
) -> Response:
    """Send a POST request with a throw-away ``Client``."""
    return request(
        "POST",
        url,
        content=content,
        data=data,
        files=files,
        json=json,
        params=params,
        headers=headers,
        timeout=timeout,
        verify=verify,
        cert=cert,
        follow_redirects=follow_redirects,
        allow_redirects=allow_redirects,
        cookies=cookies,
        auth=auth,
        trust_env=trust_env,
        proxy=proxy,
        stream=stream,
    )


def put(
    url: str,
    *,
    content: RequestContent | None = None,
    data: RequestData | None = None,
    files: RequestFiles | None = None,
    json: Any = None,
    params: ParamTypes | None = None,
    headers: RequestHeaderTypes | None = None,
    timeout: TimeoutTypes | _Unset = UNSET,
    verify: VerifyTypes = True,
    cert: CertTypes | None = None,
    follow_redirects: bool | None = None,
    allow_redirects: bool | None = None,
    cookies: CookieTypes | None = None,
    auth: AuthTypes | None = None,
    trust_env: bool = True,
    proxy: ProxyTypes | None = None,
    stream: bool = False,
) -> Response:
    """Send a PUT request with a throw-away ``Client``."""
    return request(
        "PUT",
        url,
        content=content,
        data=data,
        files=files,
        json=json,
        params=params,
        headers=headers,
        timeout=timeout,
        verify=verify,
        cert=cert,
        follow_redirects=follow_redirects,
        allow_redirects=allow_redirects,
        cookies=cookies,
        auth=auth,
        trust_env=trust_env,
        proxy=proxy,
        stream=stream,
    )


def patch(
    url: str,
    *,
    content: RequestContent | None = None,
    data: RequestData | None = None,
    files: RequestFiles | None = None,
    json: Any = None,
    params: ParamTypes | None = None,
    headers: RequestHeaderTypes | None = None,
    timeout: TimeoutTypes | _Unset = UNSET,
    verify: VerifyTypes = True,
    cert: CertTypes | None = None,
    follow_redirects: bool | None = None,
    allow_redirects: bool | None = None,
    cookies: CookieTypes | None = None,
    auth: AuthTypes | None = None,
    trust_env: bool = True,
    proxy: ProxyTypes | None = None,
    stream: bool = False,
) -> Response:
    """Send a PATCH request with a throw-away ``Client``."""
    return request(
        "PATCH",
        url,
        content=content,
        data=data,
        files=files,
        json=json,
        params=params,
        headers=headers,
        timeout=timeout,
        verify=verify,
        cert=cert,
        follow_redirects=follow_redirects,
        allow_redirects=allow_redirects,
        cookies=cookies,
        auth=auth,
        trust_env=trust_env,
        proxy=proxy,
        stream=stream,
    )


@contextmanager
def stream(method: str, url: str, **kwargs: Any) -> Iterator[Response]:
    """``with nodelay.stream("GET", url) as r:`` — ``Client.stream`` with a throw-away client
    (``verify``, ``cert``, ``trust_env`` and ``proxy`` configure it; the rest go to the
    request)."""
    client_options = {
        k: kwargs.pop(k) for k in ("verify", "cert", "trust_env", "proxy") if k in kwargs
    }
    with Client(**client_options) as client, client.stream(method, url, **kwargs) as response:
        yield response
