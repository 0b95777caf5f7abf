"""tests/test_send.py again, with ``AsyncClient`` behind ``Client`` (see async_facade.py).

Not repeated: the ``stream=True`` test (a streamed async response is read with
``aiter_bytes``, not the sync iterator it uses) and the async-iterable test (it drives an
``AsyncClient`` itself already)."""

from async_facade import async_clients, client  # noqa: F401
from test_send import (  # noqa: F401
    test_a_request_made_by_hand,
    test_a_streamed_body_is_read_by_send,
    test_bad_arguments_fail_before_sending,
    test_build_request_merges_the_client_defaults,
    test_changes_made_before_send_are_sent,
    test_send_adds_jar_and_request_cookies,
    test_send_options,
)
