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
    from collections.abc import Callable
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
    p.add_argument(
        "-F",
        "--form",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="send a multipart/form-data field (POST, repeatable); NAME=@FILE uploads FILE, "
        "NAME=@FILE;type=MIME with its type",
    )
    p.add_argument(
        "-u", "--user", metavar="USER:PASSWORD", help="Basic credentials for this origin"
    )
    p.add_argument("-A", "--user-agent", metavar="NAME", help="the User-Agent to send")
    p.add_argument("-e", "--referer", metavar="URL", help="the Referer to send")
    p.add_argument(
        "-b",
        "--cookie",
        metavar="DATA|FILE",
        help="send cookies: 'NAME=VALUE; NAME2=VALUE2', or the ones of a cookie file "
        "(Netscape format, as curl -c and nodelay -c write it)",
    )
    p.add_argument(
        "-c",
        "--cookie-jar",
        type=Path,
        metavar="FILE",
        help="write all cookies to FILE after the transfer (Netscape format, curl -b reads it)",
    )
    p.add_argument(
        "-k", "--insecure", action="store_true", help="do not verify the server's certificate"
    )
    p.add_argument(
        "--cacert",
        type=Path,
        metavar="FILE",
        help="trust the CA certificates of this PEM file instead of the system store",
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


def _form_fields(
    values: list[str],
) -> tuple[dict[str, str], dict[str, tuple[str, IO[bytes], str | None]]]:
    """``-F`` values as ``data=`` fields and ``files=`` (``NAME=@FILE[;type=MIME]``);
    the files stay open until the process ends (one request)."""
    data: dict[str, str] = {}
    files: dict[str, tuple[str, IO[bytes], str | None]] = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name:
            raise ValueError(f"bad -F {value!r}: expected NAME=VALUE or NAME=@FILE")
        if rest.startswith("@"):
            path, _, mime = rest[1:].partition(";type=")
            files[name] = (Path(path).name, Path(path).open("rb"), mime or None)
        else:
            data[name] = rest
    return data, files


def _cookie_option(value: str | None) -> Any:
    """``-b``: a ``CookieJar`` loaded from a file, or the cookies of a ``NAME=VALUE; ...``
    string (curl tells them apart by the ``=``)."""
    if value is None:
        return None
    if "=" not in value:
        from ._cookies import CookieJar

        return CookieJar.load(value)
    pairs = (part.strip().partition("=") for part in value.split(";") if part.strip())
    return {name.strip(): v.strip() for name, _, v in pairs}


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
    """A download indicator on stderr while ``-o`` writes the body: bytes so far (of the
    Content-Length when known) and the rate. It runs only when stderr is a terminal."""

    def __init__(self, target: str, err: IO[str]) -> None:
        self.target = target
        self.err = err
        self.received = 0
        self.expected: int | None = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.start = time.perf_counter()

    def _run(self) -> None:
        spinner = "|/-\\"
        i = 0
        while not self.stop.wait(PROGRESS_INTERVAL):
            elapsed = time.perf_counter() - self.start
            got = self.received
            of = f" of {self.expected:,}" if self.expected else ""
            rate = got / elapsed / 1e6 if elapsed > 0 else 0.0
            self.err.write(
                f"\r{spinner[i % 4]} {self.target}  {got:,}{of} bytes  {rate:,.1f} MB/s"
                f"  {elapsed:6.1f} s"
            )
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
    elif args.form:
        kwargs["data"], kwargs["files"] = _form_fields(args.form)
        method = method or "POST"
    lower = {k.lower() for k in headers}
    for name, value in (("User-Agent", args.user_agent), ("Referer", args.referer)):
        if value is not None and name.lower() not in lower:
            headers[name] = value
    if args.user is not None:
        user, _, password = args.user.partition(":")
        kwargs["auth"] = (user, password)
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
    try:
        if args.form and (args.data or args.json is not None):
            raise ValueError("-F cannot be combined with -d or --json")
        with Client(
            timeout=timeout,
            follow_redirects=args.location,
            max_redirects=args.max_redirs,
            proxy=_proxy_option(args),
            http2="prior_knowledge" if args.http2_prior_knowledge else args.http2,
            verify=False if args.insecure else (str(args.cacert) if args.cacert else True),
            cookies=_cookie_option(args.cookie),
        ) as client:
            phases = _Phases()
            if args.verbose:
                response = _timed_send(client, args, url, phases)
            else:
                # The body goes to stdout or the -o file as it arrives (a large
                # download is never held in memory, an event stream shows as it
                # comes); it is read after the status is checked.
                response = _send(client, args, url, stream=True)
            if args.verbose:
                _print_verbose(response, phases, err)
            code = _deliver(response, args, out, err, fail)
            if args.cookie_jar is not None:
                client.cookies.save(args.cookie_jar)
            return code
    except (e.HTTPError, e.InvalidURL) as exc:  # first: timeouts are also OSErrors
        return fail(exit_code(exc), str(exc))
    except ValueError as exc:
        if isinstance(exc, _json.JSONDecodeError):
            return fail(2, f"--json is not valid JSON: {exc}")
        return fail(2, str(exc))
    except _WriteFailed as exc:
        return fail(EXIT_CODES["write_error"], f"failed writing the body: {exc.__cause__}")
    except OSError as exc:  # -d @FILE, -F NAME=@FILE, -b FILE that cannot be read
        return fail(26, f"cannot read a file: {exc}")


class _WriteFailed(Exception):
    """The body could not be written (curl's exit code 23); the OSError is its cause."""


def _print_verbose(response: Response, phases: _Phases, err: IO[str]) -> None:
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


def _deliver(
    response: Response,
    args: argparse.Namespace,
    out: IO[bytes],
    err: IO[str],
    fail: Callable[[int, str], int],
) -> int:
    """Check ``-f``, then print the head and/or body, or write them to ``-o``."""
    if args.fail and response.status_code >= 400:
        response.close()
        return fail(
            EXIT_CODES["http_error"],
            f"The requested URL returned error: {response.status_code}",
        )
    head = ("\r\n".join(_head_lines(response)) + "\r\n\r\n").encode("latin-1")
    if args.head:
        out.write(head)
        out.flush()
        return 0
    if args.output is not None:
        _save(response, args.output, head if args.include else b"", args.silent, err)
        return 0
    if args.include:
        _write(out, head, response)
    # Only stdout's own errors are write errors: a read of the body raises nodelay's
    # exceptions (a ReadTimeout is an OSError too).
    for chunk in response.iter_bytes():
        _write(out, chunk, response)
    return 0


def _write(out: IO[bytes], data: bytes, response: Response) -> None:
    """``data`` to stdout at once (a pipe sees an event stream as it comes)."""
    try:
        out.write(data)
        out.flush()
    except OSError as exc:  # a closed pipe (| head), a full disk: curl's 23
        response.close()
        raise _WriteFailed() from exc


def _save(response: Response, path: Path, head: bytes, silent: bool, err: IO[str]) -> None:
    """Write ``head`` and the body to ``path`` as the body arrives (with a download
    indicator on a terminal), then a summary line."""
    from contextlib import nullcontext

    show = not silent and err.isatty()
    indicator = _Indicator(str(response.url), err)
    length = response.headers.get("content-length")
    indicator.expected = int(length) if length and length.isdigit() else None
    written = 0
    try:
        f = path.open("wb")
        f.write(head)
    except OSError as exc:
        response.close()
        raise _WriteFailed() from exc
    # Only the file's own errors are write errors: a read of the body raises nodelay's
    # exceptions (a ReadTimeout is an OSError too).
    with f, indicator if show else nullcontext():
        for chunk in response.iter_bytes():
            try:
                f.write(chunk)
            except OSError as exc:
                response.close()
                raise _WriteFailed() from exc
            written += len(chunk)
            indicator.received = written
    if show:
        wall = time.perf_counter() - indicator.start
        rate = written / wall / 1e6 if wall > 0 else 0.0
        err.write(f"saved {written:,} bytes to {path} in {wall:.3f} s ({rate:,.1f} MB/s)\n")


def run(argv: list[str] | None = None) -> int:
    """``python -m nodelay._get URL ...`` (until ``nodelay get`` is registered)."""
    parser = argparse.ArgumentParser(prog="nodelay")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["get", *(sys.argv[1:] if argv is None else argv)])
    handler: Any = args.handler
    return int(handler(args))


if __name__ == "__main__":
    raise SystemExit(run())
