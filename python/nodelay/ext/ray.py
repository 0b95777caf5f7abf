"""Fetch jobs on Ray Data: ``Fetcher``, a callable class for ``Dataset.map_batches``, and
``fetch(urls, **options) -> ray.data.Dataset``.

``ds.map_batches(nodelay.ext.ray.Fetcher, fn_constructor_kwargs={...},
compute=ray.data.ActorPoolStrategy(size=N))`` (``concurrency=N`` in Ray before 2.51) runs
N actors; each keeps one
``nodelay.Client`` (made at its first batch) and sends each batch's requests as one
``get_many`` batch on the engine's runtime. The input column ``url`` (optional
``method``, ``headers``, ``content``) gives the requests; the output is the input columns
plus the record's: ``status``, ``http_version``, ``headers``, ``content``, ``elapsed``,
``error`` (the response's ``headers`` and ``content`` replace input columns of those
names). A failure is a record (``error`` set, ``status`` None), never an exception that
fails the batch. The options are ``nodelay.ext.dask.fetch``'s (``concurrency`` in flight
per actor, ``per_host``, ``rate``, ``retries``, ``timeout``, ``write_to``, any
``nodelay.Client`` keyword); with ``write_to`` each batch writes its records as one
Parquet file and the output holds one row of counts per batch (``path``, ``records``,
``errors``).

``fetch`` builds the dataset from URL strings or request dicts, ``partition_size`` per
batch, ``partition_by_host`` grouping each origin's URLs into one batch, on ``actors``
actors (default: the cluster's CPUs).

Ray is imported when used (``pip install 'nodelay[ray]'``).
"""

from __future__ import annotations

from ._jobs import RECORD_FIELDS, fetch_partition, group_by_host, job_options, write_parquet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from ._jobs import Item, JobOptions

__all__ = ["Fetcher", "fetch"]

_EXTRA_HINT = "nodelay.ext.ray needs Ray Data: pip install 'nodelay[ray]'"

# Input columns that describe the request (the rest are carried through).
_REQUEST_COLUMNS = ("url", "method", "headers", "content")


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise ImportError(f"{_EXTRA_HINT} ({exc})") from exc
    return ray


class Fetcher:
    """Sends a batch's requests and adds their records as columns (see the module)."""

    def __init__(self, **options: Any) -> None:
        self._job: JobOptions = job_options(options)

    def __call__(self, batch: Any) -> dict[str, Any]:
        import numpy as np

        columns = _columns(batch)
        if "url" not in columns:
            raise KeyError("nodelay.ext.ray.Fetcher needs a 'url' column")
        count = len(columns["url"])
        items: list[Item] = [_item(columns, i) for i in range(count)]
        records = fetch_partition(items, self._job)
        if self._job.write_to is not None:
            counts = write_parquet(records, self._job.write_to) if records else None
            return {
                key: np.array([counts[key]] if counts else [], dtype=object)
                for key in ("path", "records", "errors")
            }
        out: dict[str, Any] = {
            name: values for name, values in columns.items() if name not in RECORD_FIELDS
        }
        out["url"] = columns["url"]
        for name in RECORD_FIELDS[1:]:
            values = np.empty(count, dtype=object)
            values[:] = [record[name] for record in records]
            out[name] = values
        return out


def _columns(batch: Any) -> dict[str, Any]:
    """A batch in any of Ray's formats (dict of arrays, pandas, pyarrow) as a dict of
    columns."""
    if isinstance(batch, dict):
        return batch
    if hasattr(batch, "to_pydict"):  # pyarrow.Table
        return {name: list(values) for name, values in batch.to_pydict().items()}
    return {name: batch[name].to_numpy() for name in batch.columns}  # pandas


def _item(columns: Mapping[str, Any], i: int) -> Item:
    """Row ``i`` as a URL or a request dict (only the request columns it has)."""
    request = {name: columns[name][i] for name in _REQUEST_COLUMNS if name in columns}
    request = {name: value for name, value in request.items() if value is not None}
    if set(request) == {"url"}:
        return str(request["url"])
    return request


def fetch(urls: Iterable[Item], *, actors: int | None = None, **options: Any) -> Any:
    """A ``ray.data.Dataset`` of one record per URL (or one row of counts per batch with
    ``write_to=``); lazy, as Ray Data is: nothing is sent until it is consumed."""
    ray = _ray()
    job = job_options(options)
    if isinstance(urls, str | bytes):
        raise TypeError("urls must be an iterable of URLs, not a single str")
    items = [{"url": u} if isinstance(u, str) else dict(u) for u in urls]
    for item in items:
        if "url" not in item:
            raise TypeError(f"a request dict needs 'url', got {item!r}")
    if job.partition_by_host:
        partitions = group_by_host(items, job.partition_size)
        datasets = [ray.data.from_items(p, override_num_blocks=1) for p in partitions]
        if len(datasets) > 1:
            dataset = datasets[0].union(*datasets[1:])
        else:
            dataset = datasets[0] if datasets else ray.data.from_items([])
        batch_size = None  # one batch per block: per origin
    else:
        blocks = max(1, -(-len(items) // job.partition_size))
        dataset = ray.data.from_items(items, override_num_blocks=blocks)
        batch_size = job.partition_size
    if actors is None:
        actors = max(1, int(ray.cluster_resources().get("CPU", 1)))
    return dataset.map_batches(
        Fetcher,
        fn_constructor_kwargs=options,
        batch_size=batch_size,
        compute=ray.data.ActorPoolStrategy(size=actors),
        batch_format="numpy",
    )
