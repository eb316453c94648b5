"""What every subcommand shares: the user-error exception, method names, argument
types and the file checks."""

from __future__ import annotations

import argparse
import os
import stat
from typing import Any

import numpy as np

from .. import catalogue

__all__ = ["CLIError", "HYPER", "METHOD_ALIASES", "METHOD_CLASSES", "METHOD_HELP",
           "check_output_path", "check_regular_file", "gamma_value", "method_names",
           "resolve_method", "task_of", "tolerance_value"]


#: Accepted short names -> class name, and the class names in catalogue order: both are
#: :mod:`primaldual.catalogue`'s lists.
METHOD_ALIASES: dict[str, str] = catalogue.ALIASES
METHOD_CLASSES: tuple[str, ...] = catalogue.NAMES


#: Hyper-parameters the ``fit`` subcommand may pass on (only those the class accepts).
HYPER = ("kernel", "C", "gamma", "degree", "coef0", "nu", "epsilon")


class CLIError(Exception):
    """A user error: printed as one line, exit code ``code``."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def method_names() -> list[str]:
    """Allowed method names: class names and aliases."""
    return list(METHOD_CLASSES) + sorted(METHOD_ALIASES)


def resolve_method(name: str) -> type:
    """The method class for a class name or alias (``CLIError`` naming the allowed values)."""
    try:
        return catalogue.method_class(catalogue.resolve(name))
    except ValueError as exc:
        raise CLIError(f"argument METHOD: {exc}") from None


def task_of(cls: Any) -> str:
    """``"classification"`` or ``"regression"``: the task of a method class."""
    return cls._task


def check_regular_file(path: str, arg: str) -> None:
    """A path the CLI reads must be a regular file: a named pipe, a device or a directory
    is refused (reading one would block or never end)."""
    try:
        mode = os.stat(path).st_mode  # stat never blocks, even on a named pipe
    except OSError as exc:
        raise CLIError(f"argument {arg}: cannot read {path}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        kind = ("a directory" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special")
        raise CLIError(f"argument {arg}: {path} is {kind}, not a regular file")


def check_output_path(path: str | None, option: str) -> None:
    """Refuse an output file in a missing directory before any fitting is done."""
    if not path:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CLIError(f"argument {option}: directory does not exist: {folder}")
    if os.path.isdir(path):
        raise CLIError(f"argument {option}: {path} is a directory; give a file name")


def gamma_value(value: str) -> float | str:
    """A ``--gamma`` value: a positive number, ``scale`` or ``auto``."""
    if value in ("scale", "auto"):
        return value
    try:
        g = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a positive number, 'scale' or 'auto', got {value!r}") from None
    if not g > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {value!r}")
    return g


def tolerance_value(text: str) -> float:
    """A ``--tol`` value: a finite number >= 0 (``nan``, ``inf`` and negatives are refused;
    ``0`` asks for an exact check, which a floating-point gap then fails)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}"
                                         ) from None
    if not (np.isfinite(v) and v >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return v


METHOD_HELP = "one of " + ", ".join(catalogue.NAMES) + " (case-insensitive; aliases such " \
    "as csvc, nusvc, krr are accepted)"
