"""The pytest plugin (``pytest11`` entry point ``nodelay``): the ``nodelay_mock`` fixture,
its marker and ini settings, and the respx mocker named ``"nodelay"`` (registered when
respx is installed).

Loading it imports ``nodelay`` and ``nodelay.testing`` (pytest imports the package of an
entry point's module), which patch nothing: clients run as usual until a test asks for
the fixture, or starts a respx router or a vcrpy cassette that uses nodelay's seam.
"""

from __future__ import annotations

import importlib.util

import pytest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ._mock import NodelayMock

__all__ = ["nodelay_mock", "pytest_addoption", "pytest_configure"]

BOOL_OPTIONS = (
    "assert_all_responses_were_requested",
    "assert_all_requests_were_expected",
    "can_send_already_matched_responses",
)
"""The settings an ini line ``nodelay_mock_<name> = false`` gives every test (a
``nodelay_mock`` marker on a test, class or module overrides it)."""

_MARKER = (
    "nodelay_mock(*, assert_all_responses_were_requested=True, "
    "assert_all_requests_were_expected=True, can_send_already_matched_responses=False, "
    "should_mock=lambda request: True): configure the nodelay_mock fixture."
)


def pytest_addoption(parser: pytest.Parser) -> None:
    for name in BOOL_OPTIONS:
        parser.addini(
            f"nodelay_mock_{name}",
            f"nodelay_mock's {name} for every test (a nodelay_mock marker overrides it)",
            type="bool",
            default=name != "can_send_already_matched_responses",
        )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", _MARKER)
    if importlib.util.find_spec("respx") is not None:
        # respx finds a mocker by name in its registry, which the class joins when it
        # is defined: before any test runs ``respx.mock(using="nodelay")``.
        from . import respx_mocker  # noqa: F401


@pytest.fixture
def nodelay_mock(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[NodelayMock]:
    """Every nodelay client (``Client``, ``AsyncClient``, ``nodelay.get``..., batches,
    ``stream()``, ``nodelay.requests``) is answered from the returned ``NodelayMock``
    for the duration of the test; nothing reaches the network. Responses registered
    but not requested, and requests nothing answered, fail the test at teardown unless
    the options say otherwise (docs/testing.md)."""
    from ._matching import MockOptions
    from ._mock import MockRoute, NodelayMock
    from ._seam import patches

    options: dict[str, Any] = {
        name: request.config.getini(f"nodelay_mock_{name}") for name in BOOL_OPTIONS
    }
    marked: dict[str, Any] = {}
    for marker in request.node.iter_markers("nodelay_mock"):  # the closest first
        marked = marker.kwargs | marked
    mock = NodelayMock(MockOptions(**(options | marked)))
    for owner, name, value in patches(MockRoute.for_mock(mock)):
        monkeypatch.setattr(owner, name, value)
    yield mock
    try:
        mock._assert_options()
    finally:
        mock.reset()
