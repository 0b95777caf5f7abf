"""tests/test_retries.py again, with ``AsyncClient`` behind ``Client`` (see async_facade.py)."""

from async_facade import async_clients, client  # noqa: F401
from test_retries import *  # noqa: F403
