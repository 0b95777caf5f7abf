"""Integrations with what users already run; each imports its library lazily."""
