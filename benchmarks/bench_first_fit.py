"""First-fit latency: the README's main command, cold and warm, beside scikit-learn.

Times, as separate processes, exactly what a new user runs after installing:

* ``primaldual fit`` with ``NUMBA_CACHE_DIR`` pointed at a brand-new empty directory
  ("cold": what a fresh install sees, nothing compiled yet),
* ``primaldual fit`` again with the same directory ("second run"; a small fit takes the dense
  numpy route while the numba core is not compiled, so this one does not compile either),
* with ``--numba-warm``: ``primaldual fit`` after the numba core was compiled into the
  directory (the state after a first large fit; the compilation itself is not timed),
* the same fit in scikit-learn (load breast_cancer, standardise, ``SVC(C=1, gamma="scale")``,
  print the training accuracy) for reference.

Each repeat runs the three commands interleaved; wall time and the CPU time of the child
(user + system, from ``getrusage``) are reported, best and median over the repeats.  CPU time
is the figure to compare across machines: on a shared machine the wall time grows with the
load (printed with the table).

Usage (``PYTHON`` is the interpreter of a fresh venv with the project installed non-editable,
e.g. ``python -m venv /tmp/venv && /tmp/venv/bin/pip install .``)::

    python benchmarks/bench_first_fit.py --python /tmp/venv/bin/python --repeats 3 [--numba-warm]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

SKLEARN = (
    "from sklearn.datasets import load_breast_cancer\n"
    "from sklearn.preprocessing import StandardScaler\n"
    "from sklearn.svm import SVC\n"
    "X, y = load_breast_cancer(return_X_y=True)\n"
    "X = StandardScaler().fit_transform(X)\n"
    "m = SVC(C=1.0, gamma='scale').fit(X, y)\n"
    "print('training accuracy:', m.score(X, y))\n"
)


def _run(cmd: list[str], env: dict) -> tuple[float, float, str]:
    """(wall s, child CPU s, last output line) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stdout}\n{out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = out.stdout.strip().splitlines()
    return wall, cpu, lines[-1] if lines else ""


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter of the fresh venv (default: this one)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--numba-warm", action="store_true",
                    help="also time a run with the numba core compiled (~20 s CPU per repeat)")
    args = ap.parse_args(argv)
    exe = os.path.join(os.path.dirname(args.python), "primaldual")
    ours = [exe, "fit"] if os.path.exists(exe) else [args.python, "-m", "primaldual", "fit"]
    env = dict(os.environ, MPLBACKEND="Agg")
    env.pop("PYTHONPATH", None)
    names = ["cold", "warm", "sklearn"] + (["numba"] if args.numba_warm else [])
    rows: dict[str, list[tuple[float, float]]] = {k: [] for k in names}
    last = {}
    compile_core = [args.python, "-c", "from primaldual.backends.smo.solver import _warm_up; "
                    "print('compiled in', _warm_up(), 's')"]
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
            e = dict(env, NUMBA_CACHE_DIR=cache)
            for name in names:
                if name == "numba":
                    _run(compile_core, e)
                cmd = [args.python, "-c", SKLEARN] if name == "sklearn" else ours
                wall, cpu, line = _run(cmd, e)
                rows[name].append((wall, cpu))
                last[name] = line
    print(f"load average after the runs: {os.getloadavg()[0]:.1f} (on {os.cpu_count()} cores; "
          "above that the wall times are inflated)")
    print("| command | wall best [s] | wall median [s] | CPU best [s] | CPU median [s] |")
    print("|---|---|---|---|---|")
    label = {"cold": "`primaldual fit`, empty numba cache",
             "warm": "`primaldual fit`, second run (same cache directory)",
             "sklearn": "scikit-learn `SVC` (same data and fit)",
             "numba": "`primaldual fit`, numba core compiled and cached"}
    for name, r in rows.items():
        w = [x[0] for x in r]
        c = [x[1] for x in r]
        print(f"| {label[name]} | {min(w):.2f} | {statistics.median(w):.2f} | {min(c):.2f} | "
              f"{statistics.median(c):.2f} |")
    for name, line in last.items():
        print(f"{name}: {line}")


if __name__ == "__main__":
    main()
