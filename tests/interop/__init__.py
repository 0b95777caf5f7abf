"""The interop matrix: real third-party servers x protocols x checks, under nodelay and
under httpx (the oracle). Run it with ``make interop``; see ``docs/interop.md``."""
