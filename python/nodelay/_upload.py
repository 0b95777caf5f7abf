"""Request bodies that are not plain bytes: ``content=`` iterables and files, ``files=``.

A body is either ``bytes`` (sent in one write with the head when small) or a
``_core.Upload``: a list of parts (bytes, ``(file, size)``, iterables of bytes) that the
engine pulls piece by piece with the GIL released, so files of any size are sent without
being loaded. A body with an exact size gets ``Content-Length`` (file sizes from
``os.fstat``); one with an iterable in it is sent with ``Transfer-Encoding: chunked`` over
HTTP/1.1 and with no length over HTTP/2 (which frames bodies itself). A streamed body goes
over HTTP/2 whenever the client's ``http2`` setting sends the request there (docs/http2.md).

``files=`` follows httpx and requests: ``{"name": file}``, ``{"name": (filename, file)}``,
``(filename, file, content_type)``, ``(filename, file, content_type, headers)``, or a list
of ``(name, value)`` pairs for repeated names; ``file`` is a binary file object, bytes or
str. ``data=`` fields come first, then the files, as httpx sends them.
"""

from __future__ import annotations

from . import _core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import IO, Any, TypeAlias

    FileContent: TypeAlias = "IO[bytes] | bytes | bytearray | str"
    FileTypes: TypeAlias = (
        "FileContent | tuple[str | None, FileContent] | tuple[str | None, FileContent, str | None]"
        " | tuple[str | None, FileContent, str | None, Mapping[str, str]]"
    )
    RequestFiles: TypeAlias = "Mapping[str, FileTypes] | Sequence[tuple[str, FileTypes]]"
    Body: TypeAlias = "bytes | _core.Upload"

__all__ = ["encode_content", "encode_multipart", "file_size"]

# Bodies up to this size are joined into one bytes object, so they leave in the same write
# as the head (the engine's INLINE_BODY_MAX_BYTES, crates/nodelay-core/src/limits.rs).
INLINE_BODY_MAX_BYTES = 64 * 1024

# Piece size when a file of unknown size (a pipe, a socket file) is read as an iterator:
# the engine's UPLOAD_CHUNK_BYTES, so such uploads are as few trips as sized files.
UNSIZED_FILE_CHUNK_BYTES = 256 * 1024

_DEFAULT_FILE_TYPE = "application/octet-stream"

# httpx's escaping of form-data parameter values (HTML's multipart/form-data rules): `"`
# becomes %22, a backslash is doubled, and control characters other than ESC become %XX,
# so a filename can never end the quoted string or inject a header line.
_FORM_PARAM_ESCAPES = {'"': "%22", "\\": "\\\\"}
_FORM_PARAM_ESCAPES.update({chr(c): f"%{c:02X}" for c in range(0x20) if c != 0x1B})


# Tuples, not ``A | B``: that would build a UnionType object on every call.
_BUFFERS = (bytearray, memoryview)


def _escape_param(value: str) -> str:
    if not any(ch in _FORM_PARAM_ESCAPES for ch in value):
        return value
    return "".join(_FORM_PARAM_ESCAPES.get(ch, ch) for ch in value)


def _is_file(value: object) -> bool:
    return hasattr(value, "read")


def file_size(file: Any) -> int | None:
    """Bytes left in ``file`` from its position: ``os.fstat`` for a regular file, else the
    end of a seekable stream; ``None`` when it cannot be known (pipes, sockets)."""
    import os
    import stat

    try:
        fd = file.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is not None:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        try:
            return max(0, st.st_size - int(file.tell()))
        except (AttributeError, OSError):
            return None
    try:
        if not file.seekable():
            return None
        here = file.tell()
        end = file.seek(0, 2)
        file.seek(here)
    except (AttributeError, OSError, ValueError):
        return None
    return int(max(0, end - here))


def _unsized_file(file: Any) -> Iterable[bytes]:
    """A file of unknown size as an iterator of pieces (sent with chunked coding)."""
    from functools import partial

    return iter(partial(file.read, UNSIZED_FILE_CHUNK_BYTES), b"")


def _file_part(file: Any) -> tuple[Any, int] | Iterable[bytes]:
    size = file_size(file)
    return _unsized_file(file) if size is None else (file, size)


def encode_content(content: Any) -> Body:
    """``content=``: bytes or str as is; a binary file streamed (Content-Length from its
    size when known); any other iterable of bytes streamed with chunked coding."""
    if isinstance(content, bytes):
        return content
    if isinstance(content, str):
        return content.encode("utf-8")
    if isinstance(content, _BUFFERS):
        return bytes(content)
    if isinstance(content, _core.Upload):
        return content  # built by encode_multipart or by hand: sent as it is
    if _is_file(content):
        return _core.Upload([_file_part(content)])
    if hasattr(content, "__iter__"):
        return _core.Upload([content])
    raise TypeError(
        "content must be bytes, str, a binary file or an iterable of bytes, "
        f"got {type(content).__name__}"
    )


def _field_value(value: object) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    if value is None:
        return b""
    if isinstance(value, bool):
        return b"true" if value else b"false"
    if isinstance(value, int | float):
        return str(value).encode("ascii")
    raise TypeError(
        f"form field values must be str, bytes, int, float or None, got {type(value).__name__}"
    )


def _data_fields(data: Mapping[str, Any] | Sequence[tuple[str, Any]]) -> list[tuple[str, bytes]]:
    items = data.items() if hasattr(data, "items") else data
    fields: list[tuple[str, bytes]] = []
    for name, value in items:
        if isinstance(value, list | tuple):
            fields.extend((str(name), _field_value(v)) for v in value)
        else:
            fields.append((str(name), _field_value(value)))
    return fields


def _file_fields(files: RequestFiles) -> list[tuple[str, Any]]:
    items = files.items() if hasattr(files, "items") else files
    return [(str(name), value) for name, value in items]


def _guess_type(filename: str | None) -> str:
    if not filename:
        return _DEFAULT_FILE_TYPE
    import mimetypes

    return mimetypes.guess_type(filename)[0] or _DEFAULT_FILE_TYPE


def _file_head(name: str, value: Any) -> tuple[bytes, Any]:
    """The part's header block and its content (bytes or a file object)."""
    headers: Mapping[str, str] = {}
    content_type: str | None = None
    if isinstance(value, tuple):
        if not 2 <= len(value) <= 4:
            raise ValueError(
                f"files[{name!r}] must be a file or (filename, file[, content_type[, headers]])"
            )
        filename, data = value[0], value[1]
        if len(value) > 2:
            content_type = value[2]
        if len(value) > 3:
            headers = value[3]
    else:
        data = value
        filename = getattr(value, "name", None) if _is_file(value) else None
        if filename is None or not isinstance(filename, str):
            filename = "upload"
        import os.path

        filename = os.path.basename(filename)
    if isinstance(data, str):
        data = data.encode("utf-8")
    elif isinstance(data, _BUFFERS):
        data = bytes(data)
    elif not isinstance(data, bytes) and not _is_file(data):
        raise TypeError(
            f"files[{name!r}] must be a binary file, bytes or str, got {type(data).__name__}"
        )
    has_type = any(k.lower() == "content-type" for k in headers)
    if content_type is None and not has_type:
        content_type = _guess_type(filename)
    lines = [f'Content-Disposition: form-data; name="{_escape_param(name)}"']
    if filename is not None:
        lines[0] += f'; filename="{_escape_param(filename)}"'
    for key, val in headers.items():
        if "\r" in key or "\n" in key or "\r" in val or "\n" in val:
            raise ValueError(f"files[{name!r}] headers must not contain CR or LF")
        lines.append(f"{key}: {val}")
    if content_type is not None and not has_type:
        lines.append(f"Content-Type: {content_type}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8"), data


def encode_multipart(
    data: Mapping[str, Any] | Sequence[tuple[str, Any]] | None, files: RequestFiles
) -> tuple[Body, str]:
    """``(body, content_type)`` of a multipart/form-data body with a random boundary.

    Small bodies held in memory become one bytes object; otherwise the files are streamed
    part by part, with an exact Content-Length when every file's size is known."""
    import binascii
    import os

    boundary = binascii.hexlify(os.urandom(16))
    delimiter = b"--" + boundary + b"\r\n"
    parts: list[Any] = []  # bytes, (file, size) and iterables, in wire order
    pending = bytearray()  # consecutive in-memory bytes, merged into one part
    total: int | None = 0
    for name, value in _data_fields(data or {}):
        pending += delimiter
        pending += f'Content-Disposition: form-data; name="{_escape_param(name)}"\r\n\r\n'.encode()
        pending += value
        pending += b"\r\n"
    for name, value in _file_fields(files):
        head, content = _file_head(name, value)
        pending += delimiter
        pending += head
        if isinstance(content, bytes):
            pending += content
        else:
            part = _file_part(content)
            if pending:
                parts.append(bytes(pending))
                if total is not None:
                    total += len(pending)
                pending.clear()
            parts.append(part)
            total = part[1] + total if isinstance(part, tuple) and total is not None else None
        pending += b"\r\n"
    pending += b"--" + boundary + b"--\r\n"
    parts.append(bytes(pending))
    content_type = f"multipart/form-data; boundary={boundary.decode('ascii')}"
    if total is not None:
        total += len(pending)
        if total <= INLINE_BODY_MAX_BYTES:
            return _join(parts), content_type
    if len(parts) == 1:
        return parts[0], content_type
    return _core.Upload(parts), content_type


def _join(parts: list[Any]) -> bytes:
    """A small body of known size as one bytes object (its files read now)."""
    out = bytearray()
    for part in parts:
        if isinstance(part, bytes):
            out += part
        else:
            file, size = part
            piece = file.read(size)
            if not isinstance(piece, bytes) or len(piece) != size:
                raise ValueError("a file changed size while the request was encoded")
            out += piece
    return bytes(out)
