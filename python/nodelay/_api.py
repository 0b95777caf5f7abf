"""Module-level helpers: ``nodelay.get(url)`` and friends.

Each call opens a ``Client``, sends one request and closes the client (like httpx), so no
connection is reused between calls: use a ``Client`` for more than a few requests.
Redirects are not followed unless ``follow_redirects=True`` (or ``allow_redirects=True``).
"""

from __future__ import annotations

from ._client import Client
from ._config import UNSET, _Unset

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._client import RequestContent, RequestData, RequestHeaderTypes
    from ._config import CertTypes, TimeoutTypes, VerifyTypes
    from ._models import Response
    from ._urls import ParamTypes

__all__ = ["delete", "get", "head", "options", "patch", "post", "put", "request"]


def request(
    method: str,
    url: str,
    *,
    params: ParamTypes | None = None,
    headers: RequestHeaderTypes | None = None,
    content: RequestContent | None = None,
    data: RequestData | None = None,
    json: Any = None,
    timeout: TimeoutTypes | _Unset = UNSET,
    verify: VerifyTypes = True,
    cert: CertTypes | None = None,
    follow_redirects: bool | None = None,
    allow_redirects: bool | None = None,
) -> Response:
    """Send one request with a throw-away ``Client`` (see ``Client.request``)."""
    with Client(verify=verify, cert=cert) as client:
        return client.request(
            method,
            url,
            params=params,
            headers=headers,
            content=content,
            data=data,
            json=json,
            timeout=timeout,
            follow_redirects=follow_redirects,
            allow_redirects=allow_redirects,
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
    )


def post(
    url: str,
    *,
    content: RequestContent | None = None,
    data: RequestData | None = None,
    json: Any = None,
    params: ParamTypes | None = None,
    headers: RequestHeaderTypes | None = None,
    timeout: TimeoutTypes | _Unset = UNSET,
    verify: VerifyTypes = True,
    cert: CertTypes | None = None,
    follow_redirects: bool | None = None,
    allow_redirects: bool | None = None,
) -> Response:
    """Send a POST request with a throw-away ``Client``."""
    return request(
        "POST",
        url,
        content=content,
        data=data,
        json=json,
        params=params,
        headers=headers,
        timeout=timeout,
        verify=verify,
        cert=cert,
        follow_redirects=follow_redirects,
        allow_redirects=allow_redirects,
    )


def put(
    url: str,
    *,
    content: RequestContent | None = None,
    data: RequestData | None = None,
    json: Any = None,
    params: ParamTypes | None = None,
    headers: RequestHeaderTypes | None = None,
    timeout: TimeoutTypes | _Unset = UNSET,
    verify: VerifyTypes = True,
    cert: CertTypes | None = None,
    follow_redirects: bool | None = None,
    allow_redirects: bool | None = None,
) -> Response:
    """Send a PUT request with a throw-away ``Client``."""
    return request(
        "PUT",
        url,
        content=content,
        data=data,
        json=json,
        params=params,
        headers=headers,
        timeout=timeout,
        verify=verify,
        cert=cert,
        follow_redirects=follow_redirects,
        allow_redirects=allow_redirects,
    )


def patch(
    url: str,
    *,
    content: RequestContent | None = None,
    data: RequestData | None = None,
    json: Any = None,
    params: ParamTypes | None = None,
    headers: RequestHeaderTypes | None = None,
    timeout: TimeoutTypes | _Unset = UNSET,
    verify: VerifyTypes = True,
    cert: CertTypes | None = None,
    follow_redirects: bool | None = None,
    allow_redirects: bool | None = None,
) -> Response:
    """Send a PATCH request with a throw-away ``Client``."""
    return request(
        "PATCH",
        url,
        content=content,
        data=data,
        json=json,
        params=params,
        headers=headers,
        timeout=timeout,
        verify=verify,
        cert=cert,
        follow_redirects=follow_redirects,
        allow_redirects=allow_redirects,
    )
