"""``verify=ssl.SSLContext``: what of a context the engine's TLS (rustls) can honour.

The engine verifies with rustls, not OpenSSL, so a context is read, never used:

- Its trust anchors become the client's CA bundle: ``ctx.get_ca_certs(binary_form=True)``
  lists the certificates loaded from a ``cafile`` or ``cadata`` (and the system bundle
  file that ``load_default_certs()`` reads on Linux). Certificates in a ``capath``
  directory are loaded lazily by OpenSSL and are never listed: a context that lists none
  verifies against the system trust store, with a warning. A ``truststore.SSLContext``
  (the operating system's store) is nodelay's default trust store, without a warning.
- ``check_hostname=False`` or ``verify_mode=CERT_NONE`` turn verification off
  (``verify=False``). rustls cannot check a chain without the name, so a context that
  only skips the hostname check skips the chain check too: that one warns.
- Settings that would make nodelay accept less than the context does are refused with
  ``ValueError``: ``minimum_version`` TLS 1.3 (rustls would also offer 1.2), a
  ``maximum_version`` below TLS 1.2 (rustls speaks only 1.2 and 1.3) and the CRL checks
  of ``verify_flags``. Cipher lists and ``options`` differing from
  ``ssl.create_default_context()``'s warn: rustls uses its own fixed set of AEAD suites.
- A client certificate loaded with ``load_cert_chain`` cannot be read back from a context
  (Python's ``ssl`` has no accessor for it): pass it as ``cert=`` as well.

The PEM bundle is written to a private directory (mode 0700, removed at exit), one file
per distinct set of anchors, because the engine takes a CA bundle by path and reads it
when its first TLS connection starts.
"""

from __future__ import annotations

import ssl

from ._exceptions import SSLContextWarning

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["SSLContextWarning", "context_options"]


_bundle_dir: str | None = None


def _bundle_path(pem: str) -> str:
    """A file holding ``pem`` in this process's private bundle directory."""
    global _bundle_dir
    import hashlib
    import os

    if _bundle_dir is None:
        import atexit
        import shutil
        import tempfile

        _bundle_dir = tempfile.mkdtemp(prefix="nodelay-ca-")  # mode 0700: ours alone
        atexit.register(shutil.rmtree, _bundle_dir, True)
    path = os.path.join(_bundle_dir, hashlib.sha256(pem.encode()).hexdigest() + ".pem")
    if not os.path.exists(path):
        partial = f"{path}.{os.getpid()}.tmp"
        with open(partial, "w", encoding="ascii") as f:
            f.write(pem)
        os.replace(partial, path)  # a reader never sees half a bundle
    return path


def _warn(message: str) -> None:
    """Warn, attributed to the first caller outside the nodelay package (the line that
    made the client or the request)."""
    import os
    import sys
    import warnings

    package = os.path.dirname(__file__) + os.sep  # nodelay and nodelay.requests
    level, frame = 2, sys._getframe(1)  # stacklevel 2: the caller of _warn
    while frame is not None and frame.f_code.co_filename.startswith(package):
        level, frame = level + 1, frame.f_back  # type: ignore[assignment]
    warnings.warn(message, SSLContextWarning, stacklevel=level)


def context_options(ctx: ssl.SSLContext) -> dict[str, Any]:
    """The engine's TLS keywords (``verify``, ``ca_file``) for ``verify=ctx``."""
    if ctx.maximum_version not in (ssl.TLSVersion.MAXIMUM_SUPPORTED,) and (
        ctx.maximum_version < ssl.TLSVersion.TLSv1_2
    ):
        raise ValueError(
            f"verify=SSLContext with maximum_version {ctx.maximum_version.name}: "
            "nodelay speaks TLS 1.2 and 1.3 only"
        )
    if ctx.minimum_version == ssl.TLSVersion.TLSv1_3:
        raise ValueError(
            "verify=SSLContext with minimum_version TLSv1_3 cannot be honoured: "
            "nodelay's TLS always offers TLS 1.2 and 1.3"
        )
    if ctx.verify_flags & (ssl.VERIFY_CRL_CHECK_LEAF | ssl.VERIFY_CRL_CHECK_CHAIN):
        raise ValueError(
            "verify=SSLContext with CRL checks (verify_flags) cannot be honoured: "
            "nodelay's TLS does not check revocation lists"
        )
    default = ssl.create_default_context()
    if [c["name"] for c in ctx.get_ciphers()] != [c["name"] for c in default.get_ciphers()]:
        _warn(
            "verify=SSLContext: its cipher list is not applied; nodelay's TLS (rustls) "
            "uses its own fixed set of AEAD cipher suites"
        )
    # The options that matter to a handshake; the rest are OpenSSL bug workarounds.
    significant = ~(ssl.OP_NO_TLSv1 | ssl.OP_NO_TLSv1_1 | ssl.OP_NO_SSLv2 | ssl.OP_NO_SSLv3)
    if (ctx.options ^ default.options) & significant:
        _warn("verify=SSLContext: its options are not applied by nodelay's TLS (rustls)")
    if not ctx.check_hostname or ctx.verify_mode == ssl.CERT_NONE:
        if ctx.verify_mode != ssl.CERT_NONE:
            _warn(
                "verify=SSLContext with check_hostname=False: nodelay's TLS cannot check "
                "the chain without the name, so the certificate is not verified at all"
            )
        return {"verify": False}
    if "truststore" in type(ctx).__module__.split("."):
        # truststore's contexts verify against the operating system's store, the one
        # nodelay verifies against by default; they cannot list it (NotImplementedError).
        return {"verify": True}
    try:
        ders = ctx.get_ca_certs(binary_form=True)
    except NotImplementedError:  # an SSLContext subclass that cannot list its anchors
        ders = []
    if not ders:
        _warn(
            "verify=SSLContext lists no CA certificates (a capath's certificates are "
            "loaded lazily and cannot be listed): the system trust store is used"
        )
        return {"verify": True}
    pem = "".join(ssl.DER_cert_to_PEM_cert(der) for der in ders)
    return {"verify": True, "ca_file": _bundle_path(pem)}
