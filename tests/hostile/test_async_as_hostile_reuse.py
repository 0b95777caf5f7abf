"""tests/hostile/test_hostile_reuse.py again, with ``AsyncClient`` behind ``Client`` (see
tests/async_facade.py)."""

from async_facade import async_clients, client  # noqa: F401

from hostile.test_hostile_reuse import *  # noqa: F403

# These share one Client between threads (a sync-only pattern; the facade's event loop runs
# on one thread). Their async counterparts are in tests/test_async_client.py.
del test_h30_pool_timeout_when_every_connection_is_busy  # noqa: F821
del test_h30_waiter_served_when_a_connection_frees_up  # noqa: F821
del test_h28_retry_goes_to_a_fresh_connection_not_another_idle_one  # noqa: F821
# A signal delivered to another thread reaches an asyncio loop only through a wake-up fd
# (asyncio.run installs one; this facade's bare loop has none): not a client matter.
del test_h29_ctrl_c_noticed_while_not_blocked_in_a_read  # noqa: F821
