"""Request bodies as requests encodes them: form/query encoding of dicts and pairs, and
multipart/form-data of ``files=`` (``PreparedRequest.prepare_body``)."""

from __future__ import annotations

import os
from binascii import hexlify
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from .utils import guess_filename, to_key_val_list

__all__ = ["encode_files", "encode_params"]


def encode_params(data: Any) -> Any:
    """Form/query encoding of a dict or pairs (list values repeat the key, ``None``
    values are dropped); strings, bytes and files are returned as they are."""
    if isinstance(data, (str, bytes)) or hasattr(data, "read"):
        return data
    if hasattr(data, "__iter__"):
        result = []
        for k, vs in to_key_val_list(data) or []:
            if isinstance(vs, (str, bytes)) or not hasattr(vs, "__iter__"):
                vs = [vs]
            for v in vs:
                if v is not None:
                    result.append(
                        (
                            k.encode("utf-8") if isinstance(k, str) else k,
                            v.encode("utf-8") if isinstance(v, str) else v,
                        )
                    )
        return urlencode(result, doseq=True)
    return data


def _quote_param(value: str) -> str:
    # WHATWG HTML multipart/form-data: '"' as %22, CR and LF as %0D / %0A.
    return value.replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")


def encode_files(files: Any, data: Any) -> tuple[bytes, str]:
    """A multipart/form-data body of ``data`` fields and ``files`` (requests' forms:
    ``{"f": file}``, ``(filename, fileobj[, content_type[, headers]])``)."""
    if not files:
        raise ValueError("Files must be provided.")
    if isinstance(data, (str, bytes)):
        raise ValueError("Data must not be a string.")
    parts: list[tuple[str, str | None, bytes, str | None, Mapping[str, str] | None]] = []
    for field, val in to_key_val_list(data or {}) or []:
        if isinstance(val, (str, bytes)) or not hasattr(val, "__iter__"):
            val = [val]
        for v in val:
            if v is not None:
                if not isinstance(v, bytes):
                    v = str(v).encode("utf-8")
                name = field.decode("utf-8") if isinstance(field, bytes) else str(field)
                parts.append((name, None, v, None, None))
    for k, v in to_key_val_list(files or {}) or []:
        ft = fh = None
        if isinstance(v, (tuple, list)):
            if len(v) == 2:
                fn, fp = v
            elif len(v) == 3:
                fn, fp, ft = v
            else:
                fn, fp, ft, fh = v
        else:
            fn = guess_filename(v) or k
            fp = v
        if isinstance(fp, (str, bytes, bytearray)):
            fdata = fp
        elif hasattr(fp, "read"):
            fdata = fp.read()
        elif fp is None:
            continue
        else:
            fdata = fp
        if isinstance(fdata, str):
            fdata = fdata.encode("utf-8")
        parts.append((str(k), None if fn is None else str(fn), bytes(fdata), ft, fh))
    boundary = hexlify(os.urandom(16)).decode("ascii")
    body = bytearray()
    for name, filename, payload, content_type, extra in parts:
        body += f"--{boundary}\r\n".encode()
        disposition = f'form-data; name="{_quote_param(name)}"'
        if filename is not None:
            disposition += f'; filename="{_quote_param(filename)}"'
        lines = [f"Content-Disposition: {disposition}"]
        if content_type:
            lines.append(f"Content-Type: {content_type}")
        for hname, hvalue in (extra or {}).items():
            lines.append(f"{hname}: {hvalue}")
        body += ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8")
        body += payload + b"\r\n"
    body += f"--{boundary}--\r\n".encode()
    return bytes(body), f"multipart/form-data; boundary={boundary}"
