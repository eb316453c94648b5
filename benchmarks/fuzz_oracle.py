"""The oracle fuzz (issue 27; docs/reliability.md, "Issue 27").

Seeded cases from :func:`primaldual.testing.oracle_case` (every estimator of the catalogue and
the ball, kernel PCA and kernel PLS; the ``Variant`` shapes of
:mod:`primaldual.fuzz_variants` -- uneven margins, L2 slacks, one-class, SVDD, universum,
RankSVM pairs, epsilon-SVR -- against a CVXPY solve of their primal; LapRLS / LapSVC; the
GP hyper-parameter search; every backend; features, C and gamma scaled by 10^-12 ..
10^12; tol up to 10; sample weights up to 1e12 or class weights; 2 or 3 classes) checked by
:func:`primaldual.testing.assert_honest_fit` with the independent oracle: a fit either raises
one of primaldual's own errors, or is honest -- "optimal" only with an oracle relative gap
<= min(tol, 1e-2), nothing NaN, predictions equal to the certified decision function.

Usage::

    python benchmarks/fuzz_oracle.py --cases 5000 [--start 0] [--minutes 60] [--out FILE.json]

Prints counts by estimator and outcome and every violation (its seed reproduces it:
``oracle_case(seed, extended=True)``); exit code 1 if there was any violation.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
import warnings

from primaldual.testing import assert_honest_fit, oracle_case


def run_case(seed: int) -> tuple[str, str | None]:
    """``(outcome, violation or None)`` of case ``seed``."""
    c = oracle_case(seed, extended=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = assert_honest_fit(c["estimator"], c["X"], c["y"], **c["fit"])
    except AssertionError as exc:
        return "VIOLATION", str(exc)
    if isinstance(r, Exception):
        return type(r).__name__, None
    status = getattr(r, "status_", None)
    if status is None and getattr(r, "converged_", None) is not None:
        status = "converged" if r.converged_ else "not converged"
    if status is None:
        cert = getattr(r, "certificate_", None)
        status = getattr(cert, "status", "fitted")
    return f"fit: {status}", None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--minutes", type=float, default=None, help="stop after this wall time")
    ap.add_argument("--out", default=None, help="write the summary as JSON")
    args = ap.parse_args(argv)
    outcomes: collections.Counter = collections.Counter()
    by_est: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    violations = []
    t0 = time.perf_counter()
    done = 0
    for seed in range(args.start, args.start + args.cases):
        if args.minutes is not None and time.perf_counter() - t0 > 60 * args.minutes:
            break
        case = oracle_case(seed, extended=True)["case"]
        try:
            outcome, bad = run_case(seed)
        except Exception as exc:  # noqa: BLE001 - a crash of the harness is a violation too
            outcome, bad = "VIOLATION", f"harness: {type(exc).__name__}: {exc}"
        outcomes[outcome] += 1
        by_est[case[1]][outcome] += 1
        if bad is not None:
            violations.append({"case": repr(case), "violation": bad})
            print(f"VIOLATION {case}: {bad}", flush=True)
        done += 1
        if done % 250 == 0:
            print(f"{done} cases, {time.perf_counter() - t0:.0f} s, {len(violations)} "
                  "violations", flush=True)
    summary = {"cases": done, "start": args.start,
               "seconds": round(time.perf_counter() - t0, 1),
               "outcomes": dict(outcomes.most_common()),
               "by_estimator": {k: dict(v.most_common()) for k, v in sorted(by_est.items())},
               "violations": violations}
    print(json.dumps({k: v for k, v in summary.items() if k != "violations"}, indent=1))
    print(f"{len(violations)} violations in {done} cases")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(summary, fh, indent=1)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
