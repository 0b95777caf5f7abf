"""``Headers``: case-insensitive, multi-valued, ordered HTTP header fields, and the
helpers that turn any accepted header input into ``(name, value)`` pairs.

The bottom layer of the package: it imports no other module of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    HeaderTypes: TypeAlias = (
        "Headers | Mapping[str, str] | Mapping[bytes, bytes] | Iterable[tuple[str, str]]"
        " | Iterable[tuple[bytes, bytes]]"
    )

__all__ = ["Headers", "override_pairs"]


def _to_str(value: str | bytes) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):  # a tuple: no UnionType per call
        return bytes(value).decode("latin-1")
    raise TypeError(f"header names and values must be str or bytes, got {value!r}")


def _pairs(headers: HeaderTypes | None) -> list[tuple[str, str]]:
    """Normalise any accepted header input into a fresh list of ``(str, str)``."""
    if headers is None:
        return []
    if isinstance(headers, Headers):
        return headers._list[:]
    items: Iterable[Any] = headers.items() if isinstance(headers, Mapping) else headers
    return [(_to_str(k), _to_str(v)) for k, v in items]


def override_pairs(
    base: list[tuple[str, str]], extra: Sequence[tuple[str, str | None]]
) -> list[tuple[str, str]]:
    """``base`` with the names in ``extra`` replaced, case-insensitively.

    The replacement fields take the position of the first replaced one, so the order of
    ``base`` is kept; names new to ``base`` are appended in ``extra``'s order. A ``None``
    value removes that name (requests' way to drop a client header for one request).
    Returns ``base`` itself when ``extra`` is empty (callers never mutate it).
    """
    if not extra:
        return base
    groups: dict[str, list[tuple[str, str]]] = {}
    for name, value in extra:
        fields = groups.setdefault(name.lower(), [])
        if value is not None:
            fields.append((name, value))
    out: list[tuple[str, str]] = []
    placed: set[str] = set()
    for pair in base:
        key = pair[0].lower()
        replacement = groups.get(key)
        if replacement is None:
            out.append(pair)
        elif key not in placed:
            placed.add(key)
            out.extend(replacement)
    for key, fields in groups.items():
        if key not in placed:
            out.extend(fields)
    return out


class Headers(MutableMapping[str, str]):
    """Case-insensitive, multi-valued, order-preserving HTTP headers (like ``httpx.Headers``).

    ``headers["name"]`` joins repeated fields with ``", "``; ``get_list()`` returns them
    separately and ``multi_items()`` / ``raw`` give every ``(name, value)`` pair in order,
    names spelt as received or given. Iteration yields each distinct name once (first
    spelling). Equality with a dict, a list of pairs or another ``Headers`` ignores name case
    and order.

    Internally the pairs are a list that is never mutated once built (mutations build a new
    list), so it can be handed to the engine and shared by requests without copying.
    """

    __slots__ = ("_index", "_list")

    _list: list[tuple[str, str]]
    _index: dict[str, list[str]] | None

    def __init__(self, headers: HeaderTypes | None = None) -> None:
        self._list = _pairs(headers)
        self._index = None

    @classmethod
    def _from_list(cls, pairs: list[tuple[str, str]]) -> Headers:
        """Wrap a list of ``(str, str)`` without copying or checking (engine output)."""
        self = cls.__new__(cls)
        self._list = pairs
        self._index = None
        return self

    def _idx(self) -> dict[str, list[str]]:
        index = self._index
        if index is None:
            index = {}
            for name, value in self._list:
                key = name.lower()
                values = index.get(key)
                if values is None:
                    index[key] = [value]
                else:
                    values.append(value)
            self._index = index
        return index

    def _set_list(self, pairs: list[tuple[str, str]]) -> None:
        self._list = pairs
        self._index = None

    # -- reading --------------------------------------------------------------------------

    def __getitem__(self, key: str) -> str:
        values = self._idx().get(key.lower())
        if values is None:
            raise KeyError(key)
        return values[0] if len(values) == 1 else ", ".join(values)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._idx()

    def __iter__(self) -> Iterator[str]:
        seen: set[str] = set()
        for name, _ in self._list:
            key = name.lower()
            if key not in seen:
                seen.add(key)
                yield name

    def __len__(self) -> int:
        return len(self._idx())

    def get_list(self, key: str) -> list[str]:
        """Every value of the named header, in order (empty list when absent)."""
        return list(self._idx().get(key.lower(), ()))

    def multi_items(self) -> list[tuple[str, str]]:
        """Every ``(name, value)`` pair, repeated names included, in order."""
        return self._list[:]

    @property
    def raw(self) -> list[tuple[str, str]]:
        """Every ``(name, value)`` pair as given or received (a copy)."""
        return self._list[:]

    def copy(self) -> Headers:
        """An independent copy."""
        return Headers._from_list(self._list[:])

    # -- writing (each mutation builds a new list) ------------------------------------------

    def __setitem__(self, key: str, value: str) -> None:
        """Set a header, replacing every field of that name at the first one's position."""
        key = _to_str(key)
        value = _to_str(value)
        lower = key.lower()
        out: list[tuple[str, str]] = []
        found = False
        for pair in self._list:
            if pair[0].lower() == lower:
                if not found:
                    found = True
                    out.append((pair[0], value))
            else:
                out.append(pair)
        if not found:
            out.append((key, value))
        self._set_list(out)

    def __delitem__(self, key: str) -> None:
        lower = key.lower()
        out = [pair for pair in self._list if pair[0].lower() != lower]
        if len(out) == len(self._list):
            raise KeyError(key)
        self._set_list(out)

    def add(self, key: str, value: str) -> None:
        """Append one more field (keeps existing fields of that name)."""
        self._set_list([*self._list, (_to_str(key), _to_str(value))])

    def update(self, headers: HeaderTypes | None = None, /, **kwargs: str) -> None:  # type: ignore[override]
        """Replace the named headers by the given ones, in place of the first old field
        (every given value of a repeated name is kept; new names are appended)."""
        new = _pairs(headers)
        new.extend(kwargs.items())
        if new:
            self._set_list(override_pairs(self._list, new))

    def clear(self) -> None:
        self._set_list([])

    # -- comparison and display ------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        try:
            other_list = _pairs(other)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False
        mine = sorted((n.lower(), v) for n, v in self._list)
        return mine == sorted((n.lower(), v) for n, v in other_list)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        names = [name.lower() for name, _ in self._list]
        if len(set(names)) == len(names):
            return f"Headers({dict(self._list)!r})"
        return f"Headers({self._list!r})"

    def __getstate__(self) -> list[tuple[str, str]]:
        return self._list

    def __setstate__(self, state: list[tuple[str, str]]) -> None:
        self._list = state
        self._index = None
