"""curl's exit codes for the failures of ``nodelay get``.

The engine raises nodelay's exception classes; where curl tells apart failures that one
class covers (a name that does not resolve and a refused connection are both
``ConnectError``; an untrusted certificate and a failed handshake both ``TLSError``; an
empty reply and a cut body both ``RemoteProtocolError``), the engine's message says
which, and ``exit_code`` reads it. tests/test_cli_curl.py runs curl beside each.
"""

from __future__ import annotations

__all__ = ["EXIT_CODES", "exit_code"]

EXIT_CODES = {
    "unsupported_protocol": 1,
    "malformed_url": 3,
    "couldnt_resolve_proxy": 5,
    "couldnt_resolve_host": 6,
    "couldnt_connect": 7,
    "weird_server_reply": 8,
    "partial_file": 18,
    "http_error": 22,
    "write_error": 23,
    "read_error": 26,
    "timeout": 28,
    "tls_connect_error": 35,
    "too_many_redirects": 47,
    "got_nothing": 52,
    "send_error": 55,
    "recv_error": 56,
    "peer_failed_verification": 60,
    "proxy": 97,
}
"""curl's exit codes (``man curl``, EXIT CODES) for the failures ``nodelay get`` reports."""

# The engine's words for the cases one exception class covers (crates/nodelay-core).
_RESOLVE = "failed to resolve"
_PROXY_CONNECT = "failed to connect"
_CERTIFICATE = "certificate verify failed"
_NOTHING = "without sending a response"
_CUT_BODY = "without sending complete message body"
_MALFORMED_HEAD = "malformed response head"


def _protocol_code(message: str) -> int:
    if _NOTHING in message:
        return EXIT_CODES["got_nothing"]
    if _CUT_BODY in message:
        return EXIT_CODES["partial_file"]
    if _MALFORMED_HEAD in message:
        return EXIT_CODES["weird_server_reply"]
    return EXIT_CODES["recv_error"]


def exit_code(exc: BaseException) -> int:
    """curl's exit code for a nodelay exception."""
    from . import _exceptions as e

    message = str(exc)
    if isinstance(exc, e.InvalidURL):
        return EXIT_CODES["malformed_url"]
    if isinstance(exc, e.UnsupportedProtocol):
        return EXIT_CODES["unsupported_protocol"]
    if isinstance(exc, e.ProxyError):
        # "proxy URL: failed to resolve ..." / "...: failed to connect ..." / a refusal.
        if _RESOLVE in message:
            return EXIT_CODES["couldnt_resolve_proxy"]
        if _PROXY_CONNECT in message:
            return EXIT_CODES["couldnt_connect"]
        return EXIT_CODES["proxy"]
    if isinstance(exc, e.TooManyRedirects):
        return EXIT_CODES["too_many_redirects"]
    if isinstance(exc, e.TimeoutException):
        return EXIT_CODES["timeout"]
    if isinstance(exc, e.TLSError):
        # An untrusted, expired or misnamed certificate is curl's 60, any other failure 35.
        if _CERTIFICATE in message:
            return EXIT_CODES["peer_failed_verification"]
        return EXIT_CODES["tls_connect_error"]
    if isinstance(exc, e.ConnectError):
        if _RESOLVE in message:
            return EXIT_CODES["couldnt_resolve_host"]
        return EXIT_CODES["couldnt_connect"]
    if isinstance(exc, e.WriteError):
        return EXIT_CODES["send_error"]
    if isinstance(exc, e.RemoteProtocolError):
        return _protocol_code(message)
    if isinstance(exc, e.ReadError):
        return EXIT_CODES["recv_error"]
    return 1
