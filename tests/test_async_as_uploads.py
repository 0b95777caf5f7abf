"""tests/test_uploads.py again, with ``AsyncClient`` behind ``Client`` (see async_facade.py).

AsyncClient reads file and iterable bodies into memory before sending (no streamed
uploads yet): the wire format checks that depend on streaming are left to test_uploads.py.
"""

from async_facade import async_clients, client  # noqa: F401
from test_uploads import *  # noqa: F403

# Streaming semantics (chunked framing on the wire, memory not proportional to the file,
# consumed generators, files changing size mid-upload, hand-built Upload bodies):
# AsyncClient buffers these bodies, so these checks belong to the sync Client only.
del test_generator_content_is_sent_chunked  # noqa: F821
del test_chunked_bytes_on_the_wire  # noqa: F821  (module-level nodelay.post: sync only)
del test_list_of_bytes_can_be_replayed  # noqa: F821
del test_consumed_generator_cannot_be_sent_again  # noqa: F821
del test_redirect_307_with_a_generator_raises_stream_consumed  # noqa: F821
del test_file_upload_memory_is_not_proportional_to_its_size  # noqa: F821
del test_multipart_file_upload_memory_is_not_proportional  # noqa: F821
del test_unsized_file_is_sent_chunked  # noqa: F821
del test_file_that_shrinks_during_upload_fails  # noqa: F821
del test_large_multipart_is_streamed_with_exact_length  # noqa: F821
del test_tuple_of_bytes_is_content_like_a_list  # noqa: F821
del test_streamed_response_to_a_streamed_upload  # noqa: F821
