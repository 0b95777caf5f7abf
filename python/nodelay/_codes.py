"""``nodelay.codes``: HTTP status codes by name, as in httpx (``codes.NOT_FOUND``) and
requests (``codes.not_found``, ``codes["ok"]``).

Loaded on first use (``nodelay.__getattr__``): building the enum and importing ``http``
would add about a millisecond to every ``import nodelay``.
"""

from __future__ import annotations

from enum import EnumMeta, IntEnum
from http import HTTPStatus

__all__ = ["codes"]

TYPE_CHECKING = False
if TYPE_CHECKING:

    class _CodesType(EnumMeta):
        """What type checkers see of ``codes``: the lower-case and requests' names are
        registered at import (``_add_aliases``), so they reach a checker through here,
        typed as members (``codes.ok`` is a ``codes``)."""

        def __getattr__(cls, name: str) -> codes: ...

else:
    _CodesType = EnumMeta


class codes(IntEnum, metaclass=_CodesType):  # httpx's and requests' name, lower case
    """HTTP status codes: ``codes.OK == 200``, ``codes.not_found``, ``codes["ok"]``,
    ``codes(404).phrase``, ``codes.get_reason_phrase(503)``, ``codes.is_error(404)``.

    The members are Python's ``http.HTTPStatus`` (tests/test_codes.py keeps them equal);
    every one also answers to its lower-case name, and requests' best-known short names
    (``codes.ok``, ``codes.teapot``...) work too.
    """

    CONTINUE = 100
    SWITCHING_PROTOCOLS = 101
    PROCESSING = 102
    EARLY_HINTS = 103
    OK = 200
    CREATED = 201
    ACCEPTED = 202
    NON_AUTHORITATIVE_INFORMATION = 203
    NO_CONTENT = 204
    RESET_CONTENT = 205
    PARTIAL_CONTENT = 206
    MULTI_STATUS = 207
    ALREADY_REPORTED = 208
    IM_USED = 226
    MULTIPLE_CHOICES = 300
    MOVED_PERMANENTLY = 301
    FOUND = 302
    SEE_OTHER = 303
    NOT_MODIFIED = 304
    USE_PROXY = 305
    TEMPORARY_REDIRECT = 307
    PERMANENT_REDIRECT = 308
    BAD_REQUEST = 400
    UNAUTHORIZED = 401
    PAYMENT_REQUIRED = 402
    FORBIDDEN = 403
    NOT_FOUND = 404
    METHOD_NOT_ALLOWED = 405
    NOT_ACCEPTABLE = 406
    PROXY_AUTHENTICATION_REQUIRED = 407
    REQUEST_TIMEOUT = 408
    CONFLICT = 409
    GONE = 410
    LENGTH_REQUIRED = 411
    PRECONDITION_FAILED = 412
    REQUEST_ENTITY_TOO_LARGE = 413
    REQUEST_URI_TOO_LONG = 414
    UNSUPPORTED_MEDIA_TYPE = 415
    REQUESTED_RANGE_NOT_SATISFIABLE = 416
    EXPECTATION_FAILED = 417
    IM_A_TEAPOT = 418
    MISDIRECTED_REQUEST = 421
    UNPROCESSABLE_ENTITY = 422
    LOCKED = 423
    FAILED_DEPENDENCY = 424
    TOO_EARLY = 425
    UPGRADE_REQUIRED = 426
    PRECONDITION_REQUIRED = 428
    TOO_MANY_REQUESTS = 429
    REQUEST_HEADER_FIELDS_TOO_LARGE = 431
    UNAVAILABLE_FOR_LEGAL_REASONS = 451
    INTERNAL_SERVER_ERROR = 500
    NOT_IMPLEMENTED = 501
    BAD_GATEWAY = 502
    SERVICE_UNAVAILABLE = 503
    GATEWAY_TIMEOUT = 504
    HTTP_VERSION_NOT_SUPPORTED = 505
    VARIANT_ALSO_NEGOTIATES = 506
    INSUFFICIENT_STORAGE = 507
    LOOP_DETECTED = 508
    NOT_EXTENDED = 510
    NETWORK_AUTHENTICATION_REQUIRED = 511

    def __str__(self) -> str:
        return str(self.value)

    @property
    def phrase(self) -> str:
        return HTTPStatus(self.value).phrase

    @classmethod
    def get_reason_phrase(cls, value: int) -> str:
        """The standard reason phrase of ``value``, or "" for an unknown code."""
        try:
            return HTTPStatus(value).phrase
        except ValueError:
            return ""

    @classmethod
    def is_informational(cls, value: int) -> bool:
        return 100 <= value <= 199

    @classmethod
    def is_success(cls, value: int) -> bool:
        return 200 <= value <= 299

    @classmethod
    def is_redirect(cls, value: int) -> bool:
        return 300 <= value <= 399

    @classmethod
    def is_client_error(cls, value: int) -> bool:
        return 400 <= value <= 499

    @classmethod
    def is_server_error(cls, value: int) -> bool:
        return 500 <= value <= 599

    @classmethod
    def is_error(cls, value: int) -> bool:
        return 400 <= value <= 599


_REQUESTS_ALIASES = {
    "moved": 301,
    "found": 302,
    "temporary_redirect": 307,
    "permanent_redirect": 308,
    "teapot": 418,
    "too_many": 429,
}
"""requests' short names that are not a lower-case standard name."""

_RFC9110_NAMES = {
    "CONTENT_TOO_LARGE": 413,
    "URI_TOO_LONG": 414,
    "RANGE_NOT_SATISFIABLE": 416,
    "UNPROCESSABLE_CONTENT": 422,
}
"""RFC 9110's names for four codes, which ``http.HTTPStatus`` uses from Python 3.13 on
(keeping the older names above, httpx's, as aliases): both spellings work everywhere."""


def _add_aliases() -> None:
    # Enum aliases (the same member under another name) can only be declared in the class
    # body on Python < 3.13, which would double the list above; registering them in the
    # member map afterwards makes ``codes.not_found``, ``codes["ok"]`` and ``codes.ok is
    # codes.OK`` all hold, as for an alias declared in the body.
    aliases = {member.name.lower(): member for member in codes}
    aliases.update({name: codes(value) for name, value in _REQUESTS_ALIASES.items()})
    for name, value in _RFC9110_NAMES.items():
        aliases[name] = aliases[name.lower()] = codes(value)
    for name, member in aliases.items():
        setattr(codes, name, member)  # before the map entry: Enum refuses to reassign members
        codes._member_map_[name] = member


_add_aliases()
