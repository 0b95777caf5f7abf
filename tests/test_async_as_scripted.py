"""tests/test_scripted.py again, with ``AsyncClient`` behind ``Client`` (see async_facade.py)."""

from async_facade import async_clients, client  # noqa: F401
from test_scripted import *  # noqa: F403
