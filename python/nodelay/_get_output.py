"""Where ``nodelay get`` writes: stdout, or a file (``-o FILE``, ``-O``, ``-D FILE``).

A file is created when the first bytes come (a transfer that fails before, ``-f`` on an
error status, leaves no body file) and at the end of a successful transfer (an empty body
makes an empty file, as curl does). Each attempt of ``--retry`` starts the body's file
again from empty; the heads' file (``-D``) keeps every attempt's heads, as curl's does.
A failed write is ``WriteFailed`` (curl's exit code 23).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO

__all__ = ["STDOUT", "Sink", "WriteFailed", "remote_name"]

STDOUT = "-"
"""The file name that means standard output (``-o -``, ``-D -``), as in curl."""


class WriteFailed(Exception):
    """Bytes could not be written (curl's exit code 23); the OSError is the cause."""


def remote_name(url: str) -> str:
    """``-O``: the file name the URL's path ends with (query and fragment left out)."""
    from urllib.parse import urlsplit

    name = urlsplit(url).path.rpartition("/")[2]
    if not name:
        raise WriteFailed(f"remote file name has no length: {url}")
    return name


class Sink:
    """Standard output, or a file opened on first use."""

    def __init__(self, target: str) -> None:
        self.target = target
        self._file: IO[bytes] | None = None

    @property
    def is_stdout(self) -> bool:
        return self.target == STDOUT

    def _stream(self) -> IO[bytes]:
        if self.is_stdout:
            return sys.stdout.buffer
        if self._file is None:
            self._file = Path(self.target).open("wb")
        return self._file

    def write(self, data: bytes) -> None:
        """Write ``data`` at once (stdout is flushed: a pipe sees a stream as it comes)."""
        try:
            stream = self._stream()
            stream.write(data)
            if self.is_stdout:
                stream.flush()
        except OSError as exc:  # a closed pipe (| head), a full disk, a missing folder
            raise WriteFailed(str(exc)) from exc

    def finish(self) -> None:
        """End a successful transfer: the file exists even when nothing was written."""
        self.write(b"")
        self.close()

    def close(self) -> None:
        """Close the file; the next write starts it again from empty (a retry)."""
        if self._file is not None:
            try:
                self._file.close()
            finally:
                self._file = None
