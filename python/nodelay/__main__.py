"""``python -m nodelay``: the same as the ``nodelay`` command."""

from ._cli import main

raise SystemExit(main())
