"""tests/hostile/test_hostile_framing.py again, with ``AsyncClient`` behind ``Client`` (see
tests/async_facade.py)."""

from async_facade import async_clients, client  # noqa: F401

from hostile.test_hostile_framing import *  # noqa: F403
