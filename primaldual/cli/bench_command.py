"""``bench``: the built-in timing comparison with scikit-learn, or a folder's benchmark
scripts."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from .common import CLIError


def cmd_bench(args: argparse.Namespace) -> int:
    """``bench``: the built-in comparison with scikit-learn, or the scripts of ``--dir``
    (exit 1 when one fails or times out)."""
    if args.dir is None:
        if args.only:
            raise CLIError("argument NAME: benchmark script names need --dir (the folder of "
                           "scripts, e.g. the source repository's benchmarks/)")
        from ..bench import format_table, quick_comparison

        n = args.n if args.n is not None else (500 if args.quick else 2000)
        repeats = args.repeats if args.repeats is not None else (1 if args.quick else 3)
        print(f"primaldual vs scikit-learn, same problems, N = {n}, best of {repeats} "
              "interleaved runs (ratio < 1: primaldual faster)")
        print(format_table(quick_comparison(n_samples=n, repeats=repeats)))
        return 0
    bdir = Path(args.dir)
    if not bdir.is_dir():
        raise CLIError(f"argument --dir: benchmark folder not found: {bdir}")
    scripts = sorted(bdir.glob("*.py"))
    if args.only:
        names = {p.stem: p for p in scripts}
        unknown = [n for n in args.only if n not in names and Path(n).stem not in names]
        if unknown:
            raise CLIError(f"argument NAME: unknown benchmark {unknown[0]!r}; allowed: "
                           f"{', '.join(names)}")
        scripts = [names[Path(n).stem] for n in args.only]
    # the scripts import the primaldual this command runs from: the folder holding the
    # package (this file is primaldual/cli/bench_command.py)
    env = dict(os.environ, MPLBACKEND="Agg")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH", "")]
    ).rstrip(os.pathsep)
    flags = ["--quick"] if args.quick else []
    code = 0
    for s in scripts:
        print(f"== {s.name} {' '.join(flags)} ==", flush=True)
        try:
            r = subprocess.run([sys.executable, str(s), *flags], capture_output=True,
                               text=True, timeout=args.timeout, env=env)
        except subprocess.TimeoutExpired:
            print(f"timed out after {args.timeout} s")
            code = 1
            continue
        print(r.stdout, end="")
        if r.returncode != 0:
            print(f"failed (exit {r.returncode}): {r.stderr.strip().splitlines()[-1:]}")
            code = 1
    return code
