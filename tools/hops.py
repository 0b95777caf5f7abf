"""The hop counter: how many functions, across how many files, a request crosses from a
front's public call to the write that sends it (docs/architecture.md, "Hop count").

``make hops`` (or ``python tools/hops.py``) prints, for each front's path, the chain of our
functions from the public call (``client.get(url)``) down to the system call that writes the
request to its socket, and counts a **hop** each time the chain moves to a function in
another file. It measures the code as built, so it works on any version of the engine:
re-run it after a change and the page's figures follow.

How the chain is read, for one request on a kept-alive connection (a warm-up request opens
it first, so the path studied is the steady one, not the first connect):

* **Python frames**: the program (``--target``, run by this file under gdb) sets a
  ``sys.setprofile`` hook for the studied call, which records every call into the native
  module ``nodelay._core`` with the Python stack that made it and its start and end times.
* **Native frames**: gdb (``tools/hops_gdb.py``) stops the program at its first write-family
  system call to a socket after the warm-up and reads the backtrace of that thread: with the
  dev build's line tables (``make dev``), every Rust and C frame has its source file.
* **Joined**: the native backtrace continues the Python stack of the call into ``_core``
  that was open when the write happened (the innermost one); when the write happens on
  another thread while no such call is open (a task on the runtime), the last call into
  ``_core`` made before it (the one that handed the request over).

Only our own code counts: frames whose source file is in this repository (Python under
``python/``, Rust under ``crates/``, the C shims under ``perl/`` and ``ruby/``). Frames of
the standard library, of pyo3, tokio or libc are left out without breaking the chain: a call
from one of our files through library code into another of our files is one hop.

The Perl and Ruby paths start at the call into the C ABI's shim (``Nodelay.xs``, the Ruby
extension's C files): the interpreters' own frames are not visible to gdb by file, and the
fronts' Perl and Ruby code (``perl/lib``, ``ruby/lib``) is a thin layer over them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["PATHS", "Chain", "Frame", "count", "main", "measure"]

ROOT = Path(__file__).resolve().parent.parent
"""The repository: frames whose file lies under ``OUR_DIRS`` of it are ours."""
OUR_DIRS = ("python", "crates", "perl", "ruby")

MARKER = "_front_call"
"""The target's function that makes the public call: the Python chain starts below it."""
RUN_TIMEOUT = 300.0
"""Seconds one run under gdb may take (loading the debug extension's line tables is the slow
part); past it the run fails rather than hang."""

PATHS: dict[str, str] = {
    "sync": "client.get(url) on a Client",
    "async": "await client.get(url) on an AsyncClient",
    "get_many": "client.get_many([url]) on a Client",
    "perl": "Nodelay->new->get($url)",
    "ruby": "Nodelay::Client.new.get(url)",
}
"""Each path the counter reads, with the call it studies."""


@dataclass(frozen=True)
class Frame:
    """One of our functions on the chain."""

    function: str
    file: str
    """Relative to the repository."""
    line: int = field(default=0, compare=False)
    """The line the call leaves from (shown, not compared: a frame is its function)."""


@dataclass(frozen=True)
class Chain:
    """The chain of one path, outermost call first, and its counts."""

    path: str
    frames: tuple[Frame, ...]

    @property
    def hops(self) -> int:
        """Calls that move to a function in another file."""
        pairs = zip(self.frames, self.frames[1:], strict=False)
        return sum(1 for a, b in pairs if a.file != b.file)

    @property
    def files(self) -> int:
        return len({f.file for f in self.frames})

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "hops": self.hops,
            "functions": len(self.frames),
            "files": self.files,
            "frames": [
                {"function": f.function, "file": f.file, "line": f.line} for f in self.frames
            ],
        }


def ours(path: str) -> str | None:
    """``path`` relative to the repository if it is one of our source files, else None. A
    relative path is the repository's: cargo runs rustc at the workspace's root, so the
    line tables name our crates' files as ``crates/...``."""
    try:
        rel = (ROOT / path).resolve().relative_to(ROOT)
    except ValueError:
        return None
    return str(rel) if rel.parts and rel.parts[0] in OUR_DIRS else None


# -- the program under study (run by gdb: ``python tools/hops.py --target PATH URL OUT``) ----


class _Recorder:
    """Records every call into ``nodelay._core`` made while it is on: the callable's name,
    the Python stack below ``MARKER`` that made it (outermost first), start and end times."""

    def __init__(self) -> None:
        from nodelay import _core

        self.core = _core
        self.calls: list[dict[str, Any]] = []
        self.open: list[dict[str, Any]] = []

    def _is_core(self, fn: Any) -> bool:
        owner = getattr(fn, "__self__", None)
        if getattr(fn, "__module__", None) == self.core.__name__ or owner is self.core:
            return True
        kind = type(owner)
        return getattr(self.core, kind.__name__, None) is kind

    def profile(self, frame: Any, event: str, arg: Any) -> None:
        if event == "c_call" and self._is_core(arg):
            call = {"name": arg.__name__, "start": time.monotonic(), "end": None}
            call["stack"] = _python_stack(frame)
            self.calls.append(call)
            self.open.append(call)
        elif event in ("c_return", "c_exception") and self.open and self._is_core(arg):
            self.open.pop()["end"] = time.monotonic()


def _python_stack(frame: Any) -> list[dict[str, str]]:
    """Our frames from just below ``MARKER`` to ``frame``, outermost first."""
    stack: list[dict[str, str]] = []
    while frame is not None and frame.f_code.co_name != MARKER:
        rel = ours(frame.f_code.co_filename)
        if rel is not None:
            code = frame.f_code
            stack.append({"function": code.co_qualname, "file": rel, "line": frame.f_lineno})
        frame = frame.f_back
    return stack[::-1]


def _front_call(path: str, client: Any, url: str) -> Any:
    """The public call under study (its frame is where the Python chain starts)."""
    if path == "sync":
        return client.get(url)
    if path == "get_many":
        return client.get_many([url])
    return client.get(url)  # async: a coroutine, awaited by the caller


def _target(path: str, url: str, out: str) -> int:
    import nodelay

    recorder = _Recorder()

    def check(response: Any) -> None:
        if response.status_code != 200:
            raise SystemExit(f"hops: {url} answered {response.status_code}")

    if path == "async":
        import asyncio

        async def run() -> None:
            async with nodelay.AsyncClient() as client:
                check(await client.get(url))  # warm-up: the connection is open and pooled
                os.getpgid(0)  # ready: gdb starts watching (tools/hops_gdb.py)
                sys.setprofile(recorder.profile)
                response = await _front_call(path, client, url)
                sys.setprofile(None)
                check(response)

        asyncio.run(run())
    else:
        with nodelay.Client() as client:
            warm = _front_call(path, client, url)
            for r in warm if isinstance(warm, list) else [warm]:
                check(r)
            os.getpgid(0)  # ready: gdb starts watching (tools/hops_gdb.py)
            sys.setprofile(recorder.profile)
            answer = _front_call(path, client, url)
            sys.setprofile(None)
            for r in answer if isinstance(answer, list) else [answer]:
                check(r)
    Path(out).write_text(json.dumps(recorder.calls))
    return 0


# -- the counter -----------------------------------------------------------------------------


GENERATED = re.compile(r"__pymethod_\w+__|::py_methods::ITEMS::trampoline")
"""Frames of code pyo3's macros generate around a Python method (argument extraction, the
call's trampoline): attributed to the file of the ``#[pymethods]`` block, but no function we
wrote, so not counted (they are in the method's own file: no hop either way)."""
_HASH = re.compile(r"::h[0-9a-f]{16}$")
_CLOSURE = re.compile(r"(::\{\{closure\}\})+$")


def function_name(raw: str) -> str:
    """A native frame's function without the symbol hash; a closure is its function's."""
    return _CLOSURE.sub("", _HASH.sub("", raw))


INTERPRETER = re.compile(r"lib(python|perl|ruby)[\w.-]*\.so")
"""The interpreter's shared library (else the interpreter is the program itself, whose
frames have no library)."""


def _is_interpreter(frame: dict[str, Any]) -> bool:
    library = str(frame.get("library", ""))
    return not library or INTERPRETER.search(library) is not None


def _native_chain(frames: list[dict[str, Any]], entries: set[str]) -> list[Frame]:
    """Our frames of the native backtrace, outermost first, from where the language entered
    the native code for the call studied: the innermost of our frames reached from the
    interpreter (its library's frames, or the program's own) whose function is named after
    a call the recorder saw open (``entries``: ``fetch`` for ``Engine::fetch``, ``request``
    for ``XS_Nodelay__XS_request`` and Ruby's ``client_request``). Frames further out belong
    to an earlier call still running (an event loop's callback that resumed the coroutine);
    an interpreter frame between two of ours that the call does not start at is a helper
    the shim calls through (Ruby's ``rb_nogvl``), and the chain goes on across it. Without
    such a frame (a task on a runtime thread) the chain is every frame of ours. A closure
    called by its own function (``py.detach(|| ...)``) is one function with it."""
    chain: list[tuple[Frame, bool]] = []
    from_interpreter = True
    for f in reversed(frames):
        rel = ours(str(f["file"])) if f["file"] else None
        if rel is None:
            from_interpreter = from_interpreter or _is_interpreter(f)
            continue
        if GENERATED.search(str(f["function"])):
            continue
        frame = Frame(function_name(str(f["function"])), rel, int(f["line"] or 0))
        if not chain or chain[-1][0] != frame or from_interpreter:
            chain.append((frame, from_interpreter))
        from_interpreter = False
    starts = [
        i
        for i, (frame, entered) in enumerate(chain)
        if entered and any(frame.function.endswith(name) for name in entries)
    ]
    return [frame for frame, _ in chain[starts[-1] if starts else 0 :]]


def _open_at(calls: list[dict[str, Any]], at: float) -> list[dict[str, Any]]:
    return [c for c in calls if c["start"] <= at and (c["end"] is None or c["end"] >= at)]


def _entry_call(
    calls: list[dict[str, Any]], at: float, entered: str | None
) -> dict[str, Any] | None:
    """The call into the native module the write belongs to (module docstring, "Joined"):
    of the calls open at the write, the latest whose name ends the native function the
    chain starts at (``entered``), else the latest open one, else the last one before."""
    open_then = _open_at(calls, at)
    named = [c for c in open_then if entered and entered.endswith(str(c["name"]))]
    if named or open_then:
        return max(named or open_then, key=lambda c: c["start"])
    before = [c for c in calls if c["start"] <= at]
    return before[-1] if before else None


def join(path: str, calls: list[dict[str, Any]], native: dict[str, Any]) -> Chain:
    """The chain of ``path`` from the recorder's calls and gdb's record of the write."""
    if "frames" not in native:
        raise RuntimeError(f"{path}: {native.get('error', 'gdb recorded nothing')}")
    at = float(native["time"])
    rust = _native_chain(native["frames"], {str(c["name"]) for c in _open_at(calls, at)})
    if not any(f.file.startswith("crates/") for f in rust):
        raise RuntimeError(
            f"{path}: no frame of crates/ at the write: the engine has no line tables "
            "(the counter reads a dev build: `make dev`)"
        )
    entered = rust[0].function if rust else None
    entry = _entry_call(calls, at, entered)
    stack = entry["stack"] if entry else []
    python = [
        Frame(str(f["function"]), rel, int(f.get("line") or 0))
        for f in stack
        if (rel := ours(str(f["file"]))) is not None
    ]
    return Chain(path, tuple(python + rust))


def _server() -> tuple[subprocess.Popen[str], str]:
    """The embedded server in its own process (its writes are not the program's)."""
    code = (
        "from nodelay import _core\n"
        "_core.serve('127.0.0.1', 0, 1, on_ready=lambda u: print(u, flush=True))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise RuntimeError(f"hops: the embedded server did not start ({url!r})")
    return proc, url


def _program(path: str, url: str, calls_out: str) -> list[str]:
    """The command line gdb runs for ``path``."""
    if path in ("sync", "async", "get_many"):
        return [sys.executable, str(Path(__file__).resolve()), "--target", path, url, calls_out]
    if path == "perl":
        # The modules from perl/lib, the shim from the build in perl/blib (make -C perl).
        inc = [f"-I{ROOT / 'perl' / 'lib'}", f"-I{ROOT / 'perl' / 'blib' / 'arch'}"]
        return ["perl", *inc, str(ROOT / "tools" / "hops_perl.pl"), url, calls_out]
    # The gem's Ruby from ruby/lib, the extension from make test-ruby's build.
    inc = [f"-I{ROOT / 'ruby' / 'lib'}", f"-I{ROOT / 'build' / 'ruby'}"]
    return ["ruby", *inc, str(ROOT / "tools" / "hops_ruby.rb"), url, calls_out]


BUILT: dict[str, Path] = {
    "perl": ROOT / "perl" / "blib" / "arch" / "auto" / "Nodelay" / "Nodelay.so",
    "ruby": ROOT / "build" / "ruby" / "nodelay" / "nodelay_ext.so",
}
"""The shim each of the Perl and Ruby paths loads (``make hops`` builds both)."""


def unbuilt(paths: list[str]) -> list[str]:
    """The paths among ``paths`` whose front is not built here."""
    return [p for p in paths if p in BUILT and not BUILT[p].exists()]


def measure(path: str, url: str) -> Chain:
    """Runs ``path``'s program under gdb against ``url`` and returns its chain."""
    gdb = shutil.which("gdb")
    if gdb is None:
        raise RuntimeError("hops: gdb is not on PATH (apt-get install gdb)")
    with tempfile.TemporaryDirectory() as tmp:
        calls_out, native_out = str(Path(tmp) / "calls.json"), str(Path(tmp) / "native.json")
        Path(calls_out).write_text("[]")
        env = {**os.environ, "HOPS_NATIVE_OUT": native_out, "PYTHONDONTWRITEBYTECODE": "1"}
        cmd = [gdb, "-nx", "-batch", "-x", str(ROOT / "tools" / "hops_gdb.py"), "--args"]
        run = subprocess.run(
            [*cmd, *_program(path, url, calls_out)],
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            env=env,
        )
        if not Path(native_out).exists():
            tail = (run.stderr or run.stdout).strip().splitlines()[-5:]
            raise RuntimeError(f"{path}: gdb recorded nothing: {' | '.join(tail)}")
        native = json.loads(Path(native_out).read_text())
        calls = json.loads(Path(calls_out).read_text())
    return join(path, calls, native)


def count(paths: list[str]) -> list[Chain]:
    """The chains of ``paths``, against one embedded server started here."""
    server, url = _server()
    try:
        return [measure(path, f"{url}/bytes/202") for path in paths]
    finally:
        server.terminate()
        server.wait(10)


def _show(chain: Chain) -> str:
    lines = [
        f"{chain.path}: {PATHS[chain.path]}: {chain.hops} hops across files "
        f"({len(chain.frames)} functions in {chain.files} files)"
    ]
    previous = None
    for f in chain.frames:
        mark = "  " if previous == f.file else "->"
        lines.append(f"  {mark} {f.file}:{f.line}  {f.function}")
        previous = f.file
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/hops.py", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help=f"paths to count (default: {', '.join(PATHS)})")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument("--target", nargs=3, metavar=("PATH", "URL", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.target:
        return _target(*args.target)
    paths = args.paths or list(PATHS)
    unknown = sorted(set(paths) - set(PATHS))
    if unknown:
        parser.error(f"unknown path(s) {', '.join(unknown)} (known: {', '.join(PATHS)})")
    for path in unbuilt(paths):
        print(f"hops: {path} skipped: {BUILT[path]} is not built (make hops)", file=sys.stderr)
    chains = count([p for p in paths if p not in unbuilt(paths)])
    if args.json:
        print(json.dumps([c.as_json() for c in chains], indent=1))
    else:
        print("\n\n".join(_show(c) for c in chains))
    return 0


if __name__ == "__main__":
    sys.exit(main())
