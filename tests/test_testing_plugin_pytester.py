"""The pytest plugin's own behaviour, in inner pytest runs (``pytester``): the checks at
teardown, the marker and the ini settings that turn them off. Each scenario also runs
with pytest-httpx's ``httpx_mock`` on httpx, the model, which must give the same
outcome and the same report lines.

The inner runs load the plugin as any project would: through its ``pytest11`` entry
point (no ``-p``).
"""

from __future__ import annotations

import pytest

pytest.importorskip("pytest_httpx")

pytest_plugins = ["pytester"]

MODELS = {"nodelay": "nodelay_mock", "httpx": "httpx_mock"}
"""Library → its mock fixture (and marker)."""


def _run(pytester: pytest.Pytester, library: str, body: str, ini: str = "") -> pytest.RunResult:
    """Run one inner test module, ``body`` with ``{lib}``, ``{mock}`` filled in, under
    the ini settings ``ini``."""
    pytester.makeini(f"[pytest]\n{ini}\n")  # replaces the one of an earlier run
    pytester.makepyfile(
        f"import pytest\nimport {library} as lib\n\n" + body.format(lib="lib", mock=MODELS[library])
    )
    return pytester.runpytest("-p", "no:cacheprovider")


@pytest.fixture(params=sorted(MODELS))
def library(request: pytest.FixtureRequest) -> str:
    return str(request.param)


UNUSED = """
def test_unused({mock}):
    {mock}.add_response(url="http://api.test/unused")
    {mock}.add_response(method="POST", url="http://api.test/used")
    with {lib}.Client() as client:
        client.post("http://api.test/used")
"""


def test_a_response_never_requested_fails_the_test_at_teardown(
    pytester: pytest.Pytester, library: str
) -> None:
    result = _run(pytester, library, UNUSED)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_unused*",
            "*The following responses are mocked but not requested:",
            "*- Match any request on http://api.test/unused",
        ]
    )
    assert "http://api.test/used" not in result.stdout.str()


def test_the_marker_turns_the_check_off(pytester: pytest.Pytester, library: str) -> None:
    marked = "@pytest.mark.{mock}(assert_all_responses_were_requested=False)" + UNUSED
    _run(pytester, library, marked).assert_outcomes(passed=1)


def test_a_module_wide_marker_turns_it_off_and_a_test_marker_wins(
    pytester: pytest.Pytester, library: str
) -> None:
    body = (
        "pytestmark = pytest.mark.{mock}(assert_all_responses_were_requested=False)\n"
        + UNUSED
        + "\n@pytest.mark.{mock}(assert_all_responses_were_requested=True)"
        + UNUSED.replace("test_unused", "test_unused_again")
    )
    result = _run(pytester, library, body)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_unused_again*"])


def test_an_optional_response_may_go_unrequested(pytester: pytest.Pytester, library: str) -> None:
    body = """
def test_optional({mock}):
    {mock}.add_response(url="http://api.test/maybe", is_optional=True)
"""
    _run(pytester, library, body).assert_outcomes(passed=1)


SWALLOWED = """
def test_swallowed({mock}):
    with {lib}.Client() as client:
        try:
            client.get("http://api.test/nothing?q=1")
        except {lib}.TimeoutException as exc:
            assert str(exc).startswith("No response can be found for GET request on ")
"""


def test_an_unmatched_request_fails_the_test_even_when_caught(
    pytester: pytest.Pytester, library: str
) -> None:
    result = _run(pytester, library, SWALLOWED)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*The following requests were not expected:",
            "*- GET request on http://api.test/nothing?q=1",
        ]
    )
    marked = "@pytest.mark.{mock}(assert_all_requests_were_expected=False)" + SWALLOWED
    _run(pytester, library, marked).assert_outcomes(passed=1)


def test_an_unmatched_request_fails_the_test_naming_it(
    pytester: pytest.Pytester, library: str
) -> None:
    body = """
def test_unmatched({mock}):
    {mock}.add_response(url="http://api.test/known")
    with {lib}.Client() as client:
        client.get("http://api.test/known")
        client.delete("http://api.test/unknown")
"""
    result = _run(pytester, library, body)
    result.assert_outcomes(failed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*TimeoutException: No response can be found for DELETE request on "
            "http://api.test/unknown amongst:",
            "*- Already matched any request on http://api.test/known",
        ]
    )


def test_ini_settings_give_every_test_the_option(pytester: pytest.Pytester) -> None:
    """nodelay only: pytest-httpx has no ini settings (its marker in a conftest does it)."""
    ini = "nodelay_mock_assert_all_responses_were_requested = false"
    _run(pytester, "nodelay", UNUSED, ini=ini).assert_outcomes(passed=1)
    body = "@pytest.mark.{mock}(assert_all_responses_were_requested=True)" + UNUSED
    _run(pytester, "nodelay", body, ini=ini).assert_outcomes(passed=1, errors=1)
    ini = "nodelay_mock_can_send_already_matched_responses = true"
    reused = """
def test_reused({mock}):
    {mock}.add_response(url="http://api.test/again")
    with {lib}.Client() as client:
        assert [client.get("http://api.test/again").status_code for _ in "abc"] == [200] * 3
"""
    _run(pytester, "nodelay", reused, ini=ini).assert_outcomes(passed=1)
    _run(pytester, "nodelay", reused).assert_outcomes(failed=1, errors=1)


def test_a_failing_test_body_leaves_no_patch_behind(pytester: pytest.Pytester) -> None:
    body = """
from nodelay._base import BaseClient

def test_fails({mock}):
    {mock}.add_response(url="http://api.test/x", is_optional=True)
    raise RuntimeError("boom")

def test_after():
    assert BaseClient._routed is False and BaseClient._intercept is None
"""
    _run(pytester, "nodelay", body).assert_outcomes(passed=1, failed=1)
