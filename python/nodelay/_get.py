"""``nodelay get URL`` (or ``nodelay URL``): curl's command line over ``nodelay.Client``.

Options are curl's, spelled as curl spells them (bundled short flags like ``-fsSL``
included), with curl's meaning and exit codes (``_get_exit``); tests/test_cli_curl.py
runs curl beside each with the same arguments against the same server. The request body
comes from ``_get_body``, output goes through ``_get_output`` (with the progress meter of
``_get_progress`` on a terminal), ``-w`` is ``_get_writeout`` and ``-v`` ``_get_verbose``.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import IO, Any, NamedTuple

from . import _get_body as body
from ._get_exit import EXIT_CODES, exit_code
from ._get_output import STDOUT, Sink, WriteFailed, remote_name
from ._get_verbose import Phases, head_bytes, print_verbose
from ._get_writeout import Transfer, read_format, write_out

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeAlias

    from ._client import Client
    from ._models import Response

    Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

__all__ = ["EXIT_CODES", "add_parser", "exit_code", "main"]

_FORM = "application/x-www-form-urlencoded"
_JSON = "application/json"

RETRY_FIRST_DELAY = 1
"""Seconds before the first ``--retry`` when ``--retry-delay`` is not given; each next
wait doubles (curl's backoff)."""

RETRY_MAX_DELAY = 600
"""Longest wait between two retries, in seconds (curl's ``RETRY_SLEEP_MAX``, 10 minutes)."""

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
"""The statuses ``--retry`` takes for transient (curl's list)."""


def add_parser(subparsers: Subparsers) -> None:
    """Register ``nodelay get`` (``handler`` is this module's ``main``)."""
    p = subparsers.add_parser(
        "get",
        help="send one HTTP request and print the response (curl's options; `nodelay URL` "
        "is the same)",
        description="Send one HTTP request with nodelay and print the response body, with "
        "curl's options and exit codes (6 resolve, 7 connect, 18 partial body, 22 HTTP >= "
        "400 with -f, 23 write, 26 read, 28 timeout, 35 TLS, 47 redirects, 52 empty reply, "
        "56 receive, 60 certificate, 1 protocol, 3 URL, 5 proxy resolve, 97 proxy).",
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
    _data_option(
        p,
        ("-d", "--data", "--data-ascii"),
        body.data_ascii,
        "send DATA urlencoded (POST); @FILE reads FILE without its line ends; every data "
        "option adds a part, joined with '&'",
    )
    _data_option(p, ("--data-binary",), body.data_binary, "like -d, @FILE read as it is")
    _data_option(p, ("--data-raw",), body.data_raw, "like -d, with no @FILE")
    _data_option(
        p,
        ("--data-urlencode",),
        body.data_urlencode,
        "like -d, percent-encoded: CONTENT, NAME=CONTENT, @FILE or NAME@FILE",
    )
    p.add_argument(
        "-G", "--get", dest="get", action="store_true", help="send the data in the URL's query"
    )
    p.add_argument(
        "--json",
        action="append",
        default=[],
        metavar="JSON",
        help="send JSON (POST, Content-Type and Accept application/json); @FILE reads FILE",
    )
    p.add_argument(
        "-o", "--output", metavar="FILE", help="write the body to FILE ('-': standard output)"
    )
    p.add_argument(
        "-O",
        "--remote-name",
        action="store_true",
        help="write the body to a file named as the URL's path ends",
    )
    p.add_argument(
        "-D",
        "--dump-header",
        metavar="FILE",
        help="write the response heads to FILE ('-': standard output)",
    )
    p.add_argument(
        "-w",
        "--write-out",
        metavar="FORMAT",
        help="print FORMAT after the transfer: %%{http_code}, %%{size_download}, "
        "%%{time_total}, %%{url_effective}, %%{content_type}, %%{num_redirects}, "
        "%%header{NAME}... (curl's); @FILE reads it from FILE",
    )
    p.add_argument("-I", "--head", action="store_true", help="send HEAD; print the response head")
    p.add_argument("-i", "--include", action="store_true", help="print the response heads too")
    p.add_argument("-L", "--location", action="store_true", help="follow redirects")
    p.add_argument(
        "--compressed",
        action="store_true",
        help="ask for a compressed response (Accept-Encoding) and decompress it; without "
        "it the body is written as received",
    )
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
        "-f",
        "--fail",
        action="store_true",
        help="exit 22 (heads with -i or -D, no body) for HTTP status >= 400",
    )
    p.add_argument("-m", "--max-time", type=float, metavar="SECONDS", help="total time allowed")
    p.add_argument(
        "--connect-timeout", type=float, metavar="SECONDS", help="time allowed to connect"
    )
    p.add_argument(
        "--retry",
        type=int,
        default=0,
        metavar="N",
        help="retry up to N times after a timeout, a name that did not resolve, or status "
        "408, 429, 500, 502, 503 or 504; waits 1 s, then twice as long each time",
    )
    p.add_argument(
        "--retry-delay", type=int, default=0, metavar="SECONDS", help="wait this long instead"
    )
    p.add_argument(
        "--retry-max-time",
        type=int,
        default=0,
        metavar="SECONDS",
        help="start no retry after this long",
    )
    p.add_argument(
        "--retry-connrefused",
        action="store_true",
        help="with --retry, also retry a refused connection",
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
        metavar="FILE",
        help="write all cookies to FILE after the transfer (Netscape format, curl -b reads it)",
    )
    p.add_argument(
        "-k", "--insecure", action="store_true", help="do not verify the server's certificate"
    )
    p.add_argument(
        "--cacert",
        metavar="FILE",
        help="trust the CA certificates of this PEM file instead of the system store",
    )
    p.add_argument(
        "-s", "--silent", action="store_true", help="no progress meter, no error messages"
    )
    p.add_argument(
        "-S", "--show-error", action="store_true", help="with -s, still print error messages"
    )
    p.add_argument(
        "--no-progress-meter", action="store_true", help="no progress meter (errors still shown)"
    )
    p.add_argument("-v", "--verbose", action="store_true", help="print heads and timings to stderr")
    p.set_defaults(handler=main)


def _data_option(
    p: argparse.ArgumentParser,
    names: tuple[str, ...],
    kind: Callable[[str], body.DataPart],
    text: str,
) -> None:
    """One of the data options: each adds a ``DataPart`` to ``data``, in command-line
    order."""
    p.add_argument(
        *names, dest="data", action="append", default=[], type=kind, metavar="DATA", help=text
    )


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


class _Request(NamedTuple):
    """The request the options describe, built once (files read once) for every attempt."""

    method: str
    url: str
    options: dict[str, Any]


def _request(args: argparse.Namespace, url: str) -> _Request:
    """Method, URL and ``Client.request`` keywords from the options; ``ValueError`` for
    options that contradict each other, ``OSError`` for a file that cannot be read."""
    if args.form and (args.data or args.json):
        raise ValueError("-F cannot be combined with -d or --json")
    if args.data and args.json:
        raise ValueError("--json cannot be combined with -d and its kin")
    headers = _header_pairs(args.headers)
    lower = {k.lower() for k in headers}
    options: dict[str, Any] = {}
    method = args.method
    if args.json:
        options["content"] = body.join_json(args.json)
        for name in ("Content-Type", "Accept"):
            if name.lower() not in lower:
                headers[name] = _JSON
        method = method or "POST"
    elif args.data and args.get:
        url = body.with_query(url, body.join_data(args.data))
    elif args.data:
        options["content"] = body.join_data(args.data)
        if "content-type" not in lower:
            headers["Content-Type"] = _FORM
        method = method or "POST"
    elif args.form:
        options["data"], options["files"] = body.form_fields(args.form)
        method = method or "POST"
    for name, value in (("User-Agent", args.user_agent), ("Referer", args.referer)):
        if value is not None and name.lower() not in lower:
            headers[name] = value
    if not args.compressed and "accept-encoding" not in lower:
        # curl asks for no content coding unless told to, and writes what comes.
        headers["Accept-Encoding"] = None
    if args.user is not None:
        user, _, password = args.user.partition(":")
        options["auth"] = (user, password)
    if args.head:
        method = "HEAD"
    options["headers"] = headers
    return _Request((method or "GET").upper(), url, options)


def _client(args: argparse.Namespace) -> Client:
    from ._client import Client
    from ._config import DEFAULT_CONNECT_TIMEOUT, UNSET, Timeout

    # ``-m`` bounds every wait but the connect; without it, the client defaults.
    total = args.max_time
    connect = args.connect_timeout
    timeout = Timeout(
        UNSET if total is None else total,
        connect=DEFAULT_CONNECT_TIMEOUT if connect is None else connect,
        total=total,
    )
    return Client(
        timeout=timeout,
        follow_redirects=args.location,
        max_redirects=args.max_redirs,
        proxy=_proxy_option(args),
        http2="prior_knowledge" if args.http2_prior_knowledge else args.http2,
        verify=False if args.insecure else (args.cacert or True),
        cookies=_cookie_option(args.cookie),
    )


class _Outputs(NamedTuple):
    """Where the body, the heads of ``-i`` and the heads of ``-D`` go."""

    body: Sink
    dump: Sink | None
    show_meter: bool


def _outputs(args: argparse.Namespace, url: str, err: IO[str]) -> _Outputs:
    target = args.output if args.output is not None else STDOUT
    if args.output is None and args.remote_name:
        target = remote_name(url)
    sink = Sink(target)
    quiet = args.silent or args.no_progress_meter or args.verbose
    # curl's rule: a meter on a terminal's stderr, unless the body goes to the terminal.
    show = not quiet and err.isatty() and not (sink.is_stdout and sys.stdout.isatty())
    return _Outputs(sink, Sink(args.dump_header) if args.dump_header else None, show)


def _write_body(response: Response, args: argparse.Namespace, outputs: _Outputs) -> None:
    """The body to its sink as it arrives (a large download is never held in memory, an
    event stream shows as it comes); decompressed only with ``--compressed``."""
    from contextlib import nullcontext

    from ._get_progress import Meter

    chunks = response.iter_bytes() if args.compressed else response.iter_raw()
    length = response.headers.get("content-length")
    expected = int(length) if length and length.isdigit() else None
    meter = Meter(sys.stderr, expected) if outputs.show_meter else None
    with meter if meter is not None else nullcontext():
        for chunk in chunks:
            try:
                outputs.body.write(chunk)
            except WriteFailed:
                response.close()
                raise
            if meter is not None:
                meter.received = response.num_bytes_downloaded


def _attempt(
    client: Client,
    request: _Request,
    args: argparse.Namespace,
    outputs: _Outputs,
    transfer: Transfer,
) -> int:
    """One transfer: send, write heads and body; returns 0, or 22 for ``-f`` on a status
    >= 400 (the engine's exceptions propagate)."""
    from . import _core

    timed = args.verbose or args.write_out is not None
    phases = Phases()
    if timed:
        _core.record_connect_timings(True)
        _core.take_connect_timings()  # forget any earlier connect
    start = time.perf_counter()
    try:
        response = client.request(request.method, request.url, stream=True, **request.options)
        phases.head = time.perf_counter() - start
        transfer.response = response
        transfer.hops = [*response.history, response]
        heads = b"".join(head_bytes(hop) for hop in transfer.hops)
        if outputs.dump is not None:
            outputs.dump.write(heads)  # every attempt's heads, as curl keeps them
        if args.include or args.head:
            outputs.body.write(heads)
        failed = args.fail and response.status_code >= 400
        if failed:
            response.close()
        else:
            _write_body(response, args, outputs)
            outputs.body.finish()
        phases.total = time.perf_counter() - start
        if timed:
            phases.connect = _core.take_connect_timings()
    finally:
        if timed:
            _core.record_connect_timings(False)
        transfer.time_total = time.perf_counter() - start
        outputs.body.close()
    transfer.size_download = response.num_bytes_downloaded
    transfer.time_starttransfer = phases.head
    lookup, connect, tls = phases.connect_times()
    transfer.time_namelookup, transfer.time_connect, transfer.time_appconnect = (
        lookup,
        connect,
        tls,
    )
    if args.verbose:
        print_verbose(response, phases, sys.stderr)
    if failed:
        transfer.errormsg = f"The requested URL returned error: {response.status_code}"
        return EXIT_CODES["http_error"]
    return 0


def _transient(code: int, transfer: Transfer, args: argparse.Namespace) -> str | None:
    """What makes this outcome worth a retry, in curl's words, or ``None``."""
    if code in (EXIT_CODES["timeout"], EXIT_CODES["couldnt_resolve_host"]):
        return ": timeout"
    if code == EXIT_CODES["couldnt_connect"] and args.retry_connrefused:
        return ": connection refused"
    response = transfer.response
    if code in (0, EXIT_CODES["http_error"]) and response is not None:
        if response.status_code in RETRY_STATUSES:
            return ": HTTP error"
    return None


def _retry_after(transfer: Transfer) -> int:
    """The response's ``Retry-After`` in whole seconds (0: none or a date)."""
    value = transfer.response.headers.get("retry-after") if transfer.response else None
    return int(value) if value is not None and value.strip().isdigit() else 0


def main(args: argparse.Namespace) -> int:
    """Run ``nodelay get`` with parsed arguments; returns curl's exit code."""
    from . import _exceptions as e

    err = sys.stderr
    show_errors = not args.silent or args.show_error
    url = _with_scheme(args.url)
    transfer = Transfer(url=url, filename=args.output or "")

    def fail(code: int, message: str) -> int:
        transfer.exitcode, transfer.errormsg = code, message
        if show_errors:
            err.write(f"nodelay: ({code}) {message}\n")
        return code

    def warn(message: str) -> None:
        if not args.silent:
            err.write(f"Warning: {message}\n")

    fmt: str | None = None
    try:
        fmt = read_format(args.write_out) if args.write_out is not None else None
        request = _request(args, url)
        outputs = _outputs(args, url, err)
        transfer.filename = "" if outputs.body.is_stdout else outputs.body.target
        transfer.size_upload = len(request.options.get("content") or b"")
        try:
            with _client(args) as client:
                code = _with_retries(client, request, args, outputs, transfer, fail, warn)
                if args.cookie_jar is not None:
                    client.cookies.save(args.cookie_jar)
        finally:
            if outputs.dump is not None:
                outputs.dump.close()
    except ValueError as exc:
        code = fail(2, str(exc))
    except WriteFailed as exc:
        code = fail(EXIT_CODES["write_error"], f"failed writing the body: {exc}")
    except e.InvalidURL as exc:  # an OSError-free failure of the URL itself
        code = fail(exit_code(exc), str(exc))
    except OSError as exc:  # -d @FILE, -F NAME=@FILE, -b FILE, -w @FILE that cannot be read
        code = fail(EXIT_CODES["read_error"], f"cannot read a file: {exc}")
    if fmt is not None:

        def complain(message: str) -> None:  # curl prints these even with -s
            err.write(f"nodelay: {message}\n")

        write_out(fmt, transfer, sys.stdout, err, complain)
    return code


def _with_retries(
    client: Client,
    request: _Request,
    args: argparse.Namespace,
    outputs: _Outputs,
    transfer: Transfer,
    fail: Callable[[int, str], int],
    warn: Callable[[str], None],
) -> int:
    """``_attempt``, then again while ``--retry`` allows, as curl does: a retried file
    starts from empty, standard output keeps what came; the wait doubles from 1 s (or is
    ``--retry-delay``), at least what ``Retry-After`` asks."""
    from . import _exceptions as e

    started = time.monotonic()
    retries_left = args.retry
    delay = args.retry_delay or RETRY_FIRST_DELAY
    while True:
        transfer.response, transfer.hops = None, []
        try:
            code = _attempt(client, request, args, outputs, transfer)
            if code:
                fail(code, transfer.errormsg)
        except e.HTTPError as exc:  # first: timeouts are also OSErrors
            code = fail(exit_code(exc), str(exc))
        reason = _transient(code, transfer, args)
        out_of_time = args.retry_max_time and time.monotonic() - started >= args.retry_max_time
        if reason is None or retries_left <= 0 or out_of_time:
            transfer.exitcode = code
            return code
        wait = max(delay, _retry_after(transfer)) if reason == ": HTTP error" else delay
        warn(f"Problem {reason}. Will retry in {wait} seconds. {retries_left} retries left.")
        retries_left -= 1
        if not args.retry_delay:
            delay = min(delay * 2, RETRY_MAX_DELAY)
        time.sleep(wait)
        if args.form:
            # -F's files were read by the failed attempt: open them again.
            for _, handle, _ in request.options["files"].values():
                handle.close()
            request = _request(args, transfer.url)


def run(argv: list[str] | None = None) -> int:
    """``python -m nodelay._get URL ...``: ``nodelay get`` on its own."""
    parser = argparse.ArgumentParser(prog="nodelay")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["get", *(sys.argv[1:] if argv is None else argv)])
    handler: Any = args.handler
    return int(handler(args))


if __name__ == "__main__":
    raise SystemExit(run())
