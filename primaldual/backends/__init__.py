"""Backends: one file per backend; registry filled in by the foundation."""
