"""What a fetch job does on one worker, whatever runs it (``nodelay.ext.dask``,
``nodelay.ext.ray``): the job's options, the one client per worker process, a
partition's requests sent as one batch, each outcome as a record, and records written
as Parquet.

A record is a dict: ``url``, ``status`` (int, or None when no response came),
``http_version`` (``"HTTP/1.1"``...), ``headers`` (the response's fields as
``(name, value)`` pairs, in received order), ``content`` (bytes), ``elapsed`` (seconds,
None on failure) and ``error`` (None, or the exception's class name, ``": "`` and its
message). A status such as 503 is a status, not an error: a failure (refused
connection, timeout...) is a record, never an exception that kills the partition.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import threading
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from .._core import DEFAULTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any, TypeAlias

    from .._client import Client

    # A URL string, or a request dict: ``method``, ``url``, ``headers`` (a dict),
    # ``content`` (bytes or str).
    Item: TypeAlias = "str | Mapping[str, Any]"
    Record: TypeAlias = "dict[str, Any]"

__all__ = [
    "DEFAULT_JOB_CONCURRENCY",
    "DEFAULT_PARTITION_SIZE",
    "RECORD_FIELDS",
    "JobOptions",
    "fetch_partition",
    "group_by_host",
    "job_options",
    "write_parquet",
]

DEFAULT_PARTITION_SIZE = 1000
"""URLs per partition: a partition is one batch on one worker; large enough that the
scheduler's cost per task (milliseconds) is spread over many requests, small enough that
a lost worker costs little to redo."""

DEFAULT_JOB_CONCURRENCY: int = DEFAULTS["batch_concurrency"]
"""Requests in flight per worker (``get_many``'s default)."""

RECORD_FIELDS = ("url", "status", "http_version", "headers", "content", "elapsed", "error")
"""The fields of a record, in order."""

_JOB_KEYS = frozenset(
    ("partition_size", "concurrency", "per_host", "rate", "retries", "timeout",
     "partition_by_host", "write_to")
)  # fmt: skip


@dataclass(frozen=True)
class JobOptions:
    """A fetch job's options, checked on the driver and shipped to every worker."""

    partition_size: int = DEFAULT_PARTITION_SIZE
    concurrency: int = DEFAULT_JOB_CONCURRENCY
    per_host: int | None = None
    rate: float | None = None
    retries: Any = None
    timeout: Any = None
    partition_by_host: bool = False
    write_to: str | None = None
    client: dict[str, Any] = field(default_factory=dict)
    """Any other ``nodelay.Client`` keyword."""

    def client_kwargs(self) -> dict[str, Any]:
        """The keywords of each worker's ``nodelay.Client``."""
        from .._config import Limits, RateLimit

        kwargs = dict(self.client)
        limits = kwargs.pop("limits", None) or Limits()
        if self.per_host is not None:
            limits = Limits(
                limits.max_connections,
                limits.max_keepalive_connections,
                limits.keepalive_expiry,
                max_connections_per_host=self.per_host,
            )
        kwargs["limits"] = limits
        if self.rate is not None:
            kwargs["rate_limit"] = RateLimit(self.rate)
        if self.retries is not None:
            kwargs["retries"] = self.retries
        if self.timeout is not None:
            kwargs["timeout"] = self.timeout
        return kwargs


def job_options(options: Mapping[str, Any]) -> JobOptions:
    """The options of ``fetch(urls, **options)``: the job's own, the rest for the client.
    Checked here, on the driver, by building the client once: a bad option fails before
    any task runs."""
    own = {k: v for k, v in options.items() if k in _JOB_KEYS}
    job = JobOptions(**own, client={k: v for k, v in options.items() if k not in _JOB_KEYS})
    for name in ("partition_size", "concurrency"):
        value = getattr(job, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int of at least 1, got {value!r}")
    from .._client import Client

    try:
        Client(**job.client_kwargs()).close()
    except TypeError as exc:
        raise TypeError(f"fetch(): {exc}") from None
    try:
        pickle.dumps(job)
    except Exception as exc:
        message = f"fetch(): the options must be picklable to reach the workers: {exc}"
        raise TypeError(message) from None
    return job


# One client per worker process and option set, made at its first partition and kept for
# the next ones (warm connections, one pool bounding the worker's connections to a host).
# The pid makes it safe after fork: a forked child makes its own.
_clients: dict[bytes, tuple[int, Client]] = {}
_clients_lock = threading.Lock()


def worker_client(job: JobOptions) -> Client:
    """This process's client for ``job``'s options."""
    key = pickle.dumps(job.client_kwargs())
    pid = os.getpid()
    with _clients_lock:
        found = _clients.get(key)
        if found is not None and found[0] == pid:
            return found[1]
        from .._client import Client

        client = Client(**job.client_kwargs())
        _clients[key] = (pid, client)
        return client


def close_worker_clients() -> None:
    """Close this process's clients (a worker shutting down, a test between jobs)."""
    with _clients_lock:
        clients = [client for pid, client in _clients.values() if pid == os.getpid()]
        _clients.clear()
    for client in clients:
        client.close()


def _url_of(item: Item) -> str:
    if isinstance(item, str):
        return item
    return str(item["url"])


def host_of(item: Item) -> str:
    """The origin an item goes to (scheme, host, port), as the engine's limits count."""
    parts = urlsplit(_url_of(item))
    return f"{parts.scheme}://{parts.netloc}".lower()


def group_by_host(items: Iterable[Item], partition_size: int) -> list[list[Item]]:
    """Partitions in which each origin's items all sit together (one partition holds
    every item of an origin, however many: its budget on one worker is then not
    multiplied by the number of workers); small origins are packed together up to
    ``partition_size`` items."""
    by_host: dict[str, list[Item]] = {}
    for item in items:
        by_host.setdefault(host_of(item), []).append(item)
    partitions: list[list[Item]] = []
    current: list[Item] = []
    for group in by_host.values():
        if len(group) >= partition_size:
            partitions.append(group)
            continue
        if len(current) + len(group) > partition_size:
            partitions.append(current)
            current = []
        current.extend(group)
    if current:
        partitions.append(current)
    return partitions


def _failure(url: str, exc: BaseException) -> Record:
    return {
        "url": url,
        "status": None,
        "http_version": None,
        "headers": [],
        "content": b"",
        "elapsed": None,
        "error": f"{type(exc).__name__}: {exc}",
    }


def _record(url: str, result: Any) -> Record:
    """The record of one request's outcome (a response or the exception it raised)."""
    if isinstance(result, BaseException):
        return _failure(url, result)
    raw = result._raw
    return {
        "url": url,
        "status": raw.status,
        "http_version": raw.version,
        # The engine's list of pairs as it is: no Headers object, no copy.
        "headers": raw.headers(),
        "content": result.content,
        "elapsed": raw.elapsed,
        "error": None,
    }


def _request_spec(item: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]]:
    kwargs: dict[str, Any] = {}
    if item.get("headers") is not None:
        kwargs["headers"] = dict(item["headers"])
    if item.get("content") is not None:
        kwargs["content"] = item["content"]
    return str(item.get("method") or "GET"), str(item["url"]), kwargs


def fetch_partition(items: Sequence[Item], job: JobOptions) -> list[Record]:
    """Send a partition's requests with this process's client and return one record per
    item, in order. Without ``retries`` the partition is one ``get_many`` / ``map``
    batch on the engine's runtime; with them each request goes through the client's
    ``Retry`` flow, ``concurrency`` threads at a time (the GIL is released while they
    wait on the network)."""
    if not items:
        return []
    client = worker_client(job)
    urls = [_url_of(item) for item in items]
    if job.retries is not None:
        return _fetch_threaded(client, items, urls, job.concurrency)
    concurrency = min(job.concurrency, len(items))
    try:
        if all(isinstance(item, str) for item in items):
            results = client.get_many(urls, concurrency=concurrency, return_exceptions=True)
        else:
            specs = [
                ("GET", item, {}) if isinstance(item, str) else _request_spec(item)
                for item in items
            ]
            results = client.map(specs, concurrency=concurrency, return_exceptions=True)
    except Exception:
        # A bad item (an invalid URL) refuses the whole batch before anything is sent:
        # each item alone then, so that only the bad one becomes a failure record.
        return [_fetch_one(client, item, url) for item, url in zip(items, urls, strict=True)]
    return list(map(_record, urls, results))


def _fetch_one(client: Client, item: Item, url: str) -> Record:
    try:
        if isinstance(item, str):
            return _record(url, client.get(url))
        method, url, kwargs = _request_spec(item)
        return _record(url, client.request(method, url, **kwargs))
    except Exception as exc:
        return _failure(url, exc)


def _fetch_threaded(
    client: Client, items: Sequence[Item], urls: list[str], concurrency: int
) -> list[Record]:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(concurrency, len(items))) as pool:
        return list(pool.map(lambda pair: _fetch_one(client, *pair), zip(items, urls, strict=True)))


def parquet_name(records: Sequence[Record]) -> str:
    """A partition's file name, from its URLs: a partition run again (its worker died
    after writing) rewrites its own file instead of adding a second one."""
    digest = hashlib.sha256()
    for record in records:
        digest.update(record["url"].encode())
        digest.update(b"\n")
    return f"part-{digest.hexdigest()[:24]}.parquet"


def write_parquet(records: Sequence[Record], directory: str) -> dict[str, Any]:
    """Write a partition's records as one Parquet file under ``directory`` (a local path
    or an fsspec URL) and return its counts: ``path``, ``records``, ``errors``. Headers
    are a list of ``[name, value]`` lists, content binary."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {name: [r[name] for r in records] for name in RECORD_FIELDS}
    table = pa.table(
        columns,
        schema=pa.schema(
            [
                ("url", pa.string()),
                ("status", pa.int32()),
                ("http_version", pa.string()),
                ("headers", pa.list_(pa.list_(pa.string()))),
                ("content", pa.binary()),
                ("elapsed", pa.float64()),
                ("error", pa.string()),
            ]
        ),
    )
    name = parquet_name(records)
    if "://" in directory:
        import fsspec

        fs, root = fsspec.core.url_to_fs(directory)
        fs.makedirs(root, exist_ok=True)
        path = f"{root.rstrip('/')}/{name}"
        with fs.open(path, "wb") as out:
            pq.write_table(table, out)
        path = f"{directory.rstrip('/')}/{name}"
    else:
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, name)
        # Written aside, then renamed: a reader never sees half a file.
        partial = f"{path}.{os.getpid()}.partial"
        pq.write_table(table, partial)
        os.replace(partial, path)
    errors = sum(1 for r in records if r["error"] is not None)
    return {"path": path, "records": len(records), "errors": errors}
