"""The Python servers: hypercorn, uvicorn, gunicorn and waitress, all running the WSGI
application ``pyapp/interop_app.py`` (``/static/`` plus httpbin at ``/app``) from the
interpreter's environment (hypercorn and uvicorn through their own WSGI support). Each
closes idle connections after ``SERVER_IDLE_TIMEOUT_S``; hypercorn also recycles after
``RECYCLE_AFTER_REQUESTS`` (``keep_alive_max_requests``), the only one with a
per-connection limit (the others' ``max-requests`` restarts a worker: not connection
recycling).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .base import (
    RECYCLE_AFTER_REQUESTS,
    SERVER_IDLE_TIMEOUT_S,
    Endpoint,
    LaunchEnv,
    free_port,
    running,
    wait_listening,
)
from .paths import PYAPP_DIR, PYTHON_BIN

#: Worker processes of gunicorn's sync worker class: one request at a time each, so two
#: (the machine's cores) keep a slow /app/delay from stalling every other request.
GUNICORN_SYNC_WORKERS = 2
#: Threads of gunicorn's gthread worker (one process).
GUNICORN_THREADS = 8
#: waitress checks for idle channels this often (s); its default (30 s) would leave idle
#: connections open long past ``channel_timeout``.
WAITRESS_CLEANUP_INTERVAL_S = 1


def _env(env: LaunchEnv) -> dict[str, str]:
    return {
        **os.environ,
        "INTEROP_SITE_ROOT": str(env.site_root),
        "PYTHONPATH": str(PYAPP_DIR),
    }


def _missing(*modules: str) -> str | None:
    import importlib.util

    absent = [m for m in modules if importlib.util.find_spec(m) is None]
    return f"not installed: {', '.join(absent)} (make interop installs them)" if absent else None


@dataclass
class HypercornLauncher:
    name: str = "hypercorn"

    def unavailable(self) -> str | None:
        return _missing("hypercorn", "httpbin")

    @contextlib.contextmanager
    def start(self, env: LaunchEnv) -> Iterator[list[Endpoint]]:
        plain, tls = free_port(), free_port()
        conf = env.workdir / "hypercorn.toml"
        conf.write_text(f"keep_alive_max_requests = {RECYCLE_AFTER_REQUESTS}\n")
        args = [
            str(PYTHON_BIN / "hypercorn"),
            "-c",
            str(conf),
            "--bind",
            f"127.0.0.1:{tls}",
            "--insecure-bind",
            f"127.0.0.1:{plain}",
            "--certfile",
            str(env.cert_pem),
            "--keyfile",
            str(env.key_pem),
            "--keep-alive",
            str(SERVER_IDLE_TIMEOUT_S),
            "wsgi:interop_app:wsgi",
        ]
        log = env.workdir / "hypercorn.log"
        with running(args, log, plain, env=_env(env), cwd=env.workdir) as proc:
            wait_listening(tls, proc, log)
            yield _four(self.name, plain, tls, env)


def _four(name: str, plain: int, tls: int, env: LaunchEnv) -> list[Endpoint]:
    ca = str(env.ca_pem)
    return [
        Endpoint(name, "h1", f"http://127.0.0.1:{plain}", True),
        Endpoint(name, "h1tls", f"https://localhost:{tls}", ca),
        Endpoint(name, "h2", f"https://localhost:{tls}", ca),
        Endpoint(name, "h2c", f"http://127.0.0.1:{plain}", True),
    ]


def _two(name: str, plain: int, tls: int | None, env: LaunchEnv) -> list[Endpoint]:
    eps = [Endpoint(name, "h1", f"http://127.0.0.1:{plain}", True)]
    if tls is not None:
        eps.append(Endpoint(name, "h1tls", f"https://localhost:{tls}", str(env.ca_pem)))
    return eps


@contextlib.contextmanager
def _plain_and_tls(
    name: str, env: LaunchEnv, argv: Callable[[int, bool], list[str]]
) -> Iterator[list[Endpoint]]:
    """A server that binds one socket per process: one process in clear text and one
    with TLS (``argv(port, tls)``), each logging to its own file; their h1 and h1tls
    endpoints."""
    plain, tls = free_port(), free_port()
    with (
        running(
            argv(plain, False), env.workdir / f"{name}.log", plain, env=_env(env), cwd=env.workdir
        ),
        running(
            argv(tls, True), env.workdir / f"{name}-tls.log", tls, env=_env(env), cwd=env.workdir
        ),
    ):
        yield _two(name, plain, tls, env)


@dataclass
class UvicornLauncher:
    """uvicorn with one HTTP/1.1 implementation (``h11`` or ``httptools``); one process per
    port (uvicorn binds one socket), TLS by ``--ssl-certfile``."""

    http: str
    name: str = ""

    def __post_init__(self) -> None:
        self.name = f"uvicorn-{self.http}"

    def unavailable(self) -> str | None:
        return _missing("uvicorn", self.http, "httpbin")

    def _argv(self, port: int) -> list[str]:
        return [
            str(PYTHON_BIN / "uvicorn"),
            "interop_app:wsgi",
            "--interface",
            "wsgi",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--http",
            self.http,
            "--lifespan",
            "off",
            "--no-access-log",
            "--timeout-keep-alive",
            str(SERVER_IDLE_TIMEOUT_S),
        ]

    def start(self, env: LaunchEnv) -> contextlib.AbstractContextManager[list[Endpoint]]:
        tls_args = ["--ssl-certfile", str(env.cert_pem), "--ssl-keyfile", str(env.key_pem)]
        return _plain_and_tls(
            self.name, env, lambda port, tls: self._argv(port) + (tls_args if tls else [])
        )


@dataclass
class GunicornLauncher:
    """gunicorn with the ``sync`` or ``gthread`` worker class; one process per port."""

    worker: str
    name: str = ""

    def __post_init__(self) -> None:
        self.name = f"gunicorn-{self.worker}"

    def unavailable(self) -> str | None:
        return _missing("gunicorn", "httpbin")

    def _argv(self, port: int) -> list[str]:
        args = [
            str(PYTHON_BIN / "gunicorn"),
            "-b",
            f"127.0.0.1:{port}",
            "-k",
            self.worker,
            "--keep-alive",
            str(SERVER_IDLE_TIMEOUT_S),
            "--chdir",
            str(PYAPP_DIR),
        ]
        if self.worker == "gthread":
            args += ["--workers", "1", "--threads", str(GUNICORN_THREADS)]
        else:
            args += ["--workers", str(GUNICORN_SYNC_WORKERS)]
        return [*args, "interop_app:wsgi"]

    def start(self, env: LaunchEnv) -> contextlib.AbstractContextManager[list[Endpoint]]:
        tls_args = ["--certfile", str(env.cert_pem), "--keyfile", str(env.key_pem)]

        def argv(port: int, tls: bool) -> list[str]:
            # The application stays the last argument.
            *options, app = self._argv(port)
            return [*options, *(tls_args if tls else []), app]

        return _plain_and_tls(self.name, env, argv)


@dataclass
class WaitressLauncher:
    name: str = "waitress"

    def unavailable(self) -> str | None:
        return _missing("waitress", "httpbin")

    @contextlib.contextmanager
    def start(self, env: LaunchEnv) -> Iterator[list[Endpoint]]:
        port = free_port()
        args = [
            str(PYTHON_BIN / "waitress-serve"),
            f"--listen=127.0.0.1:{port}",
            f"--channel-timeout={SERVER_IDLE_TIMEOUT_S}",
            f"--cleanup-interval={WAITRESS_CLEANUP_INTERVAL_S}",
            "interop_app:wsgi",
        ]
        with running(args, env.workdir / "waitress.log", port, env=_env(env), cwd=env.workdir):
            yield _two(self.name, port, None, env)
