"""requests' hook system: ``hooks={"response": [f, ...]}``, each ``f(response, **kwargs)``
may return a replacement response."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeAlias

__all__ = ["HOOKS", "default_hooks", "dispatch_hook"]

HOOKS = ["response"]

Hook: TypeAlias = Callable[..., Any]
HooksArg: TypeAlias = Mapping[str, "Hook | Iterable[Hook]"]


def default_hooks() -> dict[str, list[Hook]]:
    return {event: [] for event in HOOKS}


def dispatch_hook(key: str, hooks: Mapping[str, Any] | None, hook_data: Any, **kwargs: Any) -> Any:
    """Run the ``key`` hooks on ``hook_data``; a hook's non-None result replaces it."""
    hooks = hooks or {}
    found = hooks.get(key)
    if found:
        if callable(found):
            found = [found]
        for hook in found:
            _hook_data = hook(hook_data, **kwargs)
            if _hook_data is not None:
                hook_data = _hook_data
    return hook_data
