"""tests/test_uploads.py again, with ``AsyncClient`` behind ``Client`` (see async_facade.py):
files and iterables streamed with the same framing (exact Content-Length, chunked), the
same replay rules (307/308, retries, ``StreamConsumed``) and memory bounds.

Async iterables (``content=`` only on ``AsyncClient``) are in test_async_uploads.py."""

from async_facade import async_clients, client  # noqa: F401
from test_uploads import *  # noqa: F403

# Module-level nodelay.post is the sync client whatever the facade.
del test_chunked_bytes_on_the_wire  # noqa: F821
# iter_bytes() on an async response: test_async_uploads.py has it with aiter_bytes().
del test_streamed_response_to_a_streamed_upload  # noqa: F821
