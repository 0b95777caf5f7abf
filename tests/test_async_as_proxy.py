"""tests/test_proxy.py again, with ``AsyncClient`` behind ``Client`` (see async_facade.py):
forwarding in absolute form, CONNECT tunnels (also inside an https:// proxy's TLS), proxy
credentials, the environment rules and ``ProxyError``s, through the async driver.

Tests that call the module-level helpers (``nodelay.get``/``post``) or the CLI exercise the
sync client whatever the facade; they run here again harmlessly."""

from async_facade import async_clients, client  # noqa: F401
from test_proxy import *  # noqa: F403
