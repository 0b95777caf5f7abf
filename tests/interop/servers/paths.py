"""Where the application servers' code and build output live."""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
#: ``make interop`` builds the Go server here (``INTEROP_BUILD`` overrides).
BUILD = Path(os.environ.get("INTEROP_BUILD", REPO / "build" / "interop"))
GO_BINARY = BUILD / "goserver"
NODE_SCRIPT = HERE / "node" / "server.js"
PYAPP_DIR = HERE / "pyapp"
#: The Python servers run from the interpreter's environment (``.venv``).
PYTHON_BIN = Path(sys.executable).parent
