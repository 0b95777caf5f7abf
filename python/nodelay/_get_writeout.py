"""``nodelay get -w FORMAT``: curl's ``--write-out``, printed once the transfer ends.

The format is curl's: ``%{variable}``, ``%header{name}``, ``%%``, and the ``\\n``, ``\\r``,
``\\t`` escapes; ``%{stdout}`` and ``%{stderr}`` switch where the rest goes. A variable
this command does not know is left out with a warning, as curl does.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ._get_verbose import head_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from ._models import Response

__all__ = ["VARIABLES", "Transfer", "read_format", "write_out"]


@dataclass
class Transfer:
    """What one ``nodelay get`` did, for ``-w``: the URL as given, the last response
    (``None`` when none came), the exit code and error, sizes and phase times (seconds
    from the start of the transfer)."""

    url: str
    response: Response | None = None
    exitcode: int = 0
    errormsg: str = ""
    size_download: int = 0
    size_upload: int = 0
    time_total: float = 0.0
    time_starttransfer: float = 0.0
    time_namelookup: float = 0.0
    time_connect: float = 0.0
    time_appconnect: float = 0.0
    filename: str = ""
    hops: list[Response] = field(default_factory=list)


def _version(response: Response) -> str:
    # curl prints "1.0", "1.1", "2".
    return response.http_version.removeprefix("HTTP/")


def _seconds(value: float) -> str:
    return f"{value:.6f}"


def _variables() -> dict[str, Callable[[Transfer], str]]:
    def code(t: Transfer) -> str:
        return f"{t.response.status_code if t.response is not None else 0:03d}"

    def speed(t: Transfer) -> str:
        return str(int(t.size_download / t.time_total) if t.time_total > 0 else 0)

    return {
        "content_type": lambda t: (
            t.response.headers.get("content-type", "") if t.response is not None else ""
        ),
        "errormsg": lambda t: t.errormsg,
        "exitcode": lambda t: str(t.exitcode),
        "filename_effective": lambda t: t.filename,
        "http_code": code,
        "http_version": lambda t: _version(t.response) if t.response is not None else "0",
        "method": lambda t: (
            t.response.request.method
            if t.response is not None and t.response.request is not None
            else ""
        ),
        "num_headers": lambda t: (
            str(len(t.response.headers.multi_items())) if t.response is not None else "0"
        ),
        "num_redirects": lambda t: str(len(t.hops) - 1 if t.hops else 0),
        "response_code": code,
        "size_download": lambda t: str(t.size_download),
        # The heads as -i and -D write them: exact for heads sent as "Name: value".
        "size_header": lambda t: str(sum(len(head_bytes(hop)) for hop in t.hops)),
        "size_upload": lambda t: str(t.size_upload),
        "speed_download": speed,
        "time_appconnect": lambda t: _seconds(t.time_appconnect),
        "time_connect": lambda t: _seconds(t.time_connect),
        "time_namelookup": lambda t: _seconds(t.time_namelookup),
        "time_starttransfer": lambda t: _seconds(t.time_starttransfer),
        "time_total": lambda t: _seconds(t.time_total),
        "url": lambda t: t.url,
        "url_effective": lambda t: str(t.response.url) if t.response is not None else t.url,
    }


VARIABLES = _variables()
"""The ``%{name}`` variables ``-w`` knows, each rendering a ``Transfer``."""

_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}


def read_format(value: str) -> str:
    """The ``-w`` argument: the format itself, or ``@FILE``'s (``@-``: standard input)."""
    if not value.startswith("@"):
        return value
    source = value[1:]
    return sys.stdin.read() if source == "-" else Path(source).read_text("utf-8")


def write_out(
    fmt: str, transfer: Transfer, out: IO[str], err: IO[str], warn: Callable[[str], None]
) -> None:
    """Print ``fmt`` for ``transfer``, to ``out`` until a ``%{stderr}`` switches to
    ``err`` (``%{stdout}`` switches back)."""
    stream = out
    i = 0
    while i < len(fmt):
        char, nxt = fmt[i], fmt[i + 1 : i + 2]
        if char == "\\" and nxt:
            stream.write(_ESCAPES.get(nxt, char + nxt))
            i += 2
        elif char == "%" and nxt == "%":
            stream.write("%")
            i += 2
        elif char == "%" and nxt == "{":
            end = fmt.find("}", i + 2)
            if end < 0:
                stream.write("%{")
                i += 2
                continue
            name = fmt[i + 2 : end]
            i = end + 1
            if name in ("stdout", "stderr"):
                stream = out if name == "stdout" else err
            elif name in VARIABLES:
                stream.write(VARIABLES[name](transfer))
            else:
                warn(f"unknown --write-out variable: '{name}'")
        elif char == "%" and fmt.startswith("header{", i + 1):
            end = fmt.find("}", i + 8)
            if end < 0:
                stream.write("%header{")
                i += 8
                continue
            if transfer.response is not None:
                values = transfer.response.headers.get_list(fmt[i + 8 : end])
                stream.write(", ".join(values))
            i = end + 1
        elif char == "%" and nxt:
            stream.write(char + nxt)
            i += 2
        else:
            stream.write(char)
            i += 1
    out.flush()
    err.flush()
