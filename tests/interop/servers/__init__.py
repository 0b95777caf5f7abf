"""Launchers of the third-party servers the interop matrix runs (see ``base.py``)."""
