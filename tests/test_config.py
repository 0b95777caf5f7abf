"""``Timeout``, ``Limits`` and the named defaults."""

from __future__ import annotations

import pickle

import nodelay
import pytest
from nodelay import _config

pytestmark = pytest.mark.both_drivers


def test_defaults_are_named_constants() -> None:
    assert _config.DEFAULT_CONNECT_TIMEOUT == 10.0
    assert _config.DEFAULT_READ_TIMEOUT == 30.0
    assert _config.DEFAULT_WRITE_TIMEOUT == 30.0
    assert _config.DEFAULT_POOL_TIMEOUT == 30.0
    assert _config.DEFAULT_MAX_REDIRECTS == 20
    assert _config.DEFAULT_MAX_CONNECTIONS == 100
    # httpx's keep-alive cap (docs/pool.md, "Keep-alive default").
    assert _config.DEFAULT_MAX_KEEPALIVE == 20
    assert _config.DEFAULT_KEEPALIVE_EXPIRY == 5.0


def test_timeout_default() -> None:
    assert nodelay.Timeout().as_tuple() == (10.0, 30.0, 30.0, 30.0, None)


def test_timeout_single_value_and_overrides() -> None:
    assert nodelay.Timeout(5.0).as_tuple() == (5.0, 5.0, 5.0, 5.0, None)
    assert nodelay.Timeout(5, connect=1).as_tuple() == (1.0, 5.0, 5.0, 5.0, None)
    assert nodelay.Timeout(5, total=60).as_tuple() == (5.0, 5.0, 5.0, 5.0, 60.0)
    assert nodelay.Timeout(read=2).as_tuple() == (10.0, 2.0, 30.0, 30.0, None)
    assert nodelay.Timeout(5, pool=None).pool is None


def test_timeout_none_disables_everything() -> None:
    assert nodelay.Timeout(None).as_tuple() == (None, None, None, None, None)


def test_timeout_from_pair_and_instance() -> None:
    assert nodelay.Timeout((3, 7)).as_tuple() == (3.0, 7.0, 30.0, 30.0, None)
    t = nodelay.Timeout(2, total=9)
    assert nodelay.Timeout(t) == t
    assert nodelay.Timeout(t, read=1).as_tuple() == (2.0, 1.0, 2.0, 2.0, 9.0)


def test_timeout_equality_hash_repr_pickle() -> None:
    assert nodelay.Timeout(5) == nodelay.Timeout(5.0)
    assert nodelay.Timeout(5) != nodelay.Timeout(6)
    assert hash(nodelay.Timeout(5)) == hash(nodelay.Timeout(5.0))
    assert repr(nodelay.Timeout(5)) == "Timeout(timeout=5.0)"
    assert repr(nodelay.Timeout(5, read=1)) == (
        "Timeout(connect=5.0, read=1.0, write=5.0, pool=5.0)"
    )
    t = nodelay.Timeout(1, total=3)
    assert pickle.loads(pickle.dumps(t)) == t


@pytest.mark.parametrize("bad", ["5", -1, (1, 2, 3), True])
def test_timeout_rejects_bad_values(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        nodelay.Timeout(bad)  # type: ignore[arg-type]


def test_limits() -> None:
    limits = nodelay.Limits()
    assert (limits.max_connections, limits.max_keepalive_connections, limits.keepalive_expiry) == (
        100,
        20,
        5.0,
    )
    assert nodelay.Limits(max_keepalive=3).max_keepalive_connections == 3
    assert nodelay.Limits(max_keepalive=3).max_keepalive == 3
    assert nodelay.Limits(max_connections=None).max_connections is None
    assert nodelay.Limits(10, 5, 1.0) == nodelay.Limits(
        max_connections=10, max_keepalive_connections=5, keepalive_expiry=1.0
    )
    assert "max_connections=10" in repr(nodelay.Limits(10))
    with pytest.raises(ValueError):
        nodelay.Limits(max_connections=-1)


def test_client_accepts_every_timeout_form() -> None:
    for value, expected in [
        (None, (None, None, None, None, None)),
        (2.5, (2.5, 2.5, 2.5, 2.5, None)),
        ((1, 4), (1.0, 4.0, 30.0, 30.0, None)),
        (nodelay.Timeout(3, total=8), (3.0, 3.0, 3.0, 3.0, 8.0)),
    ]:
        with nodelay.Client(timeout=value) as client:  # type: ignore[arg-type]
            assert client.timeout.as_tuple() == expected
    with nodelay.Client() as client:
        assert client.timeout == nodelay.Timeout()
        client.timeout = 1
        assert client.timeout == nodelay.Timeout(1)
