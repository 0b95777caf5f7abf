"""Fetch jobs on Dask: ``nodelay.ext.dask.fetch(urls, **options) -> dask.bag.Bag``.

Each partition is one batch of requests on one worker (``get_many`` on the engine's
runtime, the GIL released), sent by the worker process's one ``nodelay.Client``
(made at its first partition, reused by the next ones, made again in a forked child).
Every outcome is a record (``nodelay.ext._jobs``): a 503 is a status, a refused
connection or a timeout an ``error`` string, never an exception that fails the task. A
worker that dies takes its unfinished partitions with it; Dask runs them again elsewhere,
so every URL still appears once in the output.

``urls``: URL strings (a list or any iterable), or a ``dask.bag.Bag`` of URL strings or
of request dicts (``method``, ``url``, ``headers`` as a dict, ``content``). Options:

- ``partition_size`` (1000): URLs per partition.
- ``concurrency`` (32): requests in flight per worker.
- ``per_host``: connections open at once per origin, per worker
  (``Limits(max_connections_per_host=)``).
- ``rate``: requests per second per origin, per worker (``RateLimit(rate)``).
- ``retries``, ``timeout``: as ``nodelay.Client``'s.
- ``partition_by_host`` (False): each origin's URLs all in one partition, so that one
  worker sends them all and ``per_host`` / ``rate`` hold for the whole job rather than
  per worker.
- ``write_to``: a directory or fsspec URL; each partition then writes its records there
  as one Parquet file, and the bag holds one count per partition (``path``, ``records``,
  ``errors``) instead of the records: nothing but counts passes through the driver.
- Any other ``nodelay.Client`` keyword (``headers``, ``http2``, ``follow_redirects``...).

Dask is imported when ``fetch`` is called (``pip install 'nodelay[dask]'``).
"""

from __future__ import annotations

from ._jobs import fetch_partition, group_by_host, host_of, job_options, write_parquet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from ._jobs import Item, JobOptions, Record

__all__ = ["fetch"]

_EXTRA_HINT = "nodelay.ext.dask needs Dask with bags: pip install 'nodelay[dask]'"


def _bag_module() -> Any:
    try:
        import dask.bag
    except ImportError as exc:
        raise ImportError(f"{_EXTRA_HINT} ({exc})") from exc
    return dask.bag


def fetch(urls: Iterable[Item] | Any, **options: Any) -> Any:
    """A ``dask.bag.Bag`` of one record per URL (or, with ``write_to=``, of one count per
    partition); see the module's docstring for the options. Nothing is sent until the
    bag is computed."""
    db = _bag_module()
    job = job_options(options)
    if isinstance(urls, db.Bag):
        bag = urls
        if job.partition_by_host:
            bag = bag.groupby(host_of, npartitions=bag.npartitions).map_partitions(_ungroup)
    else:
        if isinstance(urls, str | bytes):
            raise TypeError("urls must be an iterable of URLs or a dask Bag, not a single str")
        items = list(urls)
        for item in items:
            if not isinstance(item, str) and not (isinstance(item, dict) and "url" in item):
                raise TypeError(
                    f"each URL must be a str or a request dict with 'url', got {item!r}"
                )
        if job.partition_by_host:
            # One element per partition, each a list of items, then flattened in place.
            partitions = group_by_host(items, job.partition_size)
            bag = db.from_sequence(partitions, partition_size=1).flatten()
        else:
            bag = db.from_sequence(items, partition_size=job.partition_size)
    if job.write_to is not None:
        try:
            import pyarrow  # noqa: F401  # the workers write with it
        except ImportError as exc:
            raise ImportError(
                f"write_to= needs pyarrow: pip install 'nodelay[dask]' ({exc})"
            ) from exc
        return bag.map_partitions(_fetch_and_write, job)
    return bag.map_partitions(_fetch, job)


def _ungroup(groups: Iterable[tuple[str, list[Item]]]) -> list[Item]:
    return [item for _, group in groups for item in group]


def _fetch(partition: Iterable[Item], job: JobOptions) -> list[Record]:
    return fetch_partition(list(partition), job)


def _fetch_and_write(partition: Iterable[Item], job: JobOptions) -> list[dict[str, Any]]:
    records = fetch_partition(list(partition), job)
    if not records:
        return []
    assert job.write_to is not None
    return [write_parquet(records, job.write_to)]
