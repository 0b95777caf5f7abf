"""``nodelay get URL``: a small curl/httpie-like command over ``nodelay.Client``.

Exit codes follow curl's for the main failures (see ``EXIT_CODES``). ``-v`` prints the
request and response heads to stderr (with the protocol version actually spoken), each
hop's ``elapsed`` as the engine measured it, and curl ``-w``-style phase timings: name
lookup, TCP connect and TLS handshake as the engine recorded them when it opened the
connection (``_core.record_connect_timings``, off unless asked for), the response head
and the end of the body as seen around the engine calls.
"""

from __future__ import annotations

import argparse
import json as _json
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeAlias

    from ._client import Client
    from ._models import Response

    Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

__all__ = ["EXIT_CODES", "add_parser", "exit_code", "main"]

EXIT_CODES = {
    "unsupported_protocol": 1,
    "malformed_url": 3,
    "couldnt_resolve_host": 6,
    "couldnt_connect": 7,
    "weird_server_reply": 8,
    "http_error": 22,
    "write_error": 23,
    "timeout": 28,
    "too_many_redirects": 47,
    "send_error": 55,
    "recv_error": 56,
    "couldnt_resolve_proxy": 5,
    "proxy": 97,
}
"""curl's exit codes (``man curl``, EXIT CODES) for the failures ``nodelay get`` reports."""

_FORM = "application/x-www-form-urlencoded"
PROGRESS_INTERVAL = 0.25
"""Seconds between two updates of the download indicator."""


def add_parser(subparsers: Subparsers) -> None:
    """Register ``nodelay get`` (``handler`` is this module's ``main``)."""
    p = subparsers.add_parser(
        "get",
        help="send one HTTP request and print the response (curl-like)",
        description="Send one HTTP request with nodelay and print the response body. "
        "Exit codes follow curl's (6 resolve, 7 connect, 28 timeout, 22 HTTP >= 400 with "
        "-f, 47 redirects, 56 receive, 1 protocol, 3 URL, 5 proxy resolve, 97 proxy).",
    )
    p.add_argument("url", help="URL to request (http:// is assumed when no scheme is given)")
    p.add_argument("-X", "--request", dest="method", metavar="METHOD", help="request method")
    p.add_argument(
        "-H",
        "--header",
        dest="headers",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="add a request header (repeatable); 'NAME:' with no value removes a default one",
    )
    p.add_argument(
        "-d",
        "--data",
        action="append",
        default=[],
        metavar="DATA",
        help="send DATA as a urlencoded body (POST); @FILE reads it from FILE; repeated -d "
        "are joined with '&'",
    )
    p.add_argument("--json", metavar="JSON", help="send JSON (POST, Content-Type application/json)")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write the body to FILE")
    p.add_argument("-I", "--head", action="store_true", help="send HEAD; print the response head")
    p.add_argument("-i", "--include", action="store_true", help="print the response head too")
    p.add_argument("-L", "--location", action="store_true", help="follow redirects")
    p.add_argument(
        "--http2", action="store_true", help="offer HTTP/2 by ALPN on https (HTTP/1.1 if declined)"
    )
    p.add_argument(
        "--http2-prior-knowledge",
        action="store_true",
        help="speak HTTP/2 without negotiation, also cleartext (h2c) on http",
    )
    p.add_argument(
        "--max-redirs",
        type=int,
        default=50,
        metavar="N",
        help="redirects to follow with -L (default: %(default)s, like curl)",
    )
    p.add_argument(
        "-f", "--fail", action="store_true", help="exit 22 (no body) for HTTP status >= 400"
    )
    p.add_argument("-m", "--max-time", type=float, metavar="SECONDS", help="total time allowed")
    p.add_argument(
        "--connect-timeout", type=float, metavar="SECONDS", help="time allowed to connect"
    )
    p.add_argument(
        "-x",
        "--proxy",
        metavar="URL",
        help="use this proxy: http://[user:password@]host:port (or https://); "
        "default: $http_proxy/$https_proxy/$all_proxy",
    )
    p.add_argument(
        "--noproxy",
        metavar="LIST",
        help="hosts that go direct (NO_PROXY syntax: domains, *, IPs, CIDRs); overrides $no_proxy",
    )
    p.add_argument("-s", "--silent", action="store_true", help="no progress, no error messages")
    p.add_argument("-v", "--verbose", action="store_true", help="print heads and timings to stderr")
    p.set_defaults(handler=main)


def _with_scheme(url: str) -> str:
    return url if "://" in url else f"http://{url}"


def _header_pairs(values: list[str]) -> dict[str, str | None]:
    headers: dict[str, str | None] = {}
    for value in values:
        name, sep, rest = value.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"bad header {value!r}: expected 'Name: value'")
        rest = rest.strip()
        headers[name.strip()] = rest if rest else None
    return headers


def _data_body(values: list[str]) -> bytes:
    parts = []
    for value in values:
        if value.startswith("@"):
            source = value[1:]
            raw = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
            parts.append(raw.replace(b"\r", b"").replace(b"\n", b""))  # like curl -d @file
        else:
            parts.append(value.encode("utf-8"))
    return b"&".join(parts)


def exit_code(exc: BaseException) -> int:
    """curl's exit code for a nodelay exception."""
    from . import _exceptions as e

    if isinstance(exc, e.InvalidURL):
        return EXIT_CODES["malformed_url"]
    if isinstance(exc, e.UnsupportedProtocol):
        return EXIT_CODES["unsupported_protocol"]
    if isinstance(exc, e.ProxyError):
        # "proxy URL: failed to resolve ..." / "...: failed to connect ..." / a refusal.
        if "failed to resolve" in str(exc):
            return EXIT_CODES["couldnt_resolve_proxy"]
        if "failed to connect" in str(exc):
            return EXIT_CODES["couldnt_connect"]
        return EXIT_CODES["proxy"]
    if isinstance(exc, e.TooManyRedirects):
        return EXIT_CODES["too_many_redirects"]
    if isinstance(exc, e.TimeoutException):
        return EXIT_CODES["timeout"]
    if isinstance(exc, e.ConnectError):
        # The engine says "failed to resolve HOST" for DNS failures (no subclass yet).
        if "resolve" in str(exc):
            return EXIT_CODES["couldnt_resolve_host"]
        return EXIT_CODES["couldnt_connect"]
    if isinstance(exc, e.WriteError):
        return EXIT_CODES["send_error"]
    if isinstance(exc, e.ReadError | e.RemoteProtocolError):
        return EXIT_CODES["recv_error"]
    return 1


def _proxy_option(args: argparse.Namespace) -> dict[str, str | None] | None:
    """``proxy=`` for ``-x``/``--noproxy`` (curl: ``--noproxy`` also applies to ``-x``, and
    overrides ``$no_proxy``); ``None`` leaves the environment in charge."""
    if args.proxy is None and args.noproxy is None:
        return None
    if args.proxy is not None:
        return {"all": args.proxy, "no_proxy": args.noproxy}
    from ._proxy import engine_proxy_options

    env = engine_proxy_options(None, trust_env=True)
    return {
        "http": env.get("http_proxy"),
        "https": env.get("https_proxy"),
        "no_proxy": args.noproxy,
    }


def _head_lines(response: Response) -> list[str]:
    lines = [f"{response.http_version} {response.status_code} {response.reason_phrase}"]
    lines += [f"{name}: {value}" for name, value in response.headers.multi_items()]
    return lines


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


class _Indicator:
    """A download indicator on stderr while the body arrives.

    The engine returns the body in one piece (no streaming API yet), so the bytes received
    so far are unknown: the indicator shows the elapsed time, and the final line the size
    and rate. It runs only when stderr is a terminal.
    """

    def __init__(self, target: str, err: IO[str]) -> None:
        self.target = target
        self.err = err
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.start = time.perf_counter()

    def _run(self) -> None:
        spinner = "|/-\\"
        i = 0
        while not self.stop.wait(PROGRESS_INTERVAL):
            elapsed = time.perf_counter() - self.start
            self.err.write(f"\r{spinner[i % 4]} downloading {self.target}  {elapsed:6.1f} s")
            self.err.flush()
            i += 1

    def __enter__(self) -> _Indicator:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=1.0)
        self.err.write("\r\033[K")


class _Phases:
    """When the phases of one ``nodelay get`` ended, in seconds from its start (curl's
    ``-w`` variables): the connect phases come from the engine's record of the last
    connection it opened (``None`` when every hop reused one)."""

    def __init__(self) -> None:
        self.connect: tuple[float | None, float, float | None] | None = None
        self.head = 0.0
        self.total = 0.0

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


def _send(client: Client, args: argparse.Namespace, url: str, stream: bool = False) -> Response:
    headers = _header_pairs(args.headers)
    kwargs: dict[str, Any] = {}
    method = args.method
    if args.json is not None:
        _json.loads(args.json)  # refuse invalid JSON before sending
        kwargs["content"] = args.json.encode("utf-8")
        lower = {k.lower() for k in headers}
        if "content-type" not in lower:
            headers["Content-Type"] = "application/json"
        if "accept" not in lower:
            headers["Accept"] = "application/json"
        method = method or "POST"
    elif args.data:
        kwargs["content"] = _data_body(args.data)
        if "content-type" not in {k.lower() for k in headers}:
            headers["Content-Type"] = _FORM
        method = method or "POST"
    if args.head:
        method = "HEAD"
    kwargs["headers"] = headers or None
    response: Response = client.request((method or "GET").upper(), url, stream=stream, **kwargs)
    return response


def _timed_send(client: Client, args: argparse.Namespace, url: str, phases: _Phases) -> Response:
    """``_send`` with the phases recorded: the engine returns at the response head when
    streaming, then the body is read."""
    from . import _core

    _core.record_connect_timings(True)
    _core.take_connect_timings()  # forget any earlier connect
    start = time.perf_counter()
    try:
        response = _send(client, args, url, stream=True)
        phases.head = time.perf_counter() - start
        response.read()
        phases.total = time.perf_counter() - start
        phases.connect = _core.take_connect_timings()
    finally:
        _core.record_connect_timings(False)
    return response


def main(args: argparse.Namespace) -> int:
    """Run ``nodelay get`` with parsed arguments; returns curl's exit code."""
    from . import _exceptions as e
    from ._client import Client
    from ._config import Timeout

    out = sys.stdout.buffer
    err = sys.stderr
    url = _with_scheme(args.url)

    def fail(code: int, message: str) -> int:
        if not args.silent:
            err.write(f"nodelay: ({code}) {message}\n")
        return code

    total = args.max_time
    timeout = Timeout(
        connect=args.connect_timeout if args.connect_timeout is not None else 10.0,
        read=total if total is not None else 30.0,
        write=total if total is not None else 30.0,
        pool=total if total is not None else 30.0,
        total=total,
    )
    show_indicator = args.output is not None and not args.silent and err.isatty()
    try:
        with Client(
            timeout=timeout,
            follow_redirects=args.location,
            max_redirects=args.max_redirs,
            proxy=_proxy_option(args),
            http2="prior_knowledge" if args.http2_prior_knowledge else args.http2,
        ) as client:
            phases = _Phases()
            send = _timed_send if args.verbose else lambda c, a, u, _: _send(c, a, u)
            t0 = time.perf_counter()
            if show_indicator:
                with _Indicator(url, err):
                    response = send(client, args, url, phases)
            else:
                response = send(client, args, url, phases)
            wall = time.perf_counter() - t0
    except (e.HTTPError, e.InvalidURL) as exc:  # first: timeouts are also OSErrors
        return fail(exit_code(exc), str(exc))
    except ValueError as exc:
        if isinstance(exc, _json.JSONDecodeError):
            return fail(2, f"--json is not valid JSON: {exc}")
        return fail(2, str(exc))
    except OSError as exc:  # -d @FILE that cannot be read (curl's 26)
        return fail(26, f"cannot read data: {exc}")
    if args.verbose:
        for hop in [*response.history, response]:
            _print_request(hop, err)
            for line in _head_lines(hop):
                err.write(f"< {line}\n")
            err.write("<\n")
            err.write(
                f"* elapsed {hop.elapsed.total_seconds() * 1000:.3f} ms "
                "(request start to end of body, measured by the engine)\n"
            )
        err.write(f"* {response.http_version}; timings from the start of the request:\n")
        for line in phases.lines():
            err.write(line + "\n")
    if args.fail and response.status_code >= 400:
        return fail(
            EXIT_CODES["http_error"],
            f"The requested URL returned error: {response.status_code}",
        )
    head = ("\r\n".join(_head_lines(response)) + "\r\n\r\n").encode("latin-1")
    if args.head:
        out.write(head)
        out.flush()
        return 0
    body = response.content
    try:
        if args.output is not None:
            if args.include:
                body = head + body
            args.output.write_bytes(body)
            if not args.silent and err.isatty():
                rate = len(body) / wall / 1e6 if wall > 0 else 0.0
                err.write(
                    f"saved {len(body):,} bytes to {args.output} in {wall:.3f} s "
                    f"({rate:,.1f} MB/s)\n"
                )
        else:
            if args.include:
                out.write(head)
            out.write(body)
            out.flush()
    except OSError as exc:
        return fail(EXIT_CODES["write_error"], f"failed writing the body: {exc}")
    return 0


def run(argv: list[str] | None = None) -> int:
    """``python -m nodelay._get URL ...`` (until ``nodelay get`` is registered)."""
    parser = argparse.ArgumentParser(prog="nodelay")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["get", *(sys.argv[1:] if argv is None else argv)])
    handler: Any = args.handler
    return int(handler(args))


if __name__ == "__main__":
    raise SystemExit(run())
