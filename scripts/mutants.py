"""Planted mutants (issue 27; docs/reliability.md, "Issue 27"): each mutant is applied to a
temporary copy of the package and the tests chosen for it are run there; a mutant is *killed*
when a test fails, *survived* when they pass. A survivor whose run shows more skipped tests
than the unmutated baseline is reported as "survived (skip)": a failure turned into a skip.

Usage::

    python scripts/mutants.py [--only NAME ...] [--list]

Prints one row per mutant (name, file, killed/survived, the first failing test) and exits 1
if any mutant survived. The SMO core is compiled by numba: its mutants recompile it in the
temporary copy (its own NUMBA_CACHE_DIR), which takes a minute or two each.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: The fast tests that guard the certificate, the SMO stop and bias, the catalogue's boxes and
#: the oracle (a few seconds each).
ORACLE_TESTS = ["tests/testing/test_oracle.py"]


@dataclass
class Mutant:
    name: str
    path: str
    old: str
    new: str
    tests: list[str]


MUTANTS = [
    Mutant("certificate gap = 0.0 * (P - D)", "primaldual/certificate.py",
           "        gap = P - D\n    mx =", "        gap = 0.0 * (P - D)\n    mx =",
           ORACLE_TESTS + ["tests/certificate"]),
    Mutant("closed-form gap set to 0", "primaldual/methods/_fit.py",
           "    gap = P - D\n    return Certificate(", "    gap = 0.0\n    return Certificate(",
           ORACLE_TESTS),
    Mutant("relative gap with a floor of 1 (per-method unit)", "primaldual/methods/_base.py",
           "certificate_unit(self._upper(data), data.C))", "1.0)", ORACLE_TESTS),
    Mutant("SMO stops at 100x its tolerance", "primaldual/backends/smo/adapter.py",
           "equality=box.equality, tol=tol,", "equality=box.equality, tol=100 * tol,",
           ORACLE_TESTS),
    Mutant("SMO gap stop at 100x its tolerance too", "primaldual/backends/smo/adapter.py",
           "equality=box.equality, tol=tol, cache_size=cache_size,\n"
           "                              shrinking=shrinking, alpha0=a0, verbose=verbose,\n"
           "                              record_trace=record_trace, gap_tol=tol,",
           "equality=box.equality, tol=100 * tol, cache_size=cache_size,\n"
           "                              shrinking=shrinking, alpha0=a0, verbose=verbose,\n"
           "                              record_trace=record_trace, gap_tol=100 * tol,",
           ORACLE_TESTS),
    Mutant("intercept from the interval midpoint only (compiled core)",
           "primaldual/backends/smo/core.py",
           "    if nf > 0:\n        return sf / nf\n    return _midpoint(lb, ub)",
           "    return _midpoint(lb, ub)", ORACLE_TESTS),
    Mutant("intercept from the interval midpoint only (dense route)",
           "primaldual/backends/smo/dense.py",
           "    free = ~(at_u | at_l)\n    if free.any():",
           "    free = ~(at_u | at_l)\n    if False:", ORACLE_TESTS),
    Mutant("C-SVC dual box of 2C", "primaldual/methods/svc.py",
           "        return BoxQP(Q, -np.ones(data.N), data.C.copy(), \"one\",",
           "        return BoxQP(Q, -np.ones(data.N), 2 * data.C, \"one\",", ORACLE_TESTS),
    Mutant("L2-SVC slacks alpha / C again", "primaldual/methods/svc.py",
           "        xi = np.maximum(0.0, 1.0 - data.y * (data.kmatvec(beta) + b))",
           "        xi = a / data.C", ORACLE_TESTS),
    Mutant("oracle: unit floor of 1", "primaldual/_oracle/report.py",
           "    return min(1.0, cmax * cmax) if 0.0 < cmax < np.inf else 1.0",
           "    return 1.0", ORACLE_TESTS),
    Mutant("oracle: dual feasibility not checked", "primaldual/_oracle/report.py",
           "        if not self.dual_infeasibility <= self.tol + slack:",
           "        if False:", ORACLE_TESTS),
    Mutant("oracle: hinge loss dropped from the primal", "primaldual/_oracle/binary.py",
           "            P = 0.5 * w2 + float(Ci @ np.maximum(0.0, 1.0 - m))",
           "            P = 0.5 * w2", ORACLE_TESTS),
    Mutant("oracle: tol not capped at 1e-2", "primaldual/_oracle/report.py",
           "    return float(min(max(tol, 1e-6), 1e-2))", "    return float(max(tol, 1e-6))",
           ORACLE_TESTS),
    Mutant("tol not capped at 1e-2 in the audit", "primaldual/methods/_base.py",
           "return min(max(tol, 1e-6), 1e-2) if", "return max(tol, 1e-6) if", ORACLE_TESTS),
    Mutant("kernel PCA: spectrum order not checked", "primaldual/decomposition/kpca.py",
           "and order <= 1e-6 and", "and", ORACLE_TESTS),
]


def _copy_tree(dst: str) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".git", "*.egg-info", "site",
                                    ".mypy_cache", ".ruff_cache", ".pytest_cache")
    for name in ("primaldual", "tests", "docs", "examples"):
        src = os.path.join(ROOT, name)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(dst, name), ignore=ignore)
    for name in ("pyproject.toml", "README.md", "mkdocs.yml"):
        if os.path.exists(os.path.join(ROOT, name)):
            shutil.copy(os.path.join(ROOT, name), dst)


def _run(dst: str, tests: list[str]) -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=dst, NUMBA_CACHE_DIR=os.path.join(dst, ".numba"),
               PYTHONDONTWRITEBYTECODE="1")
    p = subprocess.run([sys.executable, "-m", "pytest", *tests, "-x", "-q", "-rfs",
                        "-p", "no:cacheprovider"], cwd=dst, env=env, capture_output=True,
                       text=True)
    return p.returncode, p.stdout + p.stderr


def _skips(out: str) -> int:
    m = re.search(r"(\d+) skipped", out)
    return int(m.group(1)) if m else 0


def _first_failure(out: str) -> str:
    m = re.search(r"^FAILED (\S+)", out, re.M)
    return m.group(1) if m else ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="substrings of mutant names")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    chosen = [m for m in MUTANTS if not args.only or any(s in m.name for s in args.only)]
    if args.list:
        for m in chosen:
            print(f"{m.name}  ({m.path})")
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="pd-mutants-") as tmp:
        base = os.path.join(tmp, "baseline")
        os.makedirs(base)
        _copy_tree(base)
        baseline: dict[tuple[str, ...], int] = {}
        for m in chosen:
            key = tuple(m.tests)
            if key not in baseline:
                rc, out = _run(base, m.tests)
                if rc != 0:
                    print(f"baseline of {key} fails:\n{out[-3000:]}")
                    return 2
                baseline[key] = _skips(out)
            d = os.path.join(tmp, f"m{len(rows)}")
            shutil.copytree(base, d)
            path = os.path.join(d, m.path)
            with open(path) as fh:
                src = fh.read()
            if src.count(m.old) != 1:
                rows.append((m.name, m.path, "NOT APPLIED (pattern not found once)", "", 0.0))
                continue
            with open(path, "w") as fh:
                fh.write(src.replace(m.old, m.new))
            t0 = time.perf_counter()
            rc, out = _run(d, m.tests)
            dt = time.perf_counter() - t0
            if rc == 1:
                verdict, by = "killed", _first_failure(out)
            elif rc == 0:
                verdict = ("survived (skip)" if _skips(out) > baseline[key] else "survived")
                by = ""
            else:
                verdict, by = f"error (pytest exit {rc})", out.strip().splitlines()[-1:]
                by = by[0] if by else ""
            rows.append((m.name, m.path, verdict, by, dt))
            print(f"{verdict:16s} {m.name}  [{dt:.0f} s] {by}", flush=True)
            shutil.rmtree(d, ignore_errors=True)
    print()
    print("| mutant | file | result | first failing test |")
    print("|---|---|---|---|")
    for name, path, verdict, by, _ in rows:
        print(f"| {name} | `{path}` | {verdict} | `{by}` |" if by else
              f"| {name} | `{path}` | {verdict} | |")
    killed = sum(r[2] == "killed" for r in rows)
    print(f"\n{killed} of {len(rows)} mutants killed")
    return 0 if killed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
