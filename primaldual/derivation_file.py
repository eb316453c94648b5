"""A derivation file: the Python file ``primaldual check-derivation FILE.py`` and
``primaldual exercise NAME --answer FILE.py`` grade.

The file is run as a script. It defines the primal, as ``primal`` (a
:class:`~primaldual.model.Problem`) or ``build() -> Problem``, and any of the pieces derived by
hand from it, the keywords of :func:`~primaldual.derivation_check.check_derivation`:

* ``dual``: a dual :class:`~primaldual.model.Problem`;
* ``lagrangian``: a :class:`~primaldual.model.Lagrangian` or a function ``L(x, multipliers)``;
* ``kkt``: a :class:`~primaldual.model.KKTConditions` or a list of conditions;
* ``recover``: a function ``dual values -> primal values``;
* ``mapping``: ``{"your name": "derived name"}``.

An exercise runs the file with names already defined (its data and its ``primal``), so an
answer file needs only the pieces.
"""

from __future__ import annotations

import os
import runpy
import stat
import traceback
from dataclasses import dataclass, field
from typing import Any

from .derivation_check import DerivationReport, check_derivation
from .exceptions import DerivationFileError
from .model import Problem

__all__ = ["PIECES", "DerivationFile", "DerivationFileError", "read_derivation_file"]

#: The hand-derived pieces a file may define, in the order they are listed to a reader.
PIECES: tuple[str, ...] = ("dual", "lagrangian", "kkt", "recover")


@dataclass
class DerivationFile:
    """What a derivation file defines: the ``primal``, the ``pieces`` it gives (by name, only
    those it defines), the optional ``mapping`` and the whole ``namespace`` it left."""

    path: str
    primal: Problem
    pieces: dict[str, Any] = field(default_factory=dict)
    mapping: dict[str, str] | None = None
    namespace: dict[str, Any] = field(default_factory=dict)

    def check(self, tol: float = 1e-7) -> DerivationReport:
        """:func:`~primaldual.derivation_check.check_derivation` of the pieces against the
        mechanical derivation of the primal."""
        p = self.pieces
        return check_derivation(self.primal, p.get("dual"), p.get("lagrangian"), p.get("kkt"),
                                recover=p.get("recover"), mapping=self.mapping, tol=tol)


def _check_readable(path: str) -> None:
    """A regular file: a named pipe, a device or a directory is refused (running one would
    block or fail obscurely)."""
    try:
        mode = os.stat(path).st_mode  # stat never blocks, even on a named pipe
    except FileNotFoundError:
        raise DerivationFileError(f"file not found: {path}") from None
    except OSError as exc:
        raise DerivationFileError(f"cannot read {path}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        kind = ("a directory" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special")
        raise DerivationFileError(f"{path} is {kind}, not a regular file")


def _where_it_failed(exc: BaseException, path: str) -> str:
    """``line 7: `` of the deepest frame of the failure inside the file (empty if none)."""
    target = os.path.abspath(path)
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__)
             if os.path.abspath(f.filename) == target]
    return f"line {lines[-1]}: " if lines else ""


def read_derivation_file(path: str, given: dict[str, Any] | None = None,
                         run_name: str = "__primaldual_check__") -> DerivationFile:
    """Run the file and collect what it defines.

    Parameters
    ----------
    path : str
        The Python file (any extension).
    given : dict, optional
        Names defined before the file runs (an exercise's data and ``primal``).
    run_name : str
        ``__name__`` inside the file.

    Returns
    -------
    DerivationFile

    Raises
    ------
    DerivationFileError
        The file is missing or not a regular file, raises when it runs (the message names the
        line and the error), defines no primal, or defines none of :data:`PIECES`.
    """
    _check_readable(path)
    try:
        ns = runpy.run_path(path, init_globals=dict(given or {}), run_name=run_name)
    except SyntaxError as exc:
        raise DerivationFileError(f"{path} does not parse: line {exc.lineno}: {exc.msg}"
                                  ) from None
    except Exception as exc:  # noqa: BLE001 - the writer's own code: its error, one line
        raise DerivationFileError(f"running {path} failed: {_where_it_failed(exc, path)}"
                                  f"{type(exc).__name__}: {exc}") from None
    P = ns.get("primal")
    if not isinstance(P, Problem) and callable(ns.get("build")):
        P = ns["build"]()
        if not isinstance(P, Problem):
            raise DerivationFileError(f"{path}: build() returned {type(P).__name__}, not a "
                                      "Problem")
    if not isinstance(P, Problem):
        raise DerivationFileError(f"{path} must define `primal` (a Problem) or "
                                  "`build() -> Problem`")
    pieces = {k: ns[k] for k in PIECES if ns.get(k) is not None}
    if not pieces:
        raise DerivationFileError(f"{path} defines none of `dual`, `lagrangian`, `kkt`, "
                                  "`recover`: nothing to check")
    return DerivationFile(path, P, pieces, ns.get("mapping"), ns)
