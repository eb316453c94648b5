"""The argparse parser of the ``primaldual`` command: one sub-parser per subcommand, each
bound to its handler."""

from __future__ import annotations

import argparse

from .bench_command import cmd_bench
from .common import METHOD_HELP, CLIError, gamma_value, tolerance_value
from .model_commands import cmd_fit, cmd_predict, cmd_show
from .theory_commands import cmd_check, cmd_check_derivation, cmd_derive, cmd_exercise

__all__ = ["build_parser"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump
        raise CLIError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``primaldual`` command."""
    from ..backends import BACKENDS

    p = _Parser(prog="primaldual", description="Executable primal-dual theory for SVMs.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    s = sub.add_parser("show", help="print primal, Lagrangian, KKT conditions and dual")
    s.add_argument("method", metavar="METHOD", help=METHOD_HELP)
    g = s.add_mutually_exclusive_group()
    g.add_argument("--latex", action="store_true", help="LaTeX instead of text")
    g.add_argument("--markdown", action="store_true", help="Markdown with $$ LaTeX $$ blocks")
    s.add_argument("--data", default=None, metavar="NAME|PATH.csv",
                   help="build the problems on this data and print X, y, K, Q and the solution "
                        "(default: the six points of Amini's lecture, named 'amini')")
    s.add_argument("--steps", action="store_true",
                   help="the mechanical derivation of the dual, checked against the "
                        "hand-written one")
    for opt, typ in (("--kernel", str), ("--C", float), ("--gamma", gamma_value), ("--degree", int),
                     ("--coef0", float), ("--nu", float), ("--epsilon", float)):
        s.add_argument(opt, type=typ, default=None, dest=opt[2:])
    s.set_defaults(func=cmd_show, tol=None)

    f = sub.add_parser("fit", help="fit a method and print its certificate")
    f.add_argument("method", metavar="METHOD", nargs="?", default="CSVC")
    f.add_argument("--data", default="breast_cancer", metavar="NAME|PATH.csv")
    f.add_argument("--n-samples", type=int, default=None, dest="n_samples")
    f.add_argument("--kernel", default=None)
    f.add_argument("--C", type=float, default=None, dest="C")
    f.add_argument("--gamma", type=gamma_value, default=None)
    f.add_argument("--degree", type=int, default=None)
    f.add_argument("--coef0", type=float, default=None)
    f.add_argument("--nu", type=float, default=None)
    f.add_argument("--epsilon", type=float, default=None)
    f.add_argument("--tol", type=tolerance_value, default=None,
                   help="solver tolerance (default: 1e-5 for SMO-type methods)")
    f.add_argument("--backend", default="auto", choices=BACKENDS)
    f.add_argument("--form", default="dual", choices=("dual", "primal"))
    f.add_argument("--save", default=None, metavar="MODEL.npz")
    f.add_argument("--plot", default=None, metavar="OUT.png")
    f.add_argument("--table", nargs="?", const="text", default=None,
                   choices=("text", "latex", "markdown"),
                   help="print the per-sample KKT table (α_i, y_i f(x_i), ξ_i, μ_i, "
                        "complementarity products, category)")
    f.add_argument("--standardize", action=argparse.BooleanOptionalAction, default=None,
                   help="scale features to zero mean, unit variance (default: yes for "
                        "bundled and CSV data, no for the generated 2-D sets)")
    f.set_defaults(func=cmd_fit)

    r = sub.add_parser("predict", help="predict with a saved model")
    r.add_argument("model", metavar="MODEL.npz")
    r.add_argument("csv", metavar="PATH.csv")
    r.set_defaults(func=cmd_predict)

    c = sub.add_parser("check", help="verify the hand-derived dual against the primal")
    c.add_argument("method", metavar="METHOD", help=METHOD_HELP)
    c.add_argument("--n", type=int, default=24, help="number of random points")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--tol", type=tolerance_value, default=1e-5, help="relative gap tolerance")
    c.set_defaults(func=cmd_check)

    b = sub.add_parser("bench", help="time primaldual against scikit-learn, or run the "
                       "benchmark scripts of a folder")
    b.add_argument("--quick", action="store_true",
                   help="smaller sizes (built-in: N=500, one run; scripts: passed --quick)")
    b.add_argument("--n", type=int, default=None, help="built-in comparison: sample size")
    b.add_argument("--repeats", type=int, default=None,
                   help="built-in comparison: interleaved repeats (best kept)")
    b.add_argument("--dir", default=None,
                   help="run the scripts *.py of this folder (e.g. the repository's benchmarks/)")
    b.add_argument("--timeout", type=float, default=600.0)
    b.add_argument("only", nargs="*", metavar="NAME", help="only these benchmark scripts")
    b.set_defaults(func=cmd_bench)

    d = sub.add_parser("derive", help="derive the dual of a primal spec file mechanically")
    d.add_argument("spec", metavar="SPEC.py")
    d.set_defaults(func=cmd_derive)

    cd = sub.add_parser("check-derivation", help="compare the dual/Lagrangian/KKT system a "
                        "file derives by hand with the mechanical derivation")
    cd.add_argument("file", metavar="FILE.py")
    cd.add_argument("--tol", type=tolerance_value, default=1e-7, help="relative tolerance")
    cd.set_defaults(func=cmd_check_derivation)

    e = sub.add_parser("exercise", help="graded exercises: derive a dual or a KKT system, "
                       "have it checked line by line")
    e.add_argument("name", metavar="NAME", nargs="?", default=None,
                   help="the exercise (see --list); alone: print its statement")
    e.add_argument("--list", action="store_true", help="list the exercises (the default "
                   "without NAME)")
    e.add_argument("--answer", default=None, metavar="FILE.py",
                   help="grade this answer (a check-derivation file; the exercise's data and "
                        "primal are given): exit 0 pass, 1 a wrong line")
    e.add_argument("--solution", action="store_true", help="print the reference answer")
    e.add_argument("--tol", type=tolerance_value, default=1e-7, help="relative tolerance")
    e.set_defaults(func=cmd_exercise)
    return p
