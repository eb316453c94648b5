"""SMO backend vs scikit-learn's LIBSVM (SVC, SVR, NuSVC) on the same problems.

Same data, C, gamma, tol, cache_size and shrinking on both sides; runs are interleaved
(ours, LIBSVM, ours, LIBSVM, ...) and the median of the repeats is reported, because the
machine is shared. numba compilation is excluded from the timings (a warm-up solve on a tiny
problem runs first) and reported separately.

Usage::

    PYTHONPATH=. python benchmarks/bench_smo.py            # full table (5k, 20k, ...)
    PYTHONPATH=. python benchmarks/bench_smo.py --quick    # small sizes, one repeat
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from sklearn.datasets import load_breast_cancer, make_classification, make_friedman1
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR, NuSVC

from primaldual.backends.smo import compile_core, smo_csvc, smo_epsilon_svr, smo_nusvc
from primaldual.kernels import RBF


def _rbf(A, B, gamma):
    return RBF(gamma=gamma)(A, B)


def _gamma_scale(X):
    return 1.0 / (X.shape[1] * X.var())


def _clf_data(n, seed=0):
    X, y = make_classification(n, 20, n_informative=10, flip_y=0.05, random_state=seed)
    return StandardScaler().fit_transform(X), 2.0 * y - 1.0


def _time(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _interleave(ours, ref, repeats):
    to, tr = [], []
    ro = rr = None
    for _ in range(repeats):
        t, ro = _time(ours)
        to.append(t)
        t, rr = _time(ref)
        tr.append(t)
    return statistics.median(to), statistics.median(tr), ro, rr


def bench_csvc(name, X, y, C, repeats, cache_size, tol):
    g = _gamma_scale(X)
    k = RBF(gamma=g)
    to, tr, r, s = _interleave(
        lambda: smo_csvc(X, y, k, C, tol=tol, cache_size=cache_size),
        lambda: SVC(C=C, gamma=g, tol=tol, cache_size=cache_size).fit(X, y), repeats)
    sv = s.support_
    beta_s = s.dual_coef_[0]
    Ks = _rbf(X[sv], X[sv], g)
    d_ref = 0.5 * beta_s @ Ks @ beta_s - np.abs(beta_s).sum()
    f_ours = _decision(X, X, r.beta, r.b, g)
    agree = np.mean(np.sign(f_ours) == s.predict(X))
    return dict(name=name, n=len(y), ours=to, ref=tr, obj=r.objective, obj_ref=d_ref,
                agree=agree, it=r.n_iter, it_ref=int(np.ravel(s.n_iter_)[0]),
                nsv=int((r.alpha > 0).sum()), nsv_ref=len(sv))


def bench_svr(name, X, y, C, eps, repeats, cache_size, tol):
    g = _gamma_scale(X)
    k = RBF(gamma=g)
    to, tr, r, s = _interleave(
        lambda: smo_epsilon_svr(X, y, k, C, eps, tol=tol, cache_size=cache_size),
        lambda: SVR(C=C, epsilon=eps, gamma=g, tol=tol, cache_size=cache_size).fit(X, y),
        repeats)
    sv = s.support_
    beta_s = s.dual_coef_[0]
    Ks = _rbf(X[sv], X[sv], g)
    d_ref = 0.5 * beta_s @ Ks @ beta_s + eps * np.abs(beta_s).sum() - y[sv] @ beta_s
    f_ours = _decision(X, X, r.beta, r.b, g)
    agree = np.mean(np.abs(f_ours - s.predict(X)) <= 1e-2 * np.std(y))
    return dict(name=name, n=len(y), ours=to, ref=tr, obj=r.objective, obj_ref=d_ref,
                agree=agree, it=r.n_iter, it_ref=int(np.ravel(s.n_iter_)[0]),
                nsv=int((np.abs(r.beta) > 0).sum()), nsv_ref=len(sv))


def bench_nusvc(name, X, y, nu, repeats, cache_size, tol):
    g = _gamma_scale(X)
    k = RBF(gamma=g)
    n = len(y)
    to, tr, r, s = _interleave(
        lambda: smo_nusvc(X, y, k, nu, tol=tol, cache_size=cache_size),
        lambda: NuSVC(nu=nu, gamma=g, tol=tol, cache_size=cache_size).fit(X, y), repeats)
    sv = s.support_
    beta_s = s.dual_coef_[0]  # = y alpha_libsvm / r ;  alpha_ours = alpha_libsvm / N
    scale = nu / np.abs(beta_s).sum()  # makes 1^T alpha = nu  (r / N)
    beta_o = beta_s * scale
    Ks = _rbf(X[sv], X[sv], g)
    d_ref = 0.5 * beta_o @ Ks @ beta_o
    f_ours = _decision(X, X, r.beta, r.b, g)
    agree = np.mean(np.sign(f_ours) == s.predict(X))
    return dict(name=name, n=n, ours=to, ref=tr, obj=r.objective, obj_ref=d_ref,
                agree=agree, it=r.n_iter, it_ref=int(np.ravel(s.n_iter_)[0]),
                nsv=int((r.alpha > 0).sum()), nsv_ref=len(sv))


def _decision(Xt, X, beta, b, g, chunk=4000):
    nz = np.flatnonzero(beta)
    out = np.empty(len(Xt))
    for s in range(0, len(Xt), chunk):
        out[s:s + chunk] = _rbf(Xt[s:s + chunk], X[nz], g) @ beta[nz] + b
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cache-size", type=float, default=200.0)
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = ap.parse_args(argv)
    rep = 1 if args.quick else args.repeats
    cs, tol = args.cache_size, args.tol

    # warm-up: compile (or load numba's cache) on tiny problems; report the time separately
    t0 = time.perf_counter()
    compile_core()
    Xw, yw = _clf_data(60, seed=1)
    smo_csvc(Xw, yw, RBF(gamma=0.1), 1.0)
    smo_nusvc(Xw, yw, RBF(gamma=0.1), 0.3)
    smo_epsilon_svr(Xw, yw, RBF(gamma=0.1), 1.0, 0.1)
    compile_s = time.perf_counter() - t0

    rows = []
    sizes = [2000] if args.quick else [5000, 20000]
    for n in sizes:
        X, y = _clf_data(n)
        rows.append(bench_csvc("C-SVC make_classification d=20 C=1", X, y, 1.0,
                               1 if n >= 20000 else rep, cs, tol))
    bc = load_breast_cancer()
    Xb = StandardScaler().fit_transform(bc.data)
    yb = 2.0 * bc.target - 1.0
    rows.append(bench_csvc("C-SVC breast_cancer C=1", Xb, yb, 1.0, max(rep, 3), cs, tol))
    n_svr = 2000 if args.quick else 5000
    Xr, yr = make_friedman1(n_svr, 20, noise=1.0, random_state=0)
    Xr = StandardScaler().fit_transform(Xr)
    yr = (yr - yr.mean()) / yr.std()
    rows.append(bench_svr("eps-SVR friedman1 d=20 C=1 eps=0.1", Xr, yr, 1.0, 0.1, rep, cs, tol))
    Xn, yn = _clf_data(n_svr, seed=1)
    rows.append(bench_nusvc("nu-SVC make_classification d=20 nu=0.3", Xn, yn, 0.3, rep, cs, tol))

    hdr = ("| problem | N | ours (s) | LIBSVM (s) | ratio | dual obj ours | dual obj LIBSVM "
           "| rel diff | agree | iter ours/LIBSVM | SV ours/LIBSVM |")
    print(f"numba compile / cache load (excluded): {compile_s:.2f} s; tol={tol}, "
          f"cache_size={cs} MB, shrinking=on, repeats={rep}")
    print(hdr)
    print("|" + "---|" * 11)
    for r in rows:
        rel = abs(r["obj"] - r["obj_ref"]) / max(abs(r["obj_ref"]), 1e-300)
        print(f"| {r['name']} | {r['n']} | {r['ours']:.3f} | {r['ref']:.3f} | "
              f"{r['ours'] / r['ref']:.2f} | {r['obj']:.8g} | {r['obj_ref']:.8g} | {rel:.1e} | "
              f"{100 * r['agree']:.2f}% | {r['it']}/{r['it_ref']} | {r['nsv']}/{r['nsv_ref']} |")


if __name__ == "__main__":
    main()
