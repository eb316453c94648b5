"""Benchmark: relevance vector regression, ``pd.RVR`` vs ``fastrvm.RVR`` (a C++ port of
Tipping's SparseBayes, PyPI ``fastrvm``), on Tipping's sinc protocol.

``--protocol uniform`` (the default), per seed: ``N = 100`` points ``x ~ U[-10, 10]``,
``t = sin(x)/x + U[-0.2, 0.2]`` noise, the Gaussian kernel of ``examples/rvm_sinc.py``
(``gamma = 1/9``), bias on for both.  Columns:

- ``L ours`` / ``L fastrvm``: the evidence of each relevance set under *our* function
  :func:`primaldual.rvm.rvr_log_evidence`, maximised over the precisions of that set and the
  noise (L-BFGS-B in ``(log alpha, log beta)`` started at each fit's own ``alpha``, ``beta``;
  fastrvm does not report the bias precision, its start is ``1 / intercept^2``).  For ours
  this equals the fit's ``log_marginal_likelihood_value_`` (the fit is stationary);
- ``RMSE``: against the noiseless sinc on 1000 grid points;
- ``t``: best wall-clock time of ``--repeats`` fits (both interleaved, after one warm-up fit
  each); ``ratio`` ours / fastrvm of those, ``CPU ratio`` of the best CPU times
  (``time.process_time``, immune to the process being descheduled on a loaded machine).

``--protocol gauss``: Tipping's (2001) first sinc, ``t = sin(x)/x + N(0, 0.1^2)`` noise, same
``x``, kernel and grid; RMSE to the noiseless sinc, number of relevance vectors and best fit
time for our RVR with its two intercept priors (``bias_prior="ard"``, the default, and
``"flat"``, the unregularised intercept that fastrvm's ``fit_intercept=True`` also uses) and
fastrvm.

    PYTHONPATH=. python benchmarks/bench_rvm.py               # 10 seeds, best of 20
    PYTHONPATH=. python benchmarks/bench_rvm.py --repeats 1   # quick
    PYTHONPATH=. python benchmarks/bench_rvm.py --protocol gauss
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import scipy.optimize

from primaldual.rvm import RVR, rvr_log_evidence

GAMMA = 1.0 / 9.0
XT = np.linspace(-10, 10, 1000).reshape(-1, 1)
FT = np.sinc(XT[:, 0] / np.pi)


def sinc_data(seed: int, n: int = 100, noise: str = "uniform") -> tuple[np.ndarray, np.ndarray]:
    """Tipping's sinc: ``x ~ U[-10, 10]``, ``t = sin(x)/x + U[-0.2, 0.2]`` (``noise="uniform"``)
    or ``+ N(0, 0.1^2)`` (``"gauss"``)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-10, 10, (n, 1))
    e = rng.uniform(-0.2, 0.2, n) if noise == "uniform" else 0.1 * rng.standard_normal(n)
    return X, np.sinc(X[:, 0] / np.pi) + e


def set_evidence(P: np.ndarray, t: np.ndarray, cols: np.ndarray, alpha0: np.ndarray,
                 beta0: float) -> float:
    """``max over alpha_S, beta`` of our evidence with the columns ``cols`` only."""
    Pa = P[:, cols]

    def obj(z):
        v, g = rvr_log_evidence(Pa, t, np.exp(z[:-1]), np.exp(z[-1]), eval_gradient=True)
        return -v, -g

    z0 = np.append(np.log(alpha0), np.log(beta0))
    res = scipy.optimize.minimize(obj, z0, jac=True, method="L-BFGS-B",
                                  bounds=[(-20, 30)] * len(cols) + [(-20, 20)],
                                  options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10})
    return float(-res.fun)


def _time(fn) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one call."""
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def _rmse(model) -> float:
    return float(np.sqrt(np.mean((model.predict(XT) - FT) ** 2)))


def gauss_table(FastRVR, seeds: int, repeats: int) -> None:
    """The ``--protocol gauss`` table: our two intercept priors and fastrvm side by side."""
    fits = {"ard": lambda X, t: RVR(gamma=GAMMA).fit(X, t),
            "flat": lambda X, t: RVR(gamma=GAMMA, bias_prior="flat").fit(X, t),
            "fastrvm": lambda X, t: FastRVR(kernel="rbf", gamma=GAMMA,
                                            fit_intercept=True).fit(X, t)}
    print(f"load average {os.getloadavg()[0]:.1f}, best of {repeats}")
    print("| seed | RVs ard | RVs flat | RVs fastrvm | RMSE ard | RMSE flat | RMSE fastrvm "
          "| t ard (ms) | t flat (ms) | t fastrvm (ms) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    X, t = sinc_data(0, noise="gauss")
    for fit in fits.values():                        # warm-up (compiled core from cache)
        fit(X, t)
    rows = []
    for seed in range(seeds):
        X, t = sinc_data(seed, noise="gauss")
        best = dict.fromkeys(fits, np.inf)
        for _ in range(repeats):                     # interleaved
            for k, fit in fits.items():
                best[k] = min(best[k], _time(lambda fit=fit, X=X, t=t: fit(X, t))[0])
        m = {k: fit(X, t) for k, fit in fits.items()}
        nv = [m["ard"].n_relevance_vectors_, m["flat"].n_relevance_vectors_,
              m["fastrvm"].n_relevance_]
        rm = [_rmse(m[k]) for k in fits]
        tm = [1e3 * best[k] for k in fits]
        rows.append(nv + rm + tm)
        print(f"| {seed} | " + " | ".join(str(v) for v in nv) + " | "
              + " | ".join(f"{v:.4f}" for v in rm) + " | "
              + " | ".join(f"{v:.2f}" for v in tm) + " |")
    mean = np.mean(rows, axis=0)
    print("| mean | " + " | ".join(f"{v:.1f}" for v in mean[:3]) + " | "
          + " | ".join(f"{v:.4f}" for v in mean[3:6]) + " | "
          + " | ".join(f"{v:.2f}" for v in mean[6:]) + " |")
    print(f"load average {os.getloadavg()[0]:.1f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--protocol", choices=["uniform", "gauss"], default="uniform")
    a = ap.parse_args()
    try:
        from fastrvm import RVR as FastRVR
    except ImportError:
        print("fastrvm is not installed (pip install fastrvm)")
        return 1
    warnings.simplefilter("ignore")
    if a.protocol == "gauss":
        gauss_table(FastRVR, a.seeds, a.repeats)
        return 0
    print(f"load average {os.getloadavg()[0]:.1f}, best of {a.repeats}")
    print("| seed | RVs ours | RVs fastrvm | L ours | L fastrvm | RMSE ours | RMSE fastrvm "
          "| t ours (ms) | t fastrvm (ms) | ratio | CPU ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    X, t = sinc_data(0)
    RVR(gamma=GAMMA).fit(X, t)                       # warm-up (compiled core from cache)
    FastRVR(kernel="rbf", gamma=GAMMA, fit_intercept=True).fit(X, t)
    for seed in range(a.seeds):
        X, t = sinc_data(seed)
        t_o = t_f = c_o = c_f = np.inf
        for _ in range(a.repeats):                   # interleaved
            w, c = _time(lambda X=X, t=t: RVR(gamma=GAMMA).fit(X, t))
            t_o, c_o = min(t_o, w), min(c_o, c)
            w, c = _time(lambda X=X, t=t: FastRVR(kernel="rbf", gamma=GAMMA,
                                                  fit_intercept=True).fit(X, t))
            t_f, c_f = min(t_f, w), min(c_f, c)
        ours = RVR(gamma=GAMMA).fit(X, t)
        ref = FastRVR(kernel="rbf", gamma=GAMMA, fit_intercept=True).fit(X, t)
        P = ours._design(X)
        L_o = set_evidence(P, t, ours.active_, ours.alpha_, ours.beta_)
        assert abs(L_o - ours.log_marginal_likelihood_value_) < 1e-4   # stationary fit
        cols = np.append(ref.relevance_, len(X))
        a0 = np.append(ref.alpha_.ravel(), 1.0 / max(ref.intercept_**2, 1e-12))
        L_f = set_evidence(P, t, cols, a0, float(ref.beta_))
        r_o, r_f = _rmse(ours), _rmse(ref)
        rows.append((L_o, L_f, r_o, r_f, t_o, t_f, c_o, c_f))
        print(f"| {seed} | {ours.n_relevance_vectors_} | {ref.n_relevance_} | {L_o:.3f} | "
              f"{L_f:.3f} | {r_o:.4f} | {r_f:.4f} | {1e3 * t_o:.2f} | {1e3 * t_f:.2f} | "
              f"{t_o / t_f:.1f} | {c_o / c_f:.1f} |")
    m = np.mean(rows, axis=0)
    print(f"| mean | | | {m[0]:.3f} | {m[1]:.3f} | {m[2]:.4f} | {m[3]:.4f} | "
          f"{1e3 * m[4]:.2f} | {1e3 * m[5]:.2f} | {m[4] / m[5]:.1f} | {m[6] / m[7]:.1f} |")
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
