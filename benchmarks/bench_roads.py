"""Every dual shape on a fast road (issue 28): the specialised routes against plain CVXPY and
the catalogue, side by side in one run.

1. SVOR-EXC (Chu & Keerthi 2005), 3 classes, RBF: its dual written as in the paper (two
   equalities from the thresholds, the ordering multiplier ``mu``) on the route ``choose()``
   picks (``gsmo``), against the same dual in plain CVXPY + Clarabel (dense ``Q``, run in a
   subprocess with a time-out); predictions compared where both finish.
2. nu-SVC and the one-class SVM written as specs (their duals with two and one equality) on the
   multi-equality route, against the catalogue ``NuSVC`` and scikit-learn's ``NuSVC`` /
   ``OneClassSVM``: dual values and predictions.
3. C-SVC and epsilon-SVR written as duals by a user (``specs``) against the catalogue classes.
4. LP-SVR (RBF kernel matrix as data) and the 1-norm SVM through HiGHS (backend ``lp``),
   against the library's CVXPY route and a plain CVXPY + Clarabel model (subprocess, time-out).

    python benchmarks/bench_roads.py [--part svor nusvc specs lp] [--n-svor 1000 5000]
        [--n-nu 20000] [--n-lp 600 1000] [--timeout 120] [--repeat 2]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time

import numpy as np

from primaldual.backends import choose
from primaldual.kernels import make_kernel
from primaldual.model import Data, GramOperator, Problem, Variable, dot, norm1, quad_form, vsum

GAMMA = 0.5


# ------------------------------------------------------------------------------ problems
def svor_data(N, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 4))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=N), [-0.5, 0.5]) + 1
    return X, y


def svor_layout(y, r):
    """Variables of the SVOR-EXC dual: ``alpha^j`` (class j < r, kernel sign -1, threshold j)
    then ``alpha*^j`` (class j > 1, sign +1, threshold j - 1)."""
    idx, sgn, thr = [], [], []
    for j in range(1, r):
        rows = np.flatnonzero(y == j)
        idx.append(rows)
        sgn.append(-np.ones(rows.size))
        thr.append(np.full(rows.size, j - 1))
    for j in range(2, r + 1):
        rows = np.flatnonzero(y == j)
        idx.append(rows)
        sgn.append(np.ones(rows.size))
        thr.append(np.full(rows.size, j - 2))
    return np.concatenate(idx), np.concatenate(sgn), np.concatenate(thr)


def svor_dual(X, y, r, C):
    """SVOR-EXC dual (Chu & Keerthi 2005):
    max 1'a - 1/2 a'Qa  s.t.  sum alpha^j - sum alpha*^{j+1} + mu_{j-1} - mu_j = 0  [-b_j],
    0 <= a <= C, mu >= 0  (Q_st = s_s s_t k(x_s, x_t))."""
    idx, sgn, thr = svor_layout(y, r)
    a, mu = Variable("a", idx.size), Variable("mu", r - 2)
    Q = GramOperator(make_kernel("rbf", gamma=GAMMA), X, sign=sgn, index=idx)
    cons = []
    for j in range(r - 1):
        M = np.zeros(r - 2)
        if j < r - 2:
            M[j] = -1.0
        if j > 0:
            M[j - 1] = 1.0
        cons.append((dot(Data(f"e{j}", np.where(thr == j, -sgn, 0.0)), a)
                     + dot(Data(f"m{j}", M), mu) == 0).named(f"minus_b{j + 1}"))
    cons += [(a >= 0).named("s"), (a <= C).named("xi"), (mu >= 0).named("s_mu")]
    return Problem(vsum(a) - 0.5 * quad_form(a, Q), cons, "max", "SVOR-EXC dual")


def svor_predict(X, Xt, y, r, a, b):
    idx, sgn, _ = svor_layout(y, r)
    beta = np.zeros(X.shape[0])
    np.add.at(beta, idx, sgn * a)
    f = make_kernel("rbf", gamma=GAMMA)(Xt, X) @ beta
    return 1 + np.sum(f[:, None] > np.asarray(b)[None, :], axis=1)


def svor_plain_cvxpy(X, y, r, C, out):
    """The same dual in plain CVXPY + Clarabel (dense Q), in a subprocess."""
    import cvxpy as cp
    from sklearn.metrics.pairwise import rbf_kernel

    t0 = time.perf_counter()
    idx, sgn, thr = svor_layout(y, r)
    Q = rbf_kernel(X[idx], gamma=GAMMA) * np.outer(sgn, sgn)
    a, mu = cp.Variable(idx.size), cp.Variable(r - 2)
    cons = []
    for j in range(r - 1):
        expr = np.where(thr == j, -sgn, 0.0) @ a
        if j < r - 2:
            expr = expr - mu[j]
        if j > 0:
            expr = expr + mu[j - 1]
        cons.append(expr == 0)
    prob = cp.Problem(cp.Maximize(cp.sum(a) - 0.5 * cp.quad_form(a, cp.psd_wrap(Q))),
                      cons + [a >= 0, a <= C, mu >= 0])
    prob.solve(solver="CLARABEL")
    out.put((time.perf_counter() - t0, prob.value, a.value,
             [float(c.dual_value) for c in cons]))   # CVXPY: -(our multiplier) = b_j


def _timed_subprocess(target, args, timeout):
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=target, args=(*args, q))
    t0 = time.perf_counter()
    p.start()
    p.join(timeout)
    if p.is_alive():
        p.kill()
        p.join()
        return None, time.perf_counter() - t0
    return (q.get() if not q.empty() else None), time.perf_counter() - t0


# ------------------------------------------------------------------------------ part 1
def part_svor(sizes, timeout, repeat):
    print("## SVOR-EXC, 3 classes, RBF (gamma 0.5), C = 1, 4 features")
    print("| N | variables | route | ours (s) | rel. gap | plain CVXPY+Clarabel (s) | "
          "ratio | dual value diff | same predictions |")
    print("|---|---|---|---|---|---|---|---|---|")
    for N in sizes:
        X, y = svor_data(N)
        best, sol = np.inf, None
        for _ in range(repeat):
            t0 = time.perf_counter()
            P = svor_dual(X, y, 3, 1.0)
            route = choose(P)[0]
            s = P.solve(backend="auto", tol=1e-6)
            best = min(best, time.perf_counter() - t0)
            sol = s
        cert = sol.certificate()
        b = [-sol.multipliers["minus_b1"][0], -sol.multipliers["minus_b2"][0]]
        res, tc = _timed_subprocess(svor_plain_cvxpy, (X, y, 3, 1.0), timeout)
        Xt = svor_data(2000, seed=1)[0]
        ours = svor_predict(X, Xt, y, 3, sol.values["a"], b)
        if res is None:
            ref = f"> {timeout:.0f} (time-out)"
            ratio = f"> {timeout / best:.0f}x"
            dv = same = "-"
        else:
            t_ref, val, a_ref, b_ref = res
            ref, ratio = f"{t_ref:.2f}", f"{t_ref / best:.1f}x"
            dv = f"{abs(val - sol.objective_value) / abs(val):.1e}"
            same = f"{np.mean(svor_predict(X, Xt, y, 3, a_ref, b_ref) == ours):.4f}"
        print(f"| {N} | {sol.values['a'].size} + 1 | {route} | {best:.2f} | "
              f"{cert.relative_gap:.1e} | {ref} | {ratio} | {dv} | {same} |", flush=True)


# ------------------------------------------------------------------------------ part 2
def nusvc_dual(X, y, nu):
    N = X.shape[0]
    a = Variable("alpha", N)
    Q = GramOperator(make_kernel("rbf", gamma=GAMMA), X, sign=y.astype(float))
    return Problem(-0.5 * quad_form(a, Q),
                   [(dot(Data("y", y.astype(float)), a) == 0).named("minus_b"),
                    (vsum(a) == nu).named("rho"), (a >= 0).named("s"),
                    (a <= 1.0 / N).named("xi")], "max", "nu-SVC dual")


def oneclass_dual(X, nu):
    N = X.shape[0]
    a = Variable("alpha", N)
    return Problem(-0.5 * quad_form(a, GramOperator(make_kernel("rbf", gamma=GAMMA), X)),
                   [(vsum(a) == 1).named("rho"), (a >= 0).named("s"),
                    (a <= 1.0 / (nu * N)).named("xi")], "max", "one-class dual")


def part_nusvc(N, repeat):
    from sklearn import svm

    import primaldual as pd

    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, 4))
    y = np.where(X[:, 0] + X[:, 1] ** 2 - 1 + 0.5 * rng.normal(size=N) > 0, 1, -1)
    Xt = rng.normal(size=(5000, 4))
    nu, tol = 0.3, 1e-3
    print(f"## nu-SVC and one-class SVM written as specs, N = {N}, RBF (gamma 0.5), nu = 0.3, "
          "tol 1e-3")
    print("| problem | spec route | spec (s) | catalogue / sklearn (s) | ratio | "
          "dual value rel. diff | same predictions |")
    print("|---|---|---|---|---|---|---|")
    t_spec, t_cat, t_sk = [], [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        P = nusvc_dual(X, y, nu)
        s = P.solve(backend="auto", tol=tol)
        t_spec.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        cat = pd.NuSVC(nu=nu, kernel="rbf", gamma=GAMMA, tol=tol).fit(X, y)
        t_cat.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        sk = svm.NuSVC(nu=nu, kernel="rbf", gamma=GAMMA, tol=tol).fit(X, y)
        t_sk.append(time.perf_counter() - t0)
    a = s.values["alpha"]
    beta = a * y
    b = -s.multipliers["minus_b"][0]
    f = make_kernel("rbf", gamma=GAMMA)(Xt, X) @ beta + b
    pred = np.where(f > 0, 1, -1)
    d_cat = cat.certificate_.dual_objective
    rel = abs(s.objective_value - d_cat) / abs(d_cat)
    route = f"{choose(P)[0]} ({s.info['route']})"
    print(f"| nu-SVC vs catalogue NuSVC | {route} | {min(t_spec):.2f} | {min(t_cat):.2f} | "
          f"{min(t_spec) / min(t_cat):.2f}x | {rel:.1e} | "
          f"{np.mean(pred == cat.predict(Xt)):.4f} |")
    print(f"| nu-SVC vs sklearn NuSVC | {route} | {min(t_spec):.2f} | {min(t_sk):.2f} | "
          f"{min(t_spec) / min(t_sk):.2f}x | - | {np.mean(pred == sk.predict(Xt)):.4f} |",
          flush=True)
    t_spec, t_sk = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        P = oneclass_dual(X, nu)
        s = P.solve(backend="gsmo", tol=tol)
        t_spec.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        sk = svm.OneClassSVM(nu=nu, kernel="rbf", gamma=GAMMA, tol=tol).fit(X)
        t_sk.append(time.perf_counter() - t0)
    rho = s.multipliers["rho"][0]
    f = make_kernel("rbf", gamma=GAMMA)(Xt, X) @ s.values["alpha"] - rho
    # LIBSVM's one-class alpha is ours times nu N: its dual value is (nu N)^2 times ours
    d_sk = -0.5 * float(sk.dual_coef_[0] @ make_kernel("rbf", gamma=GAMMA)(
        sk.support_vectors_, sk.support_vectors_) @ sk.dual_coef_[0]) / (nu * N) ** 2
    rel = abs(s.objective_value - d_sk) / abs(d_sk)
    print(f"| one-class vs sklearn OneClassSVM | gsmo ({s.info['route']}) | {min(t_spec):.2f} | "
          f"{min(t_sk):.2f} | {min(t_spec) / min(t_sk):.2f}x | {rel:.1e} | "
          f"{np.mean(np.sign(f) == np.sign(sk.decision_function(Xt))):.4f} |", flush=True)


def csvc_dual(X, y, C):
    N = X.shape[0]
    a = Variable("alpha", N)
    Q = GramOperator(make_kernel("rbf", gamma=GAMMA), X, sign=y.astype(float))
    return Problem(vsum(a) - 0.5 * quad_form(a, Q),
                   [(dot(Data("y", y.astype(float)), a) == 0).named("minus_b"),
                    (a >= 0).named("s"), (a <= C).named("xi")], "max", "C-SVC dual")


def svr_dual(X, y, C, eps):
    """epsilon-SVR dual with beta = alpha - alpha* (Smola & Schoelkopf 2004)."""
    N = X.shape[0]
    a, a_s, beta = Variable("alpha", N), Variable("alpha_star", N), Variable("beta", N)
    Y, one = Data("y", y), Data("1", np.ones(N))
    obj = (dot(Y, a) - dot(Y, a_s) - eps * vsum(a) - eps * vsum(a_s)
           - 0.5 * quad_form(beta, GramOperator(make_kernel("rbf", gamma=GAMMA), X)))
    return Problem(obj, [(beta == a - a_s).named("lambda"),
                         (dot(one, a) - dot(one, a_s) == 0).named("minus_b"),
                         (a >= 0).named("s"), (a_s >= 0).named("s_star"),
                         (a <= C).named("xi"), (a_s <= C).named("xi_star")], "max", "SVR dual")


def part_specs(N, repeat):
    """C-SVC and epsilon-SVR written as duals by a user against the catalogue classes."""
    import primaldual as pd

    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, 4))
    y = np.where(X[:, 0] + X[:, 1] ** 2 - 1 + 0.5 * rng.normal(size=N) > 0, 1, -1)
    yr = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=N)
    Xt = rng.normal(size=(5000, 4))
    K = make_kernel("rbf", gamma=GAMMA)
    print(f"## C-SVC and epsilon-SVR written as duals, N = {N}, RBF (gamma 0.5), C = 1, "
          "eps = 0.1, tol 1e-3")
    print("| problem | route | spec (s) | catalogue (s) | ratio | dual value rel. diff | "
          "same predictions |")
    print("|---|---|---|---|---|---|---|")
    cases = (("C-SVC", lambda: csvc_dual(X, y, 1.0), lambda: pd.CSVC(C=1.0, kernel="rbf",
              gamma=GAMMA), y),
             ("epsilon-SVR", lambda: svr_dual(X, yr, 1.0, 0.1),
              lambda: pd.EpsilonSVR(C=1.0, epsilon=0.1, kernel="rbf", gamma=GAMMA), yr))
    for name, spec, cat, target in cases:
        t_s, t_c = [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            P = spec()
            s = P.solve(backend="auto", tol=1e-3)
            t_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            m = cat().fit(X, target)
            t_c.append(time.perf_counter() - t0)
        if name == "C-SVC":
            beta = s.values["alpha"] * y
        else:
            beta = s.values["alpha"] - s.values["alpha_star"]
        f = K(Xt, X) @ beta - s.multipliers["minus_b"][0]
        if name == "C-SVC":
            same = np.mean(np.where(f > 0, 1, -1) == m.predict(Xt))
        else:
            same = np.mean(np.abs(f - m.predict(Xt)) <= 1e-3 * np.max(np.abs(f)))
        d_cat = m.certificate_.dual_objective
        print(f"| {name} | {s.backend} | {min(t_s):.2f} | {min(t_c):.2f} | "
              f"{min(t_s) / min(t_c):.2f}x | {abs(s.objective_value - d_cat) / abs(d_cat):.1e} | "
              f"{same:.4f} |", flush=True)


# ------------------------------------------------------------------------------ part 3
def lpsvr(X, y, C, eps):
    N = X.shape[0]
    K = Data("K", np.asarray(make_kernel("rbf", gamma=GAMMA)(X, X)))
    beta, b = Variable("beta", N), Variable("b")
    xi, xs = Variable("xi", N), Variable("xi_star", N)
    f = K @ beta + b
    Y = Data("y", y)
    return Problem(norm1(beta) + C * vsum(xi) + C * vsum(xs),
                   [(Y - f <= eps + xi).named("alpha"), (f - Y <= eps + xs).named("alpha_star"),
                    (xi >= 0).named("mu"), (xs >= 0).named("mu_star")], "min", "LP-SVR")


def l1svm(X, y, C):
    N, d = X.shape
    w, b, xi = Variable("w", d, index="d"), Variable("b"), Variable("xi", N)
    return Problem(norm1(w) + C * vsum(xi),
                   [(Data("y", y) * (Data("X", X) @ w + b) >= 1 - xi).named("alpha"),
                    (xi >= 0).named("mu")], "min", "1-norm SVM")


def lpsvr_plain(X, y, C, eps, out):
    import cvxpy as cp
    from sklearn.metrics.pairwise import rbf_kernel

    t0 = time.perf_counter()
    N = X.shape[0]
    K = rbf_kernel(X, gamma=GAMMA)
    beta, b, xi, xs = cp.Variable(N), cp.Variable(), cp.Variable(N), cp.Variable(N)
    f = K @ beta + b
    prob = cp.Problem(cp.Minimize(cp.norm1(beta) + C * cp.sum(xi) + C * cp.sum(xs)),
                      [y - f <= eps + xi, f - y <= eps + xs, xi >= 0, xs >= 0])
    prob.solve(solver="CLARABEL")
    out.put((time.perf_counter() - t0, prob.value))


def _library_cvxpy(P_builder, args, out):
    t0 = time.perf_counter()
    s = P_builder(*args).solve(backend="cvxpy")
    out.put((time.perf_counter() - t0, s.objective_value))


def part_lp(sizes, timeout, repeat):
    print("## LP-SVR (RBF kernel matrix as data, C = 1, eps = 0.05) and the 1-norm SVM")
    print("| problem | N | HiGHS route (s) | rel. gap | library CVXPY route (s) | ratio | "
          "plain CVXPY+Clarabel (s) | ratio | value rel. diff |")
    print("|---|---|---|---|---|---|---|---|---|")
    for N in sizes:
        rng = np.random.default_rng(N)
        X = rng.uniform(-3, 3, size=(N, 1))
        y = np.sinc(X[:, 0]) + 0.1 * rng.normal(size=N)
        best, s = np.inf, None
        for _ in range(repeat):
            t0 = time.perf_counter()
            P = lpsvr(X, y, 1.0, 0.05)
            s = P.solve(backend="auto")
            best = min(best, time.perf_counter() - t0)
        assert s.backend == "lp"
        cert = s.certificate()
        lib, _ = _timed_subprocess(_library_cvxpy, (lpsvr, (X, y, 1.0, 0.05)), timeout)
        plain, _ = _timed_subprocess(lpsvr_plain, (X, y, 1.0, 0.05), timeout)
        cells, diffs = [], []
        for res in (lib, plain):
            if res is None:
                cells += [f"> {timeout:.0f} (time-out)", f"> {timeout / best:.0f}x"]
            else:
                cells += [f"{res[0]:.2f}", f"{res[0] / best:.1f}x"]
                diffs.append(abs(res[1] - s.objective_value) / abs(res[1]))
        dv = f"{max(diffs):.1e}" if diffs else "-"
        print(f"| LP-SVR | {N} | {best:.2f} | {cert.relative_gap:.1e} | {cells[0]} | {cells[1]} | "
              f"{cells[2]} | {cells[3]} | {dv} |", flush=True)
    for N, d in ((2000, 20), (5000, 50)):
        rng = np.random.default_rng(7)
        X = rng.normal(size=(N, d))
        y = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=N) > 0, 1.0, -1.0)
        t_lp, t_cv = [], []
        for _ in range(max(3, repeat)):     # alternated, best of at least 3
            t0 = time.perf_counter()
            s = l1svm(X, y, 0.5).solve(backend="lp")
            t_lp.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            sc = l1svm(X, y, 0.5).solve(backend="cvxpy")
            t_cv.append(time.perf_counter() - t0)
        rel = abs(s.objective_value - sc.objective_value) / abs(sc.objective_value)
        print(f"| 1-norm SVM (d = {d}) | {N} | {min(t_lp):.2f} | "
              f"{s.certificate().relative_gap:.1e} | {min(t_cv):.2f} | "
              f"{min(t_cv) / min(t_lp):.1f}x | - | - | {rel:.1e} |", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", nargs="+", default=["svor", "nusvc", "lp"])
    ap.add_argument("--n-svor", nargs="+", type=int, default=[1000, 5000])
    ap.add_argument("--n-nu", type=int, default=20000)
    ap.add_argument("--n-lp", nargs="*", type=int, default=[600, 1000])
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    print(f"load average {os.getloadavg()}, {os.cpu_count()} cores")
    # warm the compiled loops once (numba cache), outside the timings
    Xw, yw = svor_data(60)
    svor_dual(Xw, yw, 3, 1.0).solve(backend="auto")
    nusvc_dual(Xw, np.where(yw > 1, 1, -1), 0.3).solve(backend="auto")
    if "svor" in args.part:
        part_svor(args.n_svor, args.timeout, args.repeat)
    if "nusvc" in args.part:
        part_nusvc(args.n_nu, args.repeat)
    if "specs" in args.part:
        part_specs(args.n_nu, args.repeat)
    if "lp" in args.part:
        part_lp(args.n_lp, args.timeout, args.repeat)


if __name__ == "__main__":
    main()
