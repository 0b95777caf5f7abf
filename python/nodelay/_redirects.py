"""The rules of one redirect, without I/O: which statuses redirect, and the request a
redirect asks for (``next_hop``). ``_flow.redirect_flow`` follows a chain of them;
``Response.next_request`` builds the next one.

Below the models: it works on methods, URLs and header pairs, not on ``Request`` or
``Response``.
"""

from __future__ import annotations

from ._prepare import origin, without

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._prepare import Pairs
    from ._upload import Body

__all__ = ["PERMANENT_REDIRECT_STATUSES", "REDIRECT_STATUSES", "next_hop"]

REDIRECT_STATUSES = frozenset((301, 302, 303, 307, 308))
# requests' ``Response.is_permanent_redirect``: the redirects a client may remember.
PERMANENT_REDIRECT_STATUSES = frozenset((301, 308))
# Dropped when a redirect turns the request into a body-less GET.
_BODY_HEADERS = frozenset(("content-type", "content-length", "transfer-encoding"))
# Dropped for good once a redirect leaves the origin (docs/hostile.md, E.22). Host is
# recomputed by the engine for the new origin.
_ORIGIN_HEADERS = frozenset(("authorization", "proxy-authorization", "cookie", "host"))


def next_hop(
    status: int, method: str, url: str, location: str, pairs: Pairs, body: Body | None
) -> tuple[str, str, Pairs, Body | None, bool]:
    """The request a redirect asks for: ``(method, url, headers, body, leaves)``. A 303
    (but for HEAD), or a 301/302 answering a POST, becomes a body-less GET; leaving the
    origin (``leaves``) drops the credentials, the cookies and ``Host``. Used by
    ``redirect_flow`` and ``Response.next_request``."""
    from urllib.parse import urljoin

    next_url = urljoin(url, location.strip()).partition("#")[0]
    if (status == 303 and method != "HEAD") or (status in (301, 302) and method == "POST"):
        method = "GET"
        body = None
        pairs = without(pairs, _BODY_HEADERS)
    leaves = origin(next_url) != origin(url) or origin(url) is None
    if leaves:
        pairs = without(pairs, _ORIGIN_HEADERS)
    return method, next_url, pairs, body, leaves
