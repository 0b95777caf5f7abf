"""``nodelay.codes``: status codes by name, httpx's and requests' spellings."""

from __future__ import annotations

import pickle
from http import HTTPStatus

import nodelay
import pytest
from nodelay import codes


def test_members_are_the_standard_codes() -> None:
    assert [c.value for c in codes] == [s.value for s in HTTPStatus]
    # Every name HTTPStatus knows, aliases included (Python 3.13 renamed four codes after
    # RFC 9110 and kept the old names as aliases), is a name of the same code here.
    for name, status in HTTPStatus.__members__.items():
        assert codes[name] is codes(status.value), name
    assert codes.CONTENT_TOO_LARGE is codes.REQUEST_ENTITY_TOO_LARGE is codes(413)
    assert codes.unprocessable_content is codes.UNPROCESSABLE_ENTITY
    assert codes.OK == 200 and codes.NOT_FOUND == 404 and isinstance(codes.OK, int)


def test_httpx_spellings() -> None:
    assert str(codes.OK) == "200" and f"{codes.NOT_FOUND}" == "404"
    assert codes(404) is codes.NOT_FOUND and codes(404).phrase == "Not Found"
    assert codes.get_reason_phrase(503) == "Service Unavailable"
    assert codes.get_reason_phrase(799) == ""
    assert codes.is_success(204) and not codes.is_success(300)
    assert codes.is_redirect(308) and codes.is_informational(101)
    assert codes.is_client_error(404) and codes.is_server_error(500)
    assert codes.is_error(404) and codes.is_error(599) and not codes.is_error(399)


def test_requests_spellings_are_aliases_of_the_same_members() -> None:
    c = nodelay.codes
    assert c.ok is c.OK and c.not_found is c.NOT_FOUND
    assert c["ok"] is c.OK and c["internal_server_error"] == 500
    assert (c.moved, c.found, c.teapot, c.too_many) == (301, 302, 418, 429)
    assert len(c) == len(HTTPStatus)  # aliases are not extra members
    with pytest.raises(ValueError):
        codes(799)


def test_responses_compare_with_codes(server: object) -> None:
    r = nodelay.Response(404)
    assert r.status_code == codes.NOT_FOUND == codes.not_found
    assert pickle.loads(pickle.dumps(codes.OK)) is codes.OK
