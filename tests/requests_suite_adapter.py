"""pytest plugin for requests' own test suite (``make requests-suite``): every
``requests.Session`` made during the run mounts ``nodelay.ext.requests.Adapter`` where it
would mount requests' ``HTTPAdapter`` (``requests.sessions.HTTPAdapter`` is the name
``Session.__init__`` looks up). Loaded with ``-p requests_suite_adapter`` and ``tests/`` on
``PYTHONPATH``.

``KNOWN_DIFFERENCES`` lists the suite's tests that fail with the adapter, each with its
reason (docs/requests-adapter.md); they are marked ``xfail(strict=True)``, so one that
starts passing fails the run until it is taken off the list.
"""

from __future__ import annotations

import socket

import pytest
import requests.sessions
from nodelay.ext.requests import Adapter

_POOL_INTERNALS = (
    "reads urllib3's PoolManager.pools, which the adapter does not fill: its connections "
    "are the engine's, one pool per TLS setting (Adapter.engine_for)"
)

KNOWN_DIFFERENCES: dict[str, str] = {
    "tests/test_lowlevel.py::test_chunked_encoding_error": (
        "a response head cut off by the server (no blank line) is a ConnectionError: the "
        "engine refuses an unfinished head, where http.client takes the end of the "
        "connection as the end of the head and fails later, reading the chunked body"
    ),
    "tests/test_lowlevel.py::test_conflicting_content_lengths": (
        "conflicting Content-Length fields are a ConnectionError, not InvalidHeader: the "
        "engine rejects the head with RemoteProtocolError, which has no finer kind to map"
    ),
    "tests/test_requests.py::TestPreparingURLs"
    "::test_different_connection_pool_for_tls_settings_verify_True": _POOL_INTERNALS,
    "tests/test_requests.py::TestPreparingURLs"
    "::test_different_connection_pool_for_tls_settings_verify_bundle_expired_cert": (
        _POOL_INTERNALS
    ),
    "tests/test_requests.py::TestPreparingURLs"
    "::test_different_connection_pool_for_tls_settings_verify_bundle_unexpired_cert": (
        _POOL_INTERNALS
    ),
}
"""Test node id (relative to the suite's root) → why it fails with nodelay's adapter."""

_TARPIT = (
    "expects connects to 10.255.255.1 to hang; this machine's network answers them, so "
    "it fails with requests' own adapter too"
)

ENVIRONMENT: dict[str, str] = {
    "tests/test_requests.py::TestTimeout::test_connect_timeout[timeout0]": _TARPIT,
    "tests/test_requests.py::TestTimeout::test_connect_timeout[timeout1]": _TARPIT,
    "tests/test_requests.py::TestTimeout::test_total_timeout_connect[timeout0]": _TARPIT,
    "tests/test_requests.py::TestTimeout::test_total_timeout_connect[timeout1]": _TARPIT,
}
"""Tests that need a network this machine does not have, skipped in the adapter's run (and
reported as failures of the run as released, where they fail the same way)."""


_SOCKS5_NEEDS_DNS_PREFIX = "tests/test_lowlevel.py::test_use_proxy_from_environment["
_SOCKS5_NEEDS_DNS = (
    "with a socks5:// proxy the engine resolves the target (httpbin.org) before it "
    "connects to the proxy, where PySocks resolves it after its greeting; this machine "
    "cannot resolve httpbin.org, so no connection reaches the test's fake proxy "
    "(tests/test_ext_requests_socks.py covers the adapter's SOCKS)"
)
"""Tests skipped only where ``httpbin.org`` does not resolve (``_resolves``)."""


def _resolves(host: str) -> bool:
    try:
        socket.getaddrinfo(host, 80)
    except OSError:
        return False
    return True


def pytest_configure(config: pytest.Config) -> None:
    requests.sessions.HTTPAdapter = Adapter  # type: ignore[misc]


def pytest_report_header(config: pytest.Config) -> str:
    return "requests' sessions mount nodelay.ext.requests.Adapter (tests/requests_suite_adapter.py)"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    needs_dns = [item for item in items if item.nodeid.startswith(_SOCKS5_NEEDS_DNS_PREFIX)]
    if needs_dns and not _resolves("httpbin.org"):
        for item in needs_dns:
            item.add_marker(pytest.mark.skip(reason=_SOCKS5_NEEDS_DNS))
    for item in items:
        reason = KNOWN_DIFFERENCES.get(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
        reason = ENVIRONMENT.get(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=reason))
