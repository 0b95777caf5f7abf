"""gdb's half of the hop counter (tools/hops.py): loaded with ``gdb -batch -x`` around the
program that makes one request, it records the native call stack at the request's first
write to a socket.

The program runs under gdb until it makes the ``getpgid`` system call (``READY_CALL``: its
warm-up is done, the request under study comes next; Python's ``os.getpgid(0)``, Perl's
``getpgrp``, Ruby's ``Process.getpgid(0)``, a call none of them makes by itself). From
there every write-family system call stops the program; the first one whose file descriptor
is a socket is the request going out, and its backtrace (every frame: function, source file,
line, and the shared library its code is in, "" for the program itself) and the time it happened
(CLOCK_MONOTONIC, the clock of the program's ``time.monotonic``) are written as JSON to the
path in the environment variable ``HOPS_NATIVE_OUT``. The program then runs to its end.

This file runs inside gdb's embedded Python (``import gdb``), never in the project's venv.
"""

import json
import os
import time

import gdb  # type: ignore[import-not-found]  # gdb's embedded module

READY_CALL = "getpgid"
"""The system call by which the program says "ready" (a signal would not do: Ruby handles a
signal it sends itself without the kernel, so gdb never sees it)."""
WRITE_CALLS = "write writev sendto sendmsg"
"""The system calls a request's bytes can leave by (the engine writes with ``write`` or
``sendto``; a vectored upload with ``writev``/``sendmsg``)."""
MAX_STOPS = 10_000
"""Write-family stops examined before giving up: a program that writes this often to
non-sockets after saying it is ready is not the program the counter expects."""


def _socket_fd(pid: int) -> int | None:
    """The file descriptor argument of the stopped system call, if it is a socket (x86-64:
    the first argument is in ``rdi`` at the call's entry)."""
    fd = int(gdb.parse_and_eval("$rdi"))
    try:
        target = os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return None
    return fd if target.startswith("socket:") else None


def _frames() -> list[dict[str, object]]:
    """The stopped thread's frames, innermost first."""
    out: list[dict[str, object]] = []
    frame = gdb.newest_frame()
    while frame is not None:
        sal = frame.find_sal()
        path = sal.symtab.fullname() if sal.symtab is not None else ""
        library = gdb.solib_name(frame.pc()) or ""
        out.append(
            {"function": frame.name() or "??", "file": path, "line": sal.line, "library": library}
        )
        frame = frame.older()
    return out


def main() -> None:
    out_path = os.environ["HOPS_NATIVE_OUT"]
    gdb.execute("set pagination off")
    gdb.execute("set confirm off")
    gdb.execute("handle SIGPIPE nostop noprint pass")
    gdb.execute(f"catch syscall {READY_CALL}")
    gdb.execute("run")
    gdb.execute("delete")
    pid = gdb.selected_inferior().pid
    gdb.execute(f"catch syscall {WRITE_CALLS}")
    record: dict[str, object] = {"error": "no write to a socket after the ready call"}
    for _ in range(MAX_STOPS):
        gdb.execute("continue")
        if not gdb.selected_inferior().pid:
            break
        fd = _socket_fd(pid)
        if fd is not None:
            record = {"fd": fd, "time": time.monotonic(), "frames": _frames()}
            break
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(record, f)
    if gdb.selected_inferior().pid:
        gdb.execute("delete")
        gdb.execute("continue")


main()
