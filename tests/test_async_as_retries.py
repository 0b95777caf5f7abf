"""tests/test_retries.py again, with ``AsyncClient`` behind ``Client`` (see async_facade.py)."""

from async_facade import async_clients, client  # noqa: F401
from test_retries import *  # noqa: F403

# Generator bodies: AsyncClient reads them into memory first (it does not stream request
# bodies yet), so they can be sent again, unlike Client's streamed ones.
del test_read_error_with_a_consumed_generator_is_not_replayed  # noqa: F821
del test_connect_retry_resends_a_generator_body_nothing_was_pulled_from  # noqa: F821
