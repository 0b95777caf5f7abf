"""The files every server of the interop matrix serves, and the TLS material it uses.

The bytes are deterministic (a SHA-256 counter stream, or repeated text), so a download is
compared byte for byte with what was written. Directories are world-readable and files
world-readable: nginx and Apache workers drop privileges when started by root.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import trustme

#: Name → size of every binary file under ``static/``. 202 B fits one frame of anything;
#: 16384 B is exactly one default HTTP/2 DATA frame (the boundary where servers end a body
#: with an empty DATA frame); 64 KiB + 1 crosses the initial HTTP/2 window by one byte;
#: 5 MiB crosses every window and buffer on the way.
STATIC_FILES = {
    "small.bin": 202,
    "frame.bin": 16_384,
    "window.bin": 64 * 1024 + 1,
    "large.bin": 5 * 1024 * 1024,
}

#: The compressible page (text that gzip/br/zstd shrink tenfold): about 100 KiB.
PAGE = "page.html"
PAGE_LINES = 1_600


@dataclass(frozen=True)
class Site:
    root: Path
    cert_pem: Path
    key_pem: Path
    ca_pem: Path


def file_bytes(name: str) -> bytes:
    """The content of ``static/<name>``."""
    if name == PAGE:
        return page_bytes()
    size = STATIC_FILES[name]
    seed = name.encode()
    blocks = (hashlib.sha256(seed + i.to_bytes(8, "big")).digest() for i in range(size // 32 + 1))
    return b"".join(blocks)[:size]


def page_bytes() -> bytes:
    rows = "".join(
        f"<tr><td>{i}</td><td>row {i} of the interop page</td><td>{i * i % 9973}</td></tr>\n"
        for i in range(PAGE_LINES)
    )
    return f"<!doctype html>\n<html><body><table>\n{rows}</table></body></html>\n".encode()


def all_files() -> list[str]:
    return [*STATIC_FILES, PAGE]


def build(root: Path) -> Site:
    """Write ``root/static/*`` and ``root/tls/{ca,cert,key}.pem``; return their paths."""
    static = root / "static"
    tls = root / "tls"
    static.mkdir(parents=True, exist_ok=True)
    tls.mkdir(exist_ok=True)
    for name in all_files():
        (static / name).write_bytes(file_bytes(name))
    ca = trustme.CA()
    leaf = ca.issue_cert("localhost", "127.0.0.1")
    site = Site(root, tls / "cert.pem", tls / "key.pem", tls / "ca.pem")
    leaf.private_key_pem.write_to_path(str(site.key_pem))
    leaf.cert_chain_pems[0].write_to_path(str(site.cert_pem))
    for extra in leaf.cert_chain_pems[1:]:
        extra.write_to_path(str(site.cert_pem), append=True)
    ca.cert_pem.write_to_path(str(site.ca_pem))
    for path in (root, static, tls, *static.iterdir(), *tls.iterdir()):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return site
