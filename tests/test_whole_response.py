"""The engine-made ``Response`` (``_core.whole_response``, what ``Engine.fetch`` returns):
the same object ``_response_from_raw`` made field by field, and the constructor rule that
``_core.use_models`` checks."""

from __future__ import annotations

import pickle

import nodelay
import pytest
from nodelay import _core, _models


def test_fetched_response_fields(server: _core.TestServer) -> None:
    server_url = server.url
    with nodelay.Client() as client:
        r = client.get(f"{server_url}/bytes/202")
        assert type(r) is nodelay.Response
        assert r.status_code == 200
        assert r.content == r._raw.content and len(r.content) == 202
        assert r.headers["content-length"] == "202"
        assert r.request.method == "GET" and str(r.request.url) == f"{server_url}/bytes/202"
        assert r.history == [] and r.encoding in (None, "utf-8")
        assert pickle.loads(pickle.dumps(r)).content == r.content


def test_whole_response_matches_the_python_wrap(server: _core.TestServer) -> None:
    server_url = server.url
    with nodelay.Client() as client:
        engine = client._engine
        pairs, ttuple = client._headers._list, client._ttuple
        raw = engine.request("GET", f"{server_url}/bytes/10", pairs, None, ttuple)
    ref = ("GET", f"{server_url}/bytes/10", [], None)
    made = _core.whole_response(raw, ref)
    wrapped = _models._response_from_raw(raw, ref)
    for response in (made, wrapped):
        assert type(response) is nodelay.Response
        assert response.status_code == raw.status and response.content is raw.content
        assert response._raw is raw and response._request is ref
        assert response._headers is None and response._text is None


def test_use_models_refuses_a_class_with_its_own_constructor() -> None:
    class Own:
        def __new__(cls) -> Own:
            return super().__new__(cls)

    with pytest.raises(TypeError, match=r"object\.__new__"):
        _core.use_models(Own, _models._fill_response, _models.Request._make)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"object\.__new__"):
        _core.use_models(int, _models._fill_response, _models.Request._make)  # type: ignore[arg-type]
