"""The helpers of ``requests.utils`` that programs call, and those the facade uses."""

from __future__ import annotations

import codecs
import contextlib
import ipaddress
import os
import re
import socket
import struct
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import quote, unquote, urlparse, urlunparse
from urllib.request import getproxies, proxy_bypass

from .. import CookieJar, __version__
from .cookies import RequestsCookieJar, cookiejar_from_dict
from .exceptions import InvalidHeader, InvalidURL, UnrewindableBodyError
from .structures import CaseInsensitiveDict

__all__ = [
    "add_dict_to_cookiejar",
    "address_in_network",
    "atomic_open",
    "check_header_validity",
    "default_headers",
    "default_user_agent",
    "dict_from_cookiejar",
    "dict_to_sequence",
    "dotted_netmask",
    "extract_zipped_paths",
    "from_key_val_list",
    "get_auth_from_url",
    "get_encoding_from_headers",
    "get_encodings_from_content",
    "get_environ_proxies",
    "get_netrc_auth",
    "get_unicode_from_response",
    "guess_filename",
    "guess_json_utf",
    "is_ipv4_address",
    "is_valid_cidr",
    "parse_dict_header",
    "parse_header_links",
    "parse_list_header",
    "prepend_scheme_if_needed",
    "requote_uri",
    "resolve_proxies",
    "rewind_body",
    "select_proxy",
    "set_environ",
    "should_bypass_proxies",
    "stream_decode_response_unicode",
    "super_len",
    "to_key_val_list",
    "to_native_string",
    "unquote_header_value",
    "unquote_unreserved",
    "urldefragauth",
]

NETRC_FILES = (".netrc", "_netrc")
UNRESERVED_SET = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" + "0123456789-._~"
)


def default_user_agent(name: str = "nodelay-requests") -> str:
    """The User-Agent the facade sends: ``nodelay-requests/<nodelay version>``."""
    return f"{name}/{__version__}"


def default_headers() -> CaseInsensitiveDict[str]:
    """A new session's headers (requests' four, with nodelay's decoders in
    Accept-Encoding: the engine decodes gzip, deflate, br and zstd)."""
    return CaseInsensitiveDict(
        {
            "User-Agent": default_user_agent(),
            "Accept-Encoding": "gzip, deflate, br, zstd",
            "Accept": "*/*",
            "Connection": "keep-alive",
        }
    )


def dict_from_cookiejar(cj: Iterable[Any]) -> dict[str, str]:
    """Name → value of every cookie of a jar (nodelay's or ``http.cookiejar``'s)."""
    if isinstance(cj, CookieJar):
        return {c.name: c.value for c in cj.cookies()}
    return {cookie.name: cookie.value for cookie in cj}


def add_dict_to_cookiejar(cj: CookieJar, cookie_dict: Mapping[str, str]) -> CookieJar:
    """``cj`` with the cookies of ``cookie_dict`` set (any-host cookies)."""
    return cookiejar_from_dict(cookie_dict, cj)


def to_key_val_list(value: Any) -> list[tuple[Any, Any]] | None:
    """A mapping or a list of pairs as a list of pairs (``None`` stays ``None``)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, bool, int)):
        raise ValueError("cannot encode objects that are not 2-tuples")
    if isinstance(value, Mapping):
        value = value.items()
    return list(value)


def _parse_content_type_header(header: str) -> tuple[str, dict[str, str]]:
    tokens = header.split(";")
    content_type, params = tokens[0].strip(), tokens[1:]
    params_dict: dict[str, str] = {}
    for param in params:
        param = param.strip()
        if param:
            key, sep, value = param.partition("=")
            params_dict[key.strip(" \"'").lower()] = value.strip(" \"'") if sep else ""
    return content_type, params_dict


def get_encoding_from_headers(headers: Mapping[str, str]) -> str | None:
    """The charset of Content-Type; ISO-8859-1 for ``text/*`` without one (RFC 2616, as
    requests), utf-8 for ``application/json`` without one, else ``None``."""
    content_type = headers.get("content-type")
    if not content_type:
        return None
    content_type, params = _parse_content_type_header(content_type)
    if "charset" in params:
        return params["charset"].strip("'\"")
    if "text" in content_type:
        return "ISO-8859-1"
    if "application/json" in content_type:
        return "utf-8"
    return None


_NULL = b"\x00"
_NULL2 = _NULL * 2
_NULL3 = _NULL * 3


def guess_json_utf(data: bytes) -> str | None:
    """The UTF of a JSON text, from its BOM or the NUL bytes of its first 4 (RFC 4627)."""
    sample = data[:4]
    if sample in (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE):
        return "utf-32"
    if sample[:3] == codecs.BOM_UTF8:
        return "utf-8-sig"
    if sample[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return "utf-16"
    nullcount = sample.count(_NULL)
    if nullcount == 0:
        return "utf-8"
    if nullcount == 2:
        if sample[::2] == _NULL2:
            return "utf-16-be"
        if sample[1::2] == _NULL2:
            return "utf-16-le"
    if nullcount == 3:
        if sample[:3] == _NULL3:
            return "utf-32-be"
        if sample[1:] == _NULL3:
            return "utf-32-le"
    return None


def unquote_unreserved(uri: str) -> str:
    """Un-escape the percent-escapes of unreserved characters only."""
    parts = uri.split("%")
    for i in range(1, len(parts)):
        h = parts[i][0:2]
        if len(h) == 2 and h.isalnum():
            try:
                c = chr(int(h, 16))
            except ValueError as exc:
                raise InvalidURL(f"Invalid percent-escape sequence: '{h}'") from exc
            parts[i] = c + parts[i][2:] if c in UNRESERVED_SET else f"%{parts[i]}"
        else:
            parts[i] = f"%{parts[i]}"
    return "".join(parts)


def requote_uri(uri: str) -> str:
    """The URI fully and consistently quoted (unquote of the unreserved, then quote)."""
    try:
        return quote(unquote_unreserved(uri), safe="!#$%&'()*+,/:;=?@[]~")
    except InvalidURL:
        return quote(uri, safe="!#$&'()*+,/:;=?@[]~")


def get_auth_from_url(url: str) -> tuple[str, str]:
    """The (user, password) of a URL's userinfo, unquoted (``("", "")`` without)."""
    parsed = urlparse(url)
    try:
        return (unquote(parsed.username or ""), unquote(parsed.password or ""))
    except (AttributeError, TypeError):
        return ("", "")


def urldefragauth(url: str) -> str:
    """The URL without its fragment and userinfo."""
    scheme, netloc, path, params, query, _fragment = urlparse(url)
    if not netloc:
        netloc, path = path, netloc
    netloc = netloc.rsplit("@", 1)[-1]
    return urlunparse((scheme, netloc, path, params, query, ""))


def get_netrc_auth(url: str, raise_errors: bool = False) -> tuple[str, str] | None:
    """The (login, password) of ``$NETRC`` or ``~/.netrc`` for the URL's host."""
    from netrc import NetrcParseError, netrc

    netrc_file = os.environ.get("NETRC")
    locations: Iterable[str] = (
        (netrc_file,) if netrc_file is not None else (f"~/{f}" for f in NETRC_FILES)
    )
    path = next((p for p in map(os.path.expanduser, locations) if os.path.exists(p)), None)
    host = urlparse(url).hostname
    if path is None or host is None:
        return None
    try:
        found = netrc(path).authenticators(host)
    except (NetrcParseError, OSError):
        if raise_errors:
            raise
        return None
    if found and any(found):
        login = found[0] or found[1]
        return (login or "", found[2] or "")
    return None


def should_bypass_proxies(url: str, no_proxy: str | None) -> bool:
    """Whether ``url`` is exempt from proxies by ``no_proxy`` (or ``$no_proxy``)."""
    if no_proxy is None:
        no_proxy = os.environ.get("no_proxy") or os.environ.get("NO_PROXY")
    parsed = urlparse(url)
    hostname = parsed.hostname
    if hostname is None:
        return True
    if no_proxy == "*":
        return True  # urllib's proxy_bypass rule, which requests falls back to
    if no_proxy:
        hosts = [h for h in no_proxy.replace(" ", "").split(",") if h]
        try:
            address = ipaddress.ip_address(hostname)
        except ValueError:
            address = None
        if address is not None:
            for entry in hosts:
                try:
                    if address in ipaddress.ip_network(entry, strict=False):
                        return True
                except ValueError:
                    continue
        else:
            with_port = f"{hostname}:{parsed.port}" if parsed.port else hostname
            for entry in hosts:
                entry = entry.lstrip(".")
                if entry in (hostname, with_port) or hostname.endswith("." + entry):
                    return True
                if with_port.endswith("." + entry):
                    return True
        return False
    if _ENV_ONLY:
        return False  # proxy_bypass reads only no_proxy there, which is empty
    try:
        return bool(proxy_bypass(hostname))
    except (TypeError, OSError):
        return False


_PROXY_ENV_SCHEMES = ("http", "https", "all", "no")
"""The ``<scheme>_proxy`` variables that can matter to an http(s) request (``select_proxy``
looks up the URL's scheme and ``all``)."""
_ENV_ONLY = sys.platform not in ("darwin", "win32")
"""Where ``urllib.request.getproxies`` reads nothing but the environment (elsewhere it also
reads the system's settings, so it is called as it is)."""


def _proxies_from_environment() -> dict[str, str]:
    """``urllib.request.getproxies_environment()`` for the variables above: lower-case
    names win, an empty lower-case one removes the proxy, upper-case ``HTTP_PROXY`` is
    ignored under CGI (``REQUEST_METHOD`` set). It reads 8 variables where urllib walks
    the whole environment twice, which is most of a small request's time."""
    environ = os.environ
    proxies: dict[str, str] = {}
    for scheme in _PROXY_ENV_SCHEMES:
        upper = environ.get(f"{scheme.upper()}_PROXY")
        if upper and not (scheme == "http" and "REQUEST_METHOD" in environ):
            proxies[scheme] = upper
        lower = environ.get(f"{scheme}_proxy")
        if lower is not None:
            if lower:
                proxies[scheme] = lower
            else:
                proxies.pop(scheme, None)
    return proxies


def _system_proxies() -> dict[str, str]:
    return _proxies_from_environment() if _ENV_ONLY else getproxies()


def get_environ_proxies(url: str, no_proxy: str | None = None) -> dict[str, str]:
    """The environment's proxies for ``url`` (none when ``no_proxy`` exempts it)."""
    return {} if should_bypass_proxies(url, no_proxy=no_proxy) else _system_proxies()


def select_proxy(url: str, proxies: Mapping[str, str] | None) -> str | None:
    """The proxy for ``url``: keys ``scheme://host``, ``scheme``, ``all://host``, ``all``."""
    proxies = proxies or {}
    parts = urlparse(url)
    if parts.hostname is None:
        return proxies.get(parts.scheme, proxies.get("all"))
    for key in (
        f"{parts.scheme}://{parts.hostname}",
        parts.scheme,
        f"all://{parts.hostname}",
        "all",
    ):
        if key in proxies:
            return proxies[key]
    return None


def super_len(o: Any) -> int:
    """The bytes left to read in ``o`` (a str, bytes, file...), 0 when unknown."""
    if isinstance(o, str):
        return len(o.encode("utf-8"))
    if hasattr(o, "__len__"):
        return len(o)
    if hasattr(o, "len"):
        return int(o.len)
    total = current = None
    if hasattr(o, "fileno"):
        try:
            total = os.fstat(o.fileno()).st_size
        except (OSError, AttributeError):
            total = None
    if hasattr(o, "tell"):
        try:
            current = o.tell()
        except OSError:
            current = total
        else:
            if total is None and hasattr(o, "seek"):
                try:
                    o.seek(0, 2)
                    total = o.tell()
                    o.seek(current)
                except (OSError, AttributeError):
                    total = 0
    return max(0, (total or 0) - (current or 0))


_LINK_SPLIT = re.compile(r", *<")


def parse_header_links(value: str) -> list[dict[str, str]]:
    """A ``Link`` header as a list of dicts (``url`` plus each parameter)."""
    links: list[dict[str, str]] = []
    replace_chars = " '\""
    value = value.strip(replace_chars)
    if not value:
        return links
    for val in _LINK_SPLIT.split(value):
        url, _, params = val.partition(";")
        link = {"url": url.strip("<> '\"")}
        for param in params.split(";"):
            key, sep, v = param.partition("=")
            if not sep:
                break
            link[key.strip(replace_chars)] = v.strip(replace_chars)
        links.append(link)
    return links


def iter_slices(string: bytes, slice_length: int | None) -> Iterator[bytes]:
    """``string`` in pieces of ``slice_length`` (the whole of it for ``None`` or < 1)."""
    pos = 0
    if slice_length is None or slice_length <= 0:
        slice_length = len(string)
    while pos < len(string):
        yield string[pos : pos + slice_length]
        pos += slice_length


def new_cookie_jar() -> RequestsCookieJar:
    return RequestsCookieJar()


def from_key_val_list(value: Any) -> dict[Any, Any] | None:
    """A mapping or pairs as a dict (``None`` stays ``None``)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, bool, int)):
        raise ValueError("cannot encode objects that are not 2-tuples")
    return dict(value)


def guess_filename(obj: Any) -> str | None:
    """The base name of a file object's ``name`` (``None`` for ``<stdin>``-like names)."""
    name = getattr(obj, "name", None)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if name and isinstance(name, str) and name[0] != "<" and name[-1] != ">":
        return os.path.basename(name)
    return None


def to_native_string(string: str | bytes, encoding: str = "ascii") -> str:
    """``string`` as ``str`` (bytes decoded with ``encoding``)."""
    return string if isinstance(string, str) else string.decode(encoding)


def unquote_header_value(value: str, is_filename: bool = False) -> str:
    """A header parameter value without its quotes (browser-style unescaping)."""
    if value and value[0] == value[-1] == '"':
        value = value[1:-1]
        if not is_filename or value[:2] != "\\\\":
            return value.replace("\\\\", "\\").replace('\\"', '"')
    return value


def parse_list_header(value: str) -> list[str]:
    """A comma-separated header (RFC 2068 lists, quoted strings kept whole) as a list."""
    from urllib.request import parse_http_list

    result = []
    for item in parse_http_list(value):
        if item[:1] == item[-1:] == '"':
            item = unquote_header_value(item[1:-1])
        result.append(item)
    return result


def parse_dict_header(value: str) -> dict[str, str | None]:
    """``key=value`` pairs of a header (quotes removed) as a dict; a key alone → ``None``."""
    from .auth import parse_dict_header as parse

    return parse(value)


def prepend_scheme_if_needed(url: str, new_scheme: str) -> str:
    """``url`` with ``new_scheme://`` in front when it has no scheme."""
    parsed = urlparse(url if "://" in url else f"{new_scheme}://{url}")
    return urlunparse(parsed)


def resolve_proxies(
    request: Any, proxies: Mapping[str, str] | None, trust_env: bool = True
) -> dict[str, str]:
    """``proxies`` plus the environment's proxy for the request's scheme (if trusted and
    the URL is not exempted by ``no_proxy``)."""
    proxies = proxies if proxies is not None else {}
    url = request.url or ""
    scheme = urlparse(url).scheme
    no_proxy = proxies.get("no_proxy")
    new_proxies = dict(proxies)
    if trust_env and not should_bypass_proxies(url, no_proxy=no_proxy):
        environ_proxies = get_environ_proxies(url, no_proxy=no_proxy)
        proxy = environ_proxies.get(scheme, environ_proxies.get("all"))
        if proxy:
            new_proxies.setdefault(scheme, proxy)
    return new_proxies


def dict_to_sequence(d: Any) -> Any:
    """``d.items()`` for a mapping, ``d`` itself otherwise."""
    return d.items() if hasattr(d, "items") else d


def dotted_netmask(mask: int) -> str:
    """``24`` → ``"255.255.255.0"``."""
    bits = 0xFFFFFFFF ^ (1 << 32 - mask) - 1
    return socket.inet_ntoa(struct.pack(">I", bits))


def is_ipv4_address(string_ip: str) -> bool:
    try:
        socket.inet_aton(string_ip)
    except OSError:
        return False
    return True


def is_valid_cidr(string_network: str) -> bool:
    """Whether ``string_network`` is ``a.b.c.d/n`` with 1 <= n <= 32."""
    if string_network.count("/") != 1:
        return False
    address, _, mask_text = string_network.partition("/")
    try:
        mask = int(mask_text)
    except ValueError:
        return False
    return 1 <= mask <= 32 and is_ipv4_address(address)


def address_in_network(ip: str, net: str) -> bool:
    """Whether IPv4 ``ip`` is inside ``net`` (``a.b.c.d/n``)."""
    try:
        return ipaddress.ip_address(ip) in ipaddress.ip_network(net, strict=False)
    except ValueError:
        return False


@contextlib.contextmanager
def set_environ(env_name: str, value: str | None) -> Iterator[None]:
    """Set ``os.environ[env_name]`` for the ``with`` block (nothing for ``None``)."""
    changed = value is not None
    if changed:
        old = os.environ.get(env_name)
        os.environ[env_name] = value  # type: ignore[assignment]
    try:
        yield
    finally:
        if changed:
            if old is None:
                del os.environ[env_name]
            else:
                os.environ[env_name] = old


@contextlib.contextmanager
def atomic_open(filename: str) -> Iterator[Any]:
    """Write a file atomically: a temporary file renamed over ``filename`` on success."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(filename) or None)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
        os.replace(tmp, filename)
    except BaseException:
        os.remove(tmp)
        raise


def extract_zipped_paths(path: str) -> str:
    """``path`` (requests unpacks CA bundles shipped inside zip imports; nodelay's CA
    bundle is a real file, so the path is returned as it is)."""
    return path


_HEADER_VALUE_RE = re.compile(r"^\S[^\r\n]*$|^$")
_HEADER_NAME_RE = re.compile(r"^[^:\s][^:\r\n]*$")


def check_header_validity(header: tuple[Any, Any]) -> None:
    """Raise ``InvalidHeader`` for a name or value with CR/LF, a leading space or a
    non-str/bytes type."""
    name, value = header
    for part, pattern, what in (
        (name, _HEADER_NAME_RE, "name"),
        (value, _HEADER_VALUE_RE, "value"),
    ):
        if isinstance(part, bytes):
            part = part.decode("latin1")
        if not isinstance(part, str):
            raise InvalidHeader(
                f"Header part ({part!r}) from {header} must be of type str or bytes, "
                f"not {type(part)}"
            )
        if not pattern.match(part):
            raise InvalidHeader(
                f"Invalid leading whitespace, reserved character(s), or return character(s) "
                f"in header {what}: {part!r}"
            )


def rewind_body(prepared_request: Any) -> None:
    """Seek a file body back to where it started (for a resend)."""
    seek = getattr(prepared_request.body, "seek", None)
    position = prepared_request._body_position
    if seek is None or not isinstance(position, int):
        raise UnrewindableBodyError("Unable to rewind request body for redirect.")
    try:
        seek(position)
    except OSError as exc:
        raise UnrewindableBodyError(
            "An error occurred when rewinding request body for redirect."
        ) from exc


_CHARSET_RE = re.compile(r'<meta.*?charset=["\']*(.+?)["\'>]', flags=re.I)
_PRAGMA_RE = re.compile(r'<meta.*?content=["\']*;?charset=(.+?)["\'>]', flags=re.I)
_XML_RE = re.compile(r'^<\?xml.*?encoding=["\']*(.+?)["\'>]')


def get_encodings_from_content(content: str) -> list[str]:
    """The charsets an HTML/XML text declares (meta tags, XML declaration)."""
    return _CHARSET_RE.findall(content) + _PRAGMA_RE.findall(content) + _XML_RE.findall(content)


def stream_decode_response_unicode(iterator: Iterable[bytes], r: Any) -> Iterator[Any]:
    """Decode ``iterator``'s chunks with ``r.encoding`` (bytes as they are without one)."""
    if r.encoding is None:
        yield from iterator
        return
    decoder = codecs.getincrementaldecoder(r.encoding)(errors="replace")
    for chunk in iterator:
        if rv := decoder.decode(chunk):
            yield rv
    if rv := decoder.decode(b"", final=True):
        yield rv


def get_unicode_from_response(r: Any) -> str:
    """``r.content`` decoded with the Content-Type charset (``r.text`` is the better way)."""
    encoding = get_encoding_from_headers(r.headers)
    if encoding:
        try:
            return str(r.content, encoding)
        except UnicodeError:
            pass
    try:
        return str(r.content, encoding or "utf-8", errors="replace")
    except (LookupError, TypeError):
        return str(r.content)
