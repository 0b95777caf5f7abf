"""The interop matrix's own machinery, without its servers (the matrix itself runs with
``make interop``, never in the default pytest run): how connections are seen, how a cell's
verdict is reached, how the generated section of the doc is rewritten."""

from __future__ import annotations

import socket
from pathlib import Path

from interop import checks, conntrack, report, site
from interop.servers.base import Endpoint


def test_conntrack_sees_this_process_connections_to_a_port() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        assert conntrack.established_local_ports(port) == set()
        with socket.create_connection(("127.0.0.1", port)) as one:
            peer, _ = server.accept()
            with peer, socket.create_connection(("127.0.0.1", port)) as two:
                peer2, _ = server.accept()
                with peer2:
                    seen = conntrack.established_local_ports(port)
                    # The server's accepted sockets are ours too but their remote port is
                    # the client's, not ``port``: only the two client sides count.
                    assert seen == {one.getsockname()[1], two.getsockname()[1]}
        assert conntrack.established_local_ports(port) == set()


def _cell(nodelay: str, httpx: str) -> report.Cell:
    cell = report.Cell("srv", "h2", "c")
    cell.outcomes["nodelay"] = report.Outcome(nodelay, "", 0.0)
    cell.outcomes["httpx"] = report.Outcome(httpx, "", 0.0)
    return cell


def test_verdict_blames_nodelay_only_when_httpx_does_not_fail() -> None:
    assert _cell("fail", "pass").verdict() == "ours"
    assert _cell("fail", "n/a").verdict() == "ours"
    assert _cell("fail", "fail").verdict() == "server"
    assert _cell("pass", "fail").verdict() == "pass"
    assert _cell("n/a", "n/a").verdict() == "n/a"


def test_doc_rewrite_keeps_the_prose_around_the_markers(tmp_path: Path) -> None:
    doc = tmp_path / "interop.md"
    doc.write_text(f"# Title\n\nprose before\n\n{report.BEGIN}\nold\n{report.END}\n\nprose after\n")
    results = report.Results(["c"], ["nodelay", "httpx"])
    ep = Endpoint("srv", "h2", "https://localhost:1", True)
    results.add(ep, "c", "nodelay", report.Outcome("fail", "RemoteProtocolError: boom", 0.1))
    results.add(ep, "c", "httpx", report.Outcome("pass", "", 0.1))
    report.write_doc(doc, tmp_path / "interop.json", results)
    text = doc.read_text()
    assert text.startswith("# Title\n\nprose before\n\n")
    assert text.endswith(f"{report.END}\n\nprose after\n")
    assert "old" not in text
    assert "**✗** / ✓" in text and "RemoteProtocolError: boom" in text
    assert results.ours() and (tmp_path / "interop.json").exists()


def test_site_files_have_their_sizes_and_check_names_are_unique() -> None:
    for name, size in site.STATIC_FILES.items():
        assert len(site.file_bytes(name)) == size
    assert 90_000 < len(site.page_bytes()) < 130_000
    names = [c.name for c in checks.CHECKS]
    assert len(names) == len(set(names))
