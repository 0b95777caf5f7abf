"""``nodelay get -v``: the request and response heads on stderr, each hop's ``elapsed``
as the engine measured it, and curl ``-w``-style phase timings.

Name lookup, TCP connect and TLS handshake come from the engine's record of the
connection it opened (``_core.record_connect_timings``, off unless asked for); the
response head and the end of the body are timed around the engine calls (``Phases``).
"""

from __future__ import annotations

from typing import IO
from urllib.parse import urlsplit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._models import Response

__all__ = ["Phases", "head_bytes", "print_verbose"]


def head_lines(response: Response) -> list[str]:
    """A response head as curl prints it: the status line (HTTP/2 has no reason phrase,
    RFC 9113 §8.3.2, and curl leaves a space where it would be), then the headers as
    received."""
    reason = "" if response.http_version == "HTTP/2" else response.reason_phrase
    lines = [f"{response.http_version} {response.status_code} {reason}"]
    lines += [f"{name}: {value}" for name, value in response.headers.multi_items()]
    return lines


def head_bytes(response: Response) -> bytes:
    """``head_lines`` with CRLF line ends and the blank line, as ``-i`` and ``-D`` write."""
    return ("\r\n".join(head_lines(response)) + "\r\n\r\n").encode("latin-1")


class Phases:
    """When the phases of one ``nodelay get`` ended, in seconds from its start (curl's
    ``-w`` variables): the connect phases come from the engine's record of the last
    connection it opened (``None`` when every hop reused one)."""

    def __init__(self) -> None:
        self.connect: tuple[float | None, float, float | None] | None = None
        self.head = 0.0
        self.total = 0.0

    def connect_times(self) -> tuple[float, float, float]:
        """curl's ``time_namelookup``, ``time_connect`` and ``time_appconnect`` (each from
        the start; 0 for a phase that did not happen)."""
        if self.connect is None:
            return 0.0, 0.0, 0.0
        dns, tcp, tls = self.connect
        lookup = dns or 0.0
        return lookup, lookup + tcp, (lookup + tcp + tls) if tls is not None else 0.0

    def lines(self) -> list[str]:
        rows: list[tuple[str, float, str]] = []
        if self.connect is None:
            rows.append(("connect", 0.0, "no new connection: a pooled one was reused"))
        else:
            dns, tcp, tls = self.connect
            lookup = dns or 0.0
            if dns is not None:
                rows.append(("namelookup", dns, "name resolved"))
            rows.append(
                (
                    "connect",
                    lookup + tcp,
                    "TCP connected" + ("" if dns is not None else ", name lookup included"),
                )
            )
            if tls is not None:
                rows.append(("appconnect", lookup + tcp + tls, "TLS handshake done"))
        rows.append(("starttransfer", self.head, "response head received"))
        rows.append(("total", self.total, "body received"))
        return [f"* {name:<14}{at * 1000:10.3f} ms  ({what})" for name, at, what in rows]


def _print_request(response: Response, err: IO[str]) -> None:
    req = response.request
    if req is None:
        return
    parts = urlsplit(str(req.url))
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    # The request went out in the version its response came back in (ALPN or h2c).
    err.write(f"> {req.method} {target} {response.http_version}\n")
    names = {name.lower() for name, _ in req.headers.multi_items()}
    if "host" not in names:
        err.write(f"> Host: {parts.netloc}\n")  # added by the engine
    for name, value in req.headers.multi_items():
        err.write(f"> {name}: {value}\n")
    body = req.content
    if body and "content-length" not in names:
        err.write(f"> Content-Length: {len(body)}\n")  # added by the engine
    err.write(">\n")


def print_verbose(response: Response, phases: Phases, err: IO[str]) -> None:
    """Every hop's request and response heads and ``elapsed``, then the phase timings."""
    for hop in [*response.history, response]:
        _print_request(hop, err)
        for line in head_lines(hop):
            err.write(f"< {line}\n")
        err.write("<\n")
        err.write(
            f"* elapsed {hop.elapsed.total_seconds() * 1000:.3f} ms "
            "(request start to end of body, measured by the engine)\n"
        )
    err.write(f"* {response.http_version}; timings from the start of the request:\n")
    for line in phases.lines():
        err.write(line + "\n")
