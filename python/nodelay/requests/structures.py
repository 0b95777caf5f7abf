"""``CaseInsensitiveDict`` and ``LookupDict`` as requests defines them."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import Any, TypeVar

__all__ = ["CaseInsensitiveDict", "LookupDict"]

_V = TypeVar("_V")


class CaseInsensitiveDict(MutableMapping[str, _V]):
    """A dict whose keys compare case-insensitively and keep the case last set.

    Iteration, ``keys()`` and ``items()`` give the keys as last set; ``lower_items()`` gives
    them lower-cased. Equality with another mapping ignores key case.
    """

    def __init__(
        self, data: Mapping[str, _V] | Iterable[tuple[str, _V]] | None = None, **kwargs: _V
    ) -> None:
        self._store: OrderedDict[str, tuple[str, _V]] = OrderedDict()
        if data is None:
            data = {}
        self.update(data, **kwargs)

    def __setitem__(self, key: str, value: _V) -> None:
        self._store[key.lower()] = (key, value)

    def __getitem__(self, key: str) -> _V:
        return self._store[key.lower()][1]

    def __delitem__(self, key: str) -> None:
        del self._store[key.lower()]

    def __iter__(self) -> Iterator[str]:
        return (casedkey for casedkey, _ in self._store.values())

    def __len__(self) -> int:
        return len(self._store)

    def lower_items(self) -> Iterator[tuple[str, _V]]:
        """Like ``items()``, with lower-cased keys."""
        return ((lowerkey, keyval[1]) for (lowerkey, keyval) in self._store.items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            other = CaseInsensitiveDict(other)
        else:
            return NotImplemented
        return dict(self.lower_items()) == dict(other.lower_items())

    __hash__ = None  # type: ignore[assignment]  # mutable, as dict

    def copy(self) -> CaseInsensitiveDict[_V]:
        return CaseInsensitiveDict(self._store.values())

    def __repr__(self) -> str:
        return str(dict(self.items()))


class LookupDict(dict[str, Any]):
    """A dictionary whose attributes are also its items (``None`` when missing)."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name
        super().__init__()

    def __repr__(self) -> str:
        return f"<lookup '{self.name}'>"

    def __getitem__(self, key: str) -> Any:
        return self.__dict__.get(key, None)

    def get(self, key: str, default: Any = None) -> Any:
        return self.__dict__.get(key, default)
