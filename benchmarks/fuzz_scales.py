"""Long scale-fuzzing run (issue 14; docs/reliability.md, "Fuzzing across scales").

Draws seeded random cases from the same space as ``tests/integration/test_fuzz.py::
test_fuzz_scales_every_estimator_and_backend`` (every estimator x every backend that accepts
it, features, C and gamma each scaled by ``10^k`` with ``k`` uniform in ``[-12, 12]``, RBF or
linear kernel, N = 8..12) and checks each fit with :func:`primaldual.testing.assert_honest_fit`:
either one of primaldual's own errors, or a fit whose status is optimal only with a finite
relative gap <= 1e-2, no non-finite certificate field, and training predictions equal to the
sign of the certified decision function.

Usage::

    python benchmarks/fuzz_scales.py --cases 5000 [--seed 0] [--minutes 60] [--out FILE.json]

Prints the counts by outcome (status or error class) and every violation (a reproducible case
tuple); exit code 1 if there was any violation.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
import warnings

import numpy as np

from primaldual.testing import FUZZ_BACKENDS, assert_honest_fit, scaled_case


def draw_case(rng: np.random.Generator) -> tuple:
    cases = [(n, b) for n, bs in FUZZ_BACKENDS.items() for b in bs]
    name, backend = cases[rng.integers(len(cases))]
    sx, sc, sg = (10.0 ** int(rng.integers(-12, 13)) for _ in range(3))
    return (name, backend, sx, sc, sg, int(rng.integers(8, 13)), int(rng.integers(2**16)),
            ["rbf", "linear"][int(rng.integers(2))])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--minutes", type=float, default=None, help="stop after this wall time")
    ap.add_argument("--out", default=None, help="write the summary as JSON")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    outcomes: collections.Counter = collections.Counter()
    per_backend: collections.Counter = collections.Counter()
    violations = []
    t0 = time.perf_counter()
    done = 0
    for _ in range(args.cases):
        if args.minutes is not None and time.perf_counter() - t0 > 60 * args.minutes:
            break
        case = draw_case(rng)
        name, backend, sx, sc, sg, n, seed, kernel = case
        est, X, y = scaled_case(name, sx, sc, sg, n, seed, kernel)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = assert_honest_fit(est, X, y, backend=backend)
            outcomes[type(r).__name__ if isinstance(r, Exception)
                     else f"fit: {getattr(r, 'status_', '?')}"] += 1
        except AssertionError as exc:
            violations.append({"case": case, "violation": str(exc)})
            outcomes["VIOLATION"] += 1
            print(f"VIOLATION {case}: {exc}", flush=True)
        per_backend[backend] += 1
        done += 1
        if done % 250 == 0:
            print(f"{done} cases, {time.perf_counter() - t0:.0f} s, {len(violations)} "
                  "violations", flush=True)
    summary = {"cases": done, "seed": args.seed, "seconds": round(time.perf_counter() - t0, 1),
               "outcomes": dict(outcomes.most_common()), "backends": dict(per_backend),
               "violations": violations}
    print(json.dumps({k: v for k, v in summary.items() if k != "violations"}, indent=1))
    print(f"{len(violations)} violations in {done} cases")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(summary, fh, indent=1)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
