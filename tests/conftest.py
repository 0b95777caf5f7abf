"""Shared fixtures: the embedded server, a client, scripted raw-socket servers and a test
certificate authority."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator, Sequence

import nodelay
import pytest
import trustme
from nodelay import _core
from scripted import ScriptedServer, Step

# A suite started with SIGINT ignored (a background job of a non-interactive shell: `make
# test &`) passes SIG_IGN on to every child process, where Python then installs no
# KeyboardInterrupt handler and the Ctrl-C tests wait for their timeouts. A handled signal
# is reset to the default on exec, so restoring Python's handler here fixes the children.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ALPHABET = b"abcdefghijklmnopqrstuvwxyz0123456789"


def expected_bytes(n: int) -> bytes:
    """The body of the embedded server's ``/bytes/{n}`` and ``/chunked/{n}`` routes."""
    return (ALPHABET * (n // len(ALPHABET) + 1))[:n]


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    """A test certificate authority, one per test module."""
    return trustme.CA()


@pytest.fixture(scope="module")
def ca_file(ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> str:
    """``ca``'s certificate as a PEM file (``verify=ca_file``)."""
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return str(path)


@pytest.fixture(scope="module")
def identity(ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A certificate for localhost signed by ``ca``, for a TLS test server: (cert file, key
    file)."""
    leaf = ca.issue_cert("localhost", "127.0.0.1")
    folder = tmp_path_factory.mktemp("leaf")
    cert, key = folder / "cert.pem", folder / "key.pem"
    leaf.cert_chain_pems[0].write_to_path(str(cert))
    for extra in leaf.cert_chain_pems[1:]:
        extra.write_to_path(str(cert), append=True)
    leaf.private_key_pem.write_to_path(str(key))
    return str(cert), str(key)


@pytest.fixture(scope="session")
def server() -> Iterator[_core.TestServer]:
    """The embedded test server (Rust), shared by the whole session."""
    srv = _core.TestServer("127.0.0.1", 0, 2)
    yield srv
    srv.close()


@pytest.fixture(scope="session")
def other_server() -> Iterator[_core.TestServer]:
    """A second embedded server: another origin (same host, other port)."""
    srv = _core.TestServer("127.0.0.1", 0, 1)
    yield srv
    srv.close()


@pytest.fixture
def client() -> Iterator[nodelay.Client]:
    with nodelay.Client() as c:
        yield c


@pytest.fixture
def scripted() -> Iterator[Callable[..., ScriptedServer]]:
    """Factory: ``scripted(script0, script1, ...)`` starts a ``ScriptedServer``; all are
    stopped at teardown."""
    servers: list[ScriptedServer] = []

    def make(*scripts: Sequence[Step]) -> ScriptedServer:
        srv = ScriptedServer(*scripts)
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        srv.close()
