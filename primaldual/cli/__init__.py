"""The ``primaldual`` command line (also ``python -m primaldual``).

Subcommands::

    primaldual show METHOD [--latex | --markdown]      primal, Lagrangian, KKT conditions, dual
    primaldual fit [METHOD] [--data NAME|PATH.csv] [--kernel K] [--C C] [--gamma G]
                   [--backend B] [--form F] [--save model.npz] [--plot out.png]
    primaldual predict MODEL.npz PATH.csv              one prediction per line
    primaldual check METHOD                            dual vs primal (and vs mechanical dual)
    primaldual bench [--quick] [--dir DIR [NAME ...]]   timings vs scikit-learn / run scripts
    primaldual derive SPEC.py                          mechanical dual of a user's primal spec
    primaldual check-derivation FILE.py                a hand derivation vs the mechanical one
    primaldual exercise [--list | NAME [--answer FILE.py | --solution]]
                                                       graded derivation exercises

``primaldual fit`` without arguments fits a C-SVC (RBF kernel) on the standardised
breast-cancer data and prints its certificate.

Exit codes: 0 success, 1 ``check``, ``check-derivation`` or ``exercise --answer`` found a
difference, 2 bad argument or a fitting error (one line naming the argument and the allowed
values, no traceback), 3 the problem is infeasible (e.g. hard margin on non-separable data).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .bench_command import cmd_bench
from .common import (
    METHOD_ALIASES,
    METHOD_CLASSES,
    CLIError,
    method_names,
    resolve_method,
)
from .data import MAX_CLASSES
from .model_commands import cmd_fit, cmd_predict, cmd_show
from .parser import build_parser
from .theory_commands import cmd_check, cmd_check_derivation, cmd_derive, cmd_exercise

# the first four are the command line's API; the others were importable from the single
# module ``primaldual.cli`` was before its subcommands got modules of their own, and stay so
__all__ = ["METHOD_ALIASES", "main", "resolve_method", "build_parser",
           "METHOD_CLASSES", "CLIError", "MAX_CLASSES", "method_names", "cmd_bench", "cmd_check",
           "cmd_check_derivation", "cmd_derive", "cmd_exercise", "cmd_fit", "cmd_predict",
           "cmd_show"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (see the module docstring)."""
    from ..solution import InfeasibleProblemError

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser()
        if not argv:
            parser.print_help()
            return 0
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        return int(args.func(args) or 0)
    except CLIError as exc:
        print(f"primaldual: error: {exc}" if not str(exc).startswith("primaldual")
              else f"{exc}", file=sys.stderr)
        return exc.code
    except InfeasibleProblemError as exc:
        print(f"primaldual: infeasible: {exc}", file=sys.stderr)
        return 3
    except (ValueError, TypeError) as exc:
        print(f"primaldual: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except KeyboardInterrupt:
        return 130
    except MemoryError as exc:
        print(f"primaldual: out of memory: {one_line(exc) or 'an allocation failed'}; use a "
              "smaller --n-samples or a backend that does not store the N x N kernel (smo, "
              "lowrank)", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"primaldual: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # never a traceback: an unexpected failure is one line too
        print(f"primaldual: internal error: {type(exc).__name__}: {one_line(exc)} (please "
              "report it)", file=sys.stderr)
        return 2


def one_line(exc: BaseException) -> str:
    """The exception's message on one line (at most 500 characters)."""
    text = " ".join(str(exc).split())
    return text if len(text) <= 500 else text[:497] + "..."


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
