"""The cheap environment reads (``_env.py``) agree with ``os.environ`` in every case."""

from __future__ import annotations

import os

import nodelay
import pytest
from nodelay._env import any_set, getenv
from nodelay._proxy import engine_proxy_options


def test_getenv_follows_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NODELAY_TEST_VAR", raising=False)
    assert getenv("NODELAY_TEST_VAR") is None
    monkeypatch.setenv("NODELAY_TEST_VAR", "a value")
    assert getenv("NODELAY_TEST_VAR") == "a value" == os.environ["NODELAY_TEST_VAR"]
    monkeypatch.setenv("NODELAY_TEST_VAR", "")
    assert getenv("NODELAY_TEST_VAR") == ""
    # A value that is not UTF-8 decodes as os.environ decodes it (surrogateescape).
    os.environb[b"NODELAY_TEST_VAR"] = b"\xff-bytes"
    assert getenv("NODELAY_TEST_VAR") == os.environ["NODELAY_TEST_VAR"]
    monkeypatch.delenv("NODELAY_TEST_VAR")
    assert getenv("NODELAY_TEST_VAR") is None


def test_any_set(monkeypatch: pytest.MonkeyPatch) -> None:
    names = ("NODELAY_TEST_A", "NODELAY_TEST_B")
    for name in names:
        monkeypatch.delenv(name, raising=False)
    assert not any_set(names)
    monkeypatch.setenv("NODELAY_TEST_B", "")
    assert any_set(names)


def test_a_replaced_os_environ_is_read_through_its_mapping(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "environ", {"NODELAY_TEST_VAR": "x", "https_proxy": "http://p:1"})
    assert getenv("NODELAY_TEST_VAR") == "x"
    assert any_set(("https_proxy",)) and not any_set(("http_proxy",))
    assert engine_proxy_options(None, True)["https_proxy"] == "http://p:1"


def test_proxy_variables_set_after_import_are_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)
    assert "http_proxy" not in engine_proxy_options(None, True)
    monkeypatch.setenv("ALL_PROXY", "http://proxy.invalid:3128")
    options = engine_proxy_options(None, True)
    assert options["http_proxy"] == options["https_proxy"] == "http://proxy.invalid:3128"
    assert engine_proxy_options(None, False) == {}
    nodelay.Client().close()  # a client picks it up without error
