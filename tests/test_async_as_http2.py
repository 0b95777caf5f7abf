"""tests/test_http2.py again, with ``AsyncClient`` behind ``Client`` (see async_facade.py):
h2 by ALPN over TLS with fallback to HTTP/1.1, h2c with prior knowledge, decoding, cookies,
redirects, streaming and timeouts over the async driver's HTTP/2 path.

Tasks sharing one connection, cancellation and uvloop are in test_async_http2.py."""

from async_facade import async_clients, client  # noqa: F401
from test_http2 import *  # noqa: F403

# Threads calling into one event loop, fork and Ctrl-C of a blocking call, the CLI: these
# are about the sync Client (test_async_http2.py has the tasks' version of the first).
del test_threads_share_one_connection  # noqa: F821
del test_forked_child_gets_its_own_connection  # noqa: F821
del test_ctrl_c_interrupts_an_h2_request  # noqa: F821
del test_get_command_speaks_h2c  # noqa: F821
# iter_bytes() on an async response: test_async_http2.py streams with aiter_*.
del test_streaming_over_h2  # noqa: F821
