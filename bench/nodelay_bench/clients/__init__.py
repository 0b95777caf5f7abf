"""Client adapters: one module per peer, the same tiny interface (see ``base``).

``CLIENTS`` maps a row name to ``(module of the adapter, import name of the client)``
so the lab can list and probe peers without importing any of them; the adapter module is
imported only in the worker subprocess that measures it.
"""

from __future__ import annotations

import importlib
import importlib.util

from ..workloads import WORKLOADS
from . import httpx_bridges

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .base import AsyncAdapter, SyncAdapter

__all__ = ["CLIENTS", "DEFAULT_CLIENTS", "OPT_IN", "WORKLOADS_OF", "load", "probe"]

CLIENTS: dict[str, tuple[str, str]] = {
    "nodelay": ("nodelay_sync", "nodelay"),
    "nodelay-async": ("nodelay_async", "nodelay"),
    "nodelay-readinto": ("nodelay_readinto", "nodelay"),
    "http.client": ("stdlib", "http.client"),
    "urllib3": ("urllib3_", "urllib3"),
    "requests": ("requests_", "requests"),
    "nodelay-under-requests": ("requests_nodelay", "requests"),
    "ceiling-requests": ("requests_ceiling", "requests"),
    "httpx": ("httpx_", "httpx"),
    "httpx-async": ("httpx_async", "httpx"),
    "aiohttp": ("aiohttp_", "aiohttp"),
    "pycurl": ("pycurl_", "pycurl"),
    "curl_cffi": ("curl_cffi_", "curl_cffi"),
    "niquests": ("niquests_", "niquests"),
    "rnet": ("rnet_", "rnet"),
    "rnet-async": ("rnet_async", "rnet"),
    "pyreqwest": ("pyreqwest_", "pyreqwest"),
    "pyreqwest-async": ("pyreqwest_async", "pyreqwest"),
    "httpr": ("httpr_", "httpr"),
    "primp": ("primp_", "primp"),
    "wreq": ("wreq_", "wreq"),
    "wreq-async": ("wreq_async", "wreq"),
    "pyqwest": ("pyqwest_", "pyqwest"),
    "pyqwest-async": ("pyqwest_async", "pyqwest"),
    "zapros": ("zapros_", "zapros"),
    "zapros-async": ("zapros_async", "zapros"),
    "asyncio-floor": ("asyncio_floor", "asyncio"),
}

# httpx's and httpx2's clients over each transport (workload k): registered from their module,
# which defines the rows without importing any library.
CLIENTS.update({name: ("httpx_bridges", module) for name, module in httpx_bridges.ROWS.items()})

WORKLOADS_OF: dict[str, frozenset[str]] = {
    **dict.fromkeys(httpx_bridges.ROWS, httpx_bridges.WORKLOADS),
    **dict.fromkeys(("httpx", "httpx-async"), frozenset(WORKLOADS)),  # k too: own transport
    # requests' Session over its own adapter and over nodelay's (k: 256 threads, one Session).
    **dict.fromkeys(("requests", "nodelay-under-requests"), frozenset(WORKLOADS)),
    # requests' Session over an adapter that does no I/O: what requests itself costs.
    "ceiling-requests": frozenset({"a", "b", "k"}),
}
"""The workloads of the rows named here; any other row runs every workload that is not
``Workload.listed_only``."""

OPT_IN = frozenset({"nodelay-readinto", "asyncio-floor"})
"""Rows run only when named in ``--clients``: variants of a nodelay row that differ from it
in one workload only (``nodelay-readinto``: d's streamed row), and the reference row
``asyncio-floor`` (``results.REFERENCES``)."""

DEFAULT_CLIENTS = tuple(name for name in CLIENTS if name not in OPT_IN)


def probe(name: str) -> str | None:
    """None if the client ``name`` looks importable, else the reason it is skipped."""
    _, module = CLIENTS[name]
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        found = None
    if found is None:
        return f"{module} is not installed (pip install -r bench/requirements.txt)"
    return None


def load(name: str) -> type[SyncAdapter] | type[AsyncAdapter]:
    """The adapter class for ``name`` (imports the client library)."""
    adapter_module, _ = CLIENTS[name]
    mod = importlib.import_module(f"{__name__}.{adapter_module}")
    rows: dict[str, type[SyncAdapter] | type[AsyncAdapter]] = getattr(mod, "ADAPTERS", {})
    cls: type[SyncAdapter] | type[AsyncAdapter] = rows.get(name) or mod.Adapter
    return cls
