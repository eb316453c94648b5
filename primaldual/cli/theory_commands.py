"""``check``, ``derive``, ``check-derivation`` and ``exercise``: the subcommands about the
derivation of a dual (not about a fit)."""

from __future__ import annotations

import argparse
import os
import runpy

import numpy as np

from .common import CLIError, resolve_method, task_of
from .data import random_data


def cmd_check(args: argparse.Namespace) -> int:
    """``check``: the hand-derived dual against the primal (and the mechanical dual) on
    seeded random points, solved with CVXPY; exit 1 when they differ."""
    cls = resolve_method(args.method)
    if args.n < 2:
        raise CLIError(f"argument --n: need at least 2 points (one per class), got {args.n}")
    from ..exceptions import InsufficientMemoryError
    from ..validation import block_bytes, check_memory

    try:  # CVXPY's dual holds Q (n x n) and its copies: three n x n blocks, refused up front
        check_memory(block_bytes([(args.n, args.n)] * 3 + [(args.n, 3)]),
                     f"checking {cls.__name__} on {args.n} points (dense {args.n} x {args.n} "
                     "matrices for CVXPY)", hint="use a smaller --n")
    except InsufficientMemoryError as exc:
        raise CLIError(f"argument --n: {exc}") from None
    X, y = random_data(task_of(cls), args.n, args.seed)
    if cls.__name__ == "HardMarginSVC":
        X = X + 3.0 * y[:, None]  # hard margin needs separable data: pull the classes apart
    model = cls()
    P = model.primal(X, y)
    D = model.dual(X, y)
    sp = P.solve(backend="cvxpy")
    sd = D.solve(backend="cvxpy")
    if not (sp.has_point and sd.has_point):
        print(f"{cls.__name__}: primal status {sp.status}, dual status {sd.status}")
        print("FAIL")
        return 1
    pv, dv = float(P.evaluate(sp.values)), float(D.evaluate(sd.values))
    gap = pv - dv
    rel = abs(gap) / max(1.0, abs(pv))
    kkt_max = max((float(np.max(np.abs(v))) if np.size(v) else 0.0
                   for v in P.kkt().residuals(sp.values, sp.multipliers).values()), default=0.0)
    print(f"{cls.__name__}: N = {len(y)} seeded random points (seed {args.seed}), CVXPY")
    print(f"primal optimum        {pv:.10g}   ({sp.status})")
    print(f"dual optimum          {dv:.10g}   ({sd.status})")
    print(f"duality gap           {gap:.3e}")
    print(f"relative gap          {rel:.3e}")
    print(f"KKT max residual      {kkt_max:.3e}   (primal point and multipliers)")
    ok = rel <= args.tol and kkt_max <= max(args.tol * 100, 1e-4)
    from ..model.dualize import dualize

    try:
        M = dualize(P).dual
    except (ValueError, TypeError, NotImplementedError) as exc:
        print(f"mechanical dual       not derived: {exc}")
        M = None
    if M is not None:
        sm = M.solve(backend="cvxpy")
        mv = float(sm.objective_value)
        mrel = abs(mv - dv) / max(1.0, abs(dv))
        print(f"mechanical dual       {mv:.10g}   (rel. difference to hand dual {mrel:.3e})")
        ok = ok and mrel <= args.tol
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def cmd_derive(args: argparse.Namespace) -> int:
    """``derive``: the Lagrangian, KKT conditions and mechanical dual of the primal a spec
    file defines."""
    from ..model import Problem

    if not os.path.exists(args.spec):
        raise CLIError(f"argument SPEC: file not found: {args.spec}")
    ns = runpy.run_path(args.spec, run_name="__primaldual_spec__")
    if isinstance(ns.get("primal"), Problem):
        P = ns["primal"]
    elif callable(ns.get("build")):
        P = ns["build"]()
    else:
        raise CLIError(f"argument SPEC: {args.spec} must define `primal` (a Problem) or "
                       "`build() -> Problem`")
    if not isinstance(P, Problem):
        raise CLIError(f"argument SPEC: build() returned {type(P).__name__}, not a Problem")
    print(f"== Primal ==\n{P}\n")
    print(f"== Lagrangian ==\n{P.lagrangian()}\n")
    print(f"== KKT conditions ==\n{P.kkt()}\n")
    from ..model.dualize import dualize

    res = dualize(P)
    if res.steps:
        print("== Derivation ==")
        for i, st in enumerate(res.steps, 1):
            print(f"{i}. {st}")
        print()
    else:
        print(f"== Dual ==\n{res.dual}")
    return 0


def cmd_check_derivation(args: argparse.Namespace) -> int:
    """Run FILE.py and compare the pieces it defines (``primal`` or ``build()``, and any of
    ``dual``, ``lagrangian``, ``kkt``, ``recover``, ``mapping``) with the mechanical
    derivation; print the report (exit 1 when a piece differs)."""
    from ..derivation_file import DerivationFileError, read_derivation_file

    try:
        rep = read_derivation_file(args.file).check(args.tol)
    except DerivationFileError as exc:
        raise CLIError(f"argument FILE: {exc}") from None
    print(rep)
    return 0 if rep.ok else 1


def cmd_exercise(args: argparse.Namespace) -> int:
    """``--list``, the statement of NAME, its reference answer (``--solution``) or the grading
    of an answer file (``--answer FILE``: exit 1 when a line is wrong)."""
    from .. import exercises as ex_mod
    from ..derivation_file import DerivationFileError

    if args.name is None:
        if args.answer or args.solution:
            raise CLIError("argument NAME: --answer and --solution need an exercise name; "
                           f"allowed: {', '.join(ex_mod.names())}")
        print(ex_mod.listing())
        return 0
    if args.list:
        raise CLIError("argument --list: lists every exercise; give it without NAME")
    if args.answer and args.solution:
        raise CLIError("argument --solution: not with --answer")
    try:
        ex = ex_mod.exercise(args.name)
    except ValueError as exc:
        raise CLIError(f"argument NAME: {exc}") from None
    if args.solution:
        print(ex_mod.reference_text(ex), end="")
        return 0
    if not args.answer:
        print(ex_mod.statement(ex))
        return 0
    try:
        result = ex_mod.grade(ex, args.answer, tol=args.tol)
    except DerivationFileError as exc:
        raise CLIError(f"argument --answer: {exc}") from None
    print(result)
    return 0 if result.ok else 1
