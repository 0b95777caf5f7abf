"""docs/testing.md's pytest examples, run as what they are: pytest modules, in inner
pytest runs (``pytester``) that load the plugins through their entry points. The
vcrpy example records from the embedded server, which is then stopped, and replays.

(The page's plain programs, such as the ``MockTransport`` one, are run by the docs
examples test with every other page's.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from nodelay import _core

pytest.importorskip("respx")
pytest.importorskip("vcr")

pytest_plugins = ["pytester"]

PAGE = Path(__file__).parent.parent / "docs" / "testing.md"
RUN_HERE = "tests/test_testing_plugin_docs.py runs it"
"""What the ``<!-- example: not run (...) -->`` line of the examples run here says."""
EXAMPLE = re.compile(r"<!-- example: not run \(([^)]*)\) -->\n```python\n(.*?)\n```", re.S)


def _examples() -> list[str]:
    return [code for reason, code in EXAMPLE.findall(PAGE.read_text()) if RUN_HERE in reason]


def test_the_page_has_the_examples() -> None:
    assert len(_examples()) == 5


@pytest.mark.parametrize("index", range(4))
def test_a_pytest_example_passes(pytester: pytest.Pytester, index: int) -> None:
    code = _examples()[index]
    assert "https://api.example.com" in code and "VCR_PATCHES" not in code
    pytester.makepyfile(code)
    result = pytester.runpytest("-p", "no:cacheprovider")
    tests = len(re.findall(r"^def test_", code, re.M))
    result.assert_outcomes(passed=tests)


def test_the_vcr_example_records_then_replays_with_the_server_stopped(
    pytester: pytest.Pytester,
) -> None:
    (code,) = [c for c in _examples() if "VCR_PATCHES" in c]
    server = _core.TestServer("127.0.0.1", 0, 1)
    # A route the embedded server has, for the example's URL.
    pytester.makepyfile(code.replace("https://api.example.com/users/7", f"{server.url}/json/1"))
    try:
        pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
        assert server.requests() == 1
    finally:
        server.close()
    assert (pytester.path / "tests" / "cassettes" / "users.yaml").is_file()
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
