"""tests/test_total_budget.py again, with ``AsyncClient`` behind ``Client`` (see
async_facade.py)."""

from async_facade import async_clients, client  # noqa: F401
from test_total_budget import *  # noqa: F403
