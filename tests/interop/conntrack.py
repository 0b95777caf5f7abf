"""Which TCP connections this process holds open to a port, read from ``/proc``.

The connection-reuse check needs to see connections, not infer them: a static file
server adds no header saying which connection answered. Linux lists every TCP socket in
``/proc/net/tcp{,6}`` (local and remote address, state, inode) and this process's file
descriptors in ``/proc/self/fd`` (``socket:[inode]``); joining the two gives the local
ports of this process's established connections to a server port.
"""

from __future__ import annotations

import os
from pathlib import Path

#: ``st`` column value of an ESTABLISHED socket in /proc/net/tcp (include/net/tcp_states.h).
TCP_ESTABLISHED = "01"
TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))


def available() -> bool:
    return all(table.exists() for table in TABLES[:1]) and Path("/proc/self/fd").is_dir()


def _own_socket_inodes() -> set[str]:
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed since listdir
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def established_local_ports(remote_port: int) -> set[int]:
    """Local ports of this process's ESTABLISHED TCP connections to ``remote_port``."""
    inodes = _own_socket_inodes()
    ports = set()
    for table in TABLES:
        if not table.exists():
            continue
        for line in table.read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, state, inode = fields[1], fields[2], fields[3], fields[9]
            if state == TCP_ESTABLISHED and inode in inodes:
                if int(remote.rsplit(":", 1)[1], 16) == remote_port:
                    ports.add(int(local.rsplit(":", 1)[1], 16))
    return ports
