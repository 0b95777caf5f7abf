"""pycurl: one ``Curl`` easy handle; CurlMulti with 32 easy handles for workload f."""

from __future__ import annotations

import io
import json
import time
from typing import Any

import pycurl  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import TIMEOUT, ConnectTime, Reply, SyncAdapter

_FORM_HEADER = ["Content-Type: application/x-www-form-urlencoded"]


def _easy() -> Any:
    c = pycurl.Curl()
    c.setopt(pycurl.TIMEOUT_MS, int(TIMEOUT * 1000))
    c.setopt(pycurl.NOSIGNAL, 1)
    return c


class Adapter(SyncAdapter):
    name = "pycurl"
    module = "pycurl"
    thread_safe = False
    concurrency_note = "CurlMulti, 32 easy handles"

    def __init__(self) -> None:
        self.c = _easy()
        self.mode = ""

    def _perform(self, url: str) -> Reply:
        c = self.c
        buf = io.BytesIO()
        c.setopt(pycurl.URL, url)
        c.setopt(pycurl.WRITEDATA, buf)
        c.perform()
        return c.getinfo(pycurl.RESPONSE_CODE), buf.getvalue()

    def connect_time(self) -> ConnectTime | None:
        # libcurl's times are cumulative from the start of the transfer: connect includes
        # the name lookup, the TLS handshake ends at APPCONNECT_TIME (0 for cleartext).
        c = self.c
        connect = c.getinfo(pycurl.CONNECT_TIME)
        tls = c.getinfo(pycurl.APPCONNECT_TIME)
        return connect, (tls - connect if tls > 0 else None)

    def get(self, url: str) -> Reply:
        if self.mode != "GET":
            self.c.setopt(pycurl.HTTPGET, 1)
            self.c.setopt(pycurl.HTTPHEADER, [])
            self.mode = "GET"
        return self._perform(url)

    def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        if self.mode != "POST":
            self.c.setopt(pycurl.HTTPHEADER, _FORM_HEADER)
            self.mode = "POST"
        self.c.setopt(pycurl.POSTFIELDS, body)
        return self._perform(url)

    def get_json(self, url: str) -> tuple[int, Any]:
        status, body = self.get(url)
        return status, json.loads(body)

    def stream(self, url: str) -> tuple[int, list[int]]:
        sizes: list[int] = []
        c = self.c
        c.setopt(pycurl.URL, url)
        c.setopt(pycurl.HTTPGET, 1)
        self.mode = "GET"
        c.setopt(pycurl.WRITEFUNCTION, lambda chunk: sizes.append(len(chunk)))
        try:
            c.perform()
        finally:
            c.unsetopt(pycurl.WRITEFUNCTION)
        return c.getinfo(pycurl.RESPONSE_CODE), sizes

    def start_cookies(self, cookie_file: str | None) -> None:
        # COOKIEFILE turns libcurl's cookie engine on ("" : start empty).
        self.c.setopt(pycurl.COOKIEFILE, cookie_file or "")

    def save_cookies(self, path: str) -> None:
        self.c.setopt(pycurl.COOKIEJAR, path)
        self.c.setopt(pycurl.COOKIELIST, "FLUSH")

    def version(self) -> str:
        v = self.c.getinfo(pycurl.INFO_HTTP_VERSION)
        return {
            pycurl.CURL_HTTP_VERSION_1_0: "HTTP/1.0",
            pycurl.CURL_HTTP_VERSION_1_1: "HTTP/1.1",
            pycurl.CURL_HTTP_VERSION_2_0: "HTTP/2",
        }.get(v, "?")

    def close(self) -> None:
        self.c.close()

    def run_concurrent(self, url: str, n: int, concurrency: int) -> list[Reply] | None:
        multi = pycurl.CurlMulti()
        handles = [_easy() for _ in range(min(concurrency, n))]
        buffers: dict[int, io.BytesIO] = {}
        replies: list[Reply] = []
        started = 0

        def start(h: Any) -> None:
            nonlocal started
            buf = io.BytesIO()
            buffers[id(h)] = buf
            h.setopt(pycurl.URL, url)
            h.setopt(pycurl.WRITEDATA, buf)
            multi.add_handle(h)
            started += 1

        for h in handles:
            start(h)
        deadline = time.monotonic() + TIMEOUT + n * 0.1
        while len(replies) < n and time.monotonic() < deadline:
            while multi.perform()[0] == pycurl.E_CALL_MULTI_PERFORM:
                pass
            _, ok_list, err_list = multi.info_read()
            for h in ok_list:
                multi.remove_handle(h)
                replies.append((h.getinfo(pycurl.RESPONSE_CODE), buffers[id(h)].getvalue()))
                if started < n:
                    start(h)
            for h, _code, _msg in err_list:
                multi.remove_handle(h)
                replies.append((0, b""))
                if started < n:
                    start(h)
            if len(replies) < n:
                multi.select(1.0)
        for h in handles:
            h.close()
        multi.close()
        return replies
