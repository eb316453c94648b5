"""The twin SVM (Jayadeva et al. 2007) as one estimator, ``TwinSVC.fit`` (both planes derived,
solved, recovered and certified), against the two plane QPs written by hand in CVXPY
(Clarabel), same data, interleaved, best of ``--repeats``. Linear planes (and with
``--rbf-sizes`` the kernel-generated surfaces, RBF ``gamma = 0.1``, ``eps = 1e-3``), two
Gaussian classes of ``N/2`` rows each in ``d = 10``; ``c1 = c2 = 1``. The columns: wall time
of each, their ratio, the largest relative difference of the two planes' primal objectives
(ours from the certificates) and the largest difference of the planes ``(w_k, b_k)``
(``(u_k, b_k)`` for the surfaces).

Usage::

    PYTHONPATH=. python benchmarks/bench_twin.py
    PYTHONPATH=. python benchmarks/bench_twin.py --sizes 2000 10000 --repeats 3 --tol 1e-3
    PYTHONPATH=. python benchmarks/bench_twin.py --sizes --rbf-sizes 1000 --repeats 1 --tol 1e-6
    PYTHONPATH=. python benchmarks/bench_twin.py --sizes --rbf-sizes 1000 --repeats 1 \
        --tol 1e-10 --ref-tol 1e-10
    PYTHONPATH=. python benchmarks/bench_twin.py --sizes --rbf-sizes 5000 10000 --repeats 1 \
        --tol 1e-6 --ref-max 2000

``--ref-max``: the CVXPY models run only up to that many rows (the RBF surfaces' took 333 s
at N = 2,000; each is a dense ``N x N`` kernel block inside a conic program), larger rows
print ``-`` in their columns. Each row also prints the load average after it.

``--ref-timeout T``: the CVXPY models run in a child process (spawned: its memory is its own),
killed when they have not finished ``T`` seconds after its imports; the row then prints their
time as ``> T`` and the ratio as ``< ours/T`` (a lower bound on their time: ``ours <= 2 T``
proves "ours at most twice theirs"). The fit runs first, then the child, so the two never
share the cores. The row gains a column, the peak resident memory of each side in GB
(``ru_maxrss``: ours of this process so far, the reference's of its child, killed or not)::

    PYTHONPATH=. python benchmarks/bench_twin.py --sizes --rbf-sizes 10000 --repeats 1 \
        --tol 1e-6 --ref-timeout 900
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing as mp
import os
import resource
import time

import cvxpy as cp
import numpy as np
from _timing import best_interleaved

from primaldual.methods.twin import TwinSVC


def _data(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(n // 2, d)) + 0.5, rng.normal(size=(n - n // 2, d)) - 0.5])
    return X, np.r_[np.ones(n // 2), -np.ones(n - n // 2)]


#: Clarabel's options for the CVXPY models (``--ref-tol``: its gap and feasibility
#: tolerances; empty: Clarabel's defaults, 1e-8)
REF_OPTS: dict[str, float] = {}


def _plane(near: np.ndarray, far: np.ndarray, c: float, side: float):
    """One plane's QP as a user writes it in CVXPY: close to ``near``, ``far`` at distance
    >= 1 on the ``side`` of the plane."""
    w, b, xi = cp.Variable(near.shape[1]), cp.Variable(), cp.Variable(far.shape[0])
    pr = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(near @ w + b) + c * cp.sum(xi)),
                    [side * (far @ w + b) + xi >= 1, xi >= 0])
    pr.solve(solver="CLARABEL", **REF_OPTS)
    return pr.value, np.r_[w.value, b.value]


def _surface(near: np.ndarray, far: np.ndarray, c: float, side: float, eps: float):
    """One kernel-generated surface's QP in CVXPY (``near``, ``far``: kernel rows K(., Cᵀ)),
    with the paper's regulariser ``eps/2 ||(u, b)||²``."""
    u, b, xi = cp.Variable(near.shape[1]), cp.Variable(), cp.Variable(far.shape[0])
    pr = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(near @ u + b) + c * cp.sum(xi)
                                + 0.5 * eps * (cp.sum_squares(u) + cp.square(b))),
                    [side * (far @ u + b) + xi >= 1, xi >= 0])
    pr.solve(solver="CLARABEL", **REF_OPTS)
    return pr.value, np.r_[u.value, b.value]


def hand(X: np.ndarray, y: np.ndarray, gamma: float | None = None, eps: float = 0.0
         ) -> list[tuple[float, np.ndarray]]:
    if gamma is not None:
        from primaldual.kernels import make_kernel
        K = make_kernel("rbf", gamma=gamma)(X)
        A, B = K[y > 0], K[y < 0]
        return [_surface(A, B, 1.0, -1.0, eps), _surface(B, A, 1.0, 1.0, eps)]
    A, B = X[y > 0], X[y < 0]
    return [_plane(A, B, 1.0, -1.0), _plane(B, A, 1.0, 1.0)]


def ours(X: np.ndarray, y: np.ndarray, tol: float, gamma: float | None = None,
         eps: float = 0.0) -> tuple[list[tuple[float, np.ndarray]], list[str]]:
    kw = {} if gamma is None else {"kernel": "rbf", "gamma": gamma, "eps": eps}
    m = TwinSVC(c1=1.0, c2=1.0, tol=tol, **kw).fit(X, y)
    name = "w" if gamma is None else "u"
    return [(c.primal_objective, np.r_[m.planes_[k].point_[name], m.intercept_[k]])
            for k, c in enumerate(m.certificates_)], [f"{p.backend_} ({p.certificate_.status})"
                                                      for p in m.planes_]


def _hand_child(conn, X: np.ndarray, y: np.ndarray, gamma: float | None, eps: float,
                opts: dict[str, float]) -> None:
    """The child process of ``--ref-timeout``: says it is ready (imports done), then sends
    the CVXPY models' wall time, their results and its peak resident memory (bytes)."""
    REF_OPTS.update(opts)
    conn.send("ready")
    t0 = time.perf_counter()
    out = hand(X, y, gamma, eps)
    t = time.perf_counter() - t0
    conn.send((t, out, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024))


def hand_timed(X: np.ndarray, y: np.ndarray, gamma: float | None, eps: float, timeout: float
               ) -> tuple[float, list[tuple[float, np.ndarray]] | None, float]:
    """:func:`hand` in a spawned child, killed ``timeout`` seconds after it is ready.

    Returns the wall time (``timeout`` when killed), the results (``None`` when killed) and
    the child's peak resident memory in bytes (``RUSAGE_CHILDREN``'s ``ru_maxrss``, the
    largest of the children reaped so far: this one, as it is the only large one).
    """
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_hand_child, args=(child, X, y, gamma, eps, dict(REF_OPTS)),
                       daemon=True)
    proc.start()
    child.close()
    try:
        assert parent.recv() == "ready"
        t0 = time.perf_counter()
        if parent.poll(timeout):
            t, out, rss = parent.recv()
            proc.join()
            return t, out, float(rss)
        waited = time.perf_counter() - t0
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        parent.close()
    return waited, None, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024.0


def _diffs(mine: list[tuple[float, np.ndarray]], ref: list[tuple[float, np.ndarray]]
           ) -> tuple[float, float]:
    """The largest relative objective difference and the largest plane difference."""
    obj = max(abs(a[0] - r[0]) / max(1.0, abs(r[0])) for a, r in zip(mine, ref, strict=True))
    pl = max(float(np.max(np.abs(a[1] - r[1]))) for a, r in zip(mine, ref, strict=True))
    return obj, pl


def _timed_row(kind: str, n: int, X: np.ndarray, y: np.ndarray, gamma: float | None,
               eps: float, tol: float, repeats: int, timeout: float) -> None:
    """One row of ``--ref-timeout``: ours best of ``repeats`` in this process, then the
    reference best of ``repeats`` in children (stopping at the first one killed)."""
    to = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        mine, backends = ours(X, y, tol, gamma, eps)
        to = min(to, time.perf_counter() - t0)
    rss_ours = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0
    th, ref, rss_ref = np.inf, None, 0.0
    for _ in range(repeats):
        t, out, rss = hand_timed(X, y, gamma, eps, timeout)
        rss_ref = max(rss_ref, rss)
        if out is None:
            th, ref = t, None
            break
        th, ref = min(th, t), out
    if ref is None:
        ths, ratio, obj, pl = f"> {th:.4g}", f"< {to / th:.3g}", "-", "-"
    else:
        ths, ratio = f"{th:.3f}", f"{to / th:.2f}"
        o, p = _diffs(mine, ref)
        obj, pl = f"{o:.1e}", f"{p:.1e}"
    print(f"| {kind} | {n} | {to:.3f} | {ths} | {ratio} | {'/'.join(backends)} | {obj} | {pl} "
          f"| {os.getloadavg()[0]:.1f} | {rss_ours / 1e9:.2f} / {rss_ref / 1e9:.2f} |",
          flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[2000, 10000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--rbf-sizes", type=int, nargs="*", default=[],
                    help="also the kernel-generated surfaces (RBF gamma = 0.1, eps = 1e-3)")
    ap.add_argument("--ref-max", type=int, default=None,
                    help="run the CVXPY models only up to this N (default: every N)")
    ap.add_argument("--ref-tol", type=float, default=None,
                    help="Clarabel's tol_gap_abs, tol_gap_rel and tol_feas for the CVXPY "
                         "models (default: Clarabel's own, 1e-8)")
    ap.add_argument("--ref-timeout", type=float, default=None,
                    help="run the CVXPY models in a child process killed after this many "
                         "seconds (their time then prints as '> T', the ratio as '< r')")
    args = ap.parse_args()
    if args.ref_tol is not None:
        REF_OPTS.update(tol_gap_abs=args.ref_tol, tol_gap_rel=args.ref_tol,
                        tol_feas=args.ref_tol)
    ours(*_data(200, 10, 1), args.tol)          # imports and numba's cached code, once
    if args.rbf_sizes:
        ours(*_data(200, 10, 1), args.tol, 0.1, 1e-3)
    timed = args.ref_timeout is not None
    print("| planes | N | TwinSVC.fit [s] | two CVXPY QPs [s] | ratio | backends (status) "
          "| objective rel. diff | max plane diff | load |"
          + (" peak memory ours / CVXPY [GB] |" if timed else ""))
    print("|---|---|---|---|---|---|---|---|---|" + ("---|" if timed else ""))
    runs = [(n, None) for n in args.sizes] + [(n, 0.1) for n in args.rbf_sizes]
    for n, gamma in runs:
        X, y = _data(n, 10, 0)
        eps = 0.0 if gamma is None else 1e-3
        kind = "linear" if gamma is None else "RBF"
        if args.ref_max is not None and n > args.ref_max:
            t0 = time.perf_counter()
            _, backends = ours(X, y, args.tol, gamma, eps)
            to = time.perf_counter() - t0
            print(f"| {kind} | {n} | {to:.3f} | - | - | {'/'.join(backends)} | - | - | "
                  f"{os.getloadavg()[0]:.1f} |", flush=True)
            continue
        if timed:
            _timed_row(kind, n, X, y, gamma, eps, args.tol, args.repeats, args.ref_timeout)
            continue
        (to, th), _, ((mine, backends), ref) = best_interleaved(
            [functools.partial(ours, X, y, args.tol, gamma, eps),
             functools.partial(hand, X, y, gamma, eps)], args.repeats)
        obj, pl = _diffs(mine, ref)
        print(f"| {kind} | {n} | {to:.3f} | {th:.3f} | {to / th:.2f} | {'/'.join(backends)} "
              f"| {obj:.1e} | {pl:.1e} | {os.getloadavg()[0]:.1f} |", flush=True)

if __name__ == "__main__":
    main()
