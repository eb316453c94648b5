"""Fuzz tests (issue 10): the CLI with random arguments, the model-file loader and the CSV loader
with random bytes. No traceback may escape: only clear one-line errors (``ValueError`` family
from the loaders; exit code 2, or 3 for an infeasible problem, from the CLI).

Bounded in time: few derandomized examples, tiny datasets, no ``bench`` subcommand (it runs
scripts) and no ``derive`` of an existing file (it executes a spec file by design).
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import primaldual as pd
from primaldual.cli import main
from primaldual.datasets import load_csv
from primaldual.persistence import ModelFileError, load, save
from primaldual.testing import FUZZ_BACKENDS, scaled_case

FUZZ = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

NUMBERS = ["1", "0", "-1", "1e6", "1e-6", "nan", "inf", "-inf", "abc", "", "0.5", "2", "1e400",
           "3.5", "scale", "auto"]
OPTIONS = {
    "--C": NUMBERS, "--gamma": NUMBERS, "--nu": NUMBERS, "--epsilon": NUMBERS,
    "--degree": NUMBERS, "--coef0": NUMBERS, "--tol": NUMBERS, "--n": ["5", "0", "-3", "x"],
    "--seed": ["0", "-1", "x"], "--n-samples": ["3", "20", "0", "-5", "x", "1000000"],
    "--kernel": ["rbf", "linear", "poly", "sigmoid", "precomputed", "foo", ""],
    "--backend": ["auto", "cvxpy", "smo", "kkt", "lowrank", "foo"],
    "--form": ["dual", "primal", "foo"],
    "--data": ["ripley", "two_spirals", "sinc", "blobs", "nope", "missing.csv"],
}
FLAGS = ["--latex", "--markdown", "--help", "-h", "--quick"]
METHODS = ["CSVC", "csvc", "NuSVC", "HardMarginSVC", "EpsilonSVR", "NuSVR", "LSSVR", "LSSVC",
           "KernelRidge", "LapRLS", "LapSVC", "KernelLogisticRegression", "ProximalSVC", "L2SVC",
           "foo", ""]
COMMANDS = ["show", "fit", "predict", "check", "derive", "nonsense", "", "--help", "-x"]

token = st.one_of(
    st.sampled_from(METHODS),
    st.sampled_from(FLAGS),
    st.tuples(st.sampled_from(sorted(OPTIONS)), st.data()).map(lambda t: t[0]),
    st.text(max_size=8),
)


@st.composite
def argv(draw):
    cmd = draw(st.sampled_from(COMMANDS))
    args = [cmd] if cmd else []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.integers(0, 3))
        if kind == 0:
            args.append(draw(st.sampled_from(METHODS)))
        elif kind == 1:
            opt = draw(st.sampled_from(sorted(OPTIONS)))
            args += [opt, draw(st.sampled_from(OPTIONS[opt]))]
        elif kind == 2:
            args.append(draw(st.sampled_from(FLAGS)))
        else:
            args.append(draw(st.text(max_size=8).filter(lambda s: "\x00" not in s)))
    if cmd == "fit":
        # bounded time: always a tiny dataset unless the fuzzer chose one
        if "--data" not in args:
            args += ["--data", "ripley"]
        if "--n-samples" not in args:
            args += ["--n-samples", "20"]
    if cmd == "check" and "--n" not in args:
        args += ["--n", "8"]
    return args


def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rc = main(args)
    return rc, out.getvalue(), err.getvalue()


@FUZZ
@given(args=argv())
def test_cli_random_arguments(args):
    if args and args[0] == "derive" and any(os.path.exists(a) for a in args[1:]):
        return  # derive executes an existing spec file by design; never fuzz that
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)  # --save/--plot/--data paths land in a scratch folder
        try:
            rc, _out, err = _run(args)  # an escaping exception fails the test
        finally:
            os.chdir(cwd)
    assert isinstance(rc, int)
    assert "Traceback" not in err
    assert rc in (0, 1, 2, 3), (args, rc, err)
    if rc == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert lines and lines[-1].startswith("primaldual"), err


@pytest.mark.parametrize("args", [
    ["fit", "CSVC", "--C", "-1", "--data", "ripley", "--n-samples", "20"],
    ["fit", "NuSVC", "--nu", "1.5", "--data", "ripley", "--n-samples", "20"],
    ["fit", "EpsilonSVR", "--epsilon", "-1", "--data", "sinc", "--n-samples", "20"],
    ["fit", "CSVC", "--gamma", "-1", "--data", "ripley", "--n-samples", "20"],
    ["fit", "CSVC", "--kernel", "foo", "--data", "ripley", "--n-samples", "20"],
    ["fit", "CSVC", "--data", "nope"],
    ["fit", "foo"],
    ["predict", "missing.npz", "missing.csv"],
])
def test_cli_bad_input_exit_code_2_one_line(args):
    rc, _out, err = _run(args)
    assert rc == 2
    lines = [ln for ln in err.splitlines() if ln.strip() and "Warning" not in ln]
    assert len(lines) == 1 and lines[0].startswith("primaldual"), err


def test_cli_hard_margin_nonseparable_exit_code_3():
    rc, _out, err = _run(["fit", "HardMarginSVC", "--kernel", "linear", "--data", "ripley",
                          "--n-samples", "40", "--backend", "cvxpy"])
    assert rc == 3 and "infeasible" in err and "Traceback" not in err


def _write(path: str, blob: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(blob)


# ----------------------------------------------------------------------------- loaders
@FUZZ
@given(blob=st.binary(max_size=400))
def test_model_loader_random_bytes(blob):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.npz")
        _write(path, blob)
        with pytest.raises(ModelFileError):
            load(path)


@pytest.fixture(scope="module")
def saved_model_bytes():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    m = pd.CSVC(C=1.0, backend="smo").fit(X, y)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.npz")
        save(m, path)
        with open(path, "rb") as fh:
            return fh.read()


@settings(FUZZ, max_examples=30, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_model_loader_mutated_file(saved_model_bytes, data):
    """Truncations and byte flips of a real model file: a clear ModelFileError, or (a flip in
    zip padding that changes nothing) a model identical in behaviour."""
    raw = bytearray(saved_model_bytes)
    how = data.draw(st.sampled_from(["truncate", "flip", "append"]))
    if how == "truncate":
        raw = raw[:data.draw(st.integers(0, len(raw) - 1))]
    elif how == "flip":
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(raw) - 1))
            raw[i] ^= data.draw(st.integers(1, 255))
    else:
        raw += data.draw(st.binary(min_size=1, max_size=64))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.npz")
        _write(path, bytes(raw))
        try:
            m = load(path)
        except ModelFileError:
            return
        Z = np.random.default_rng(1).normal(size=(5, 2))
        assert m.predict(Z).shape == (5,)


@FUZZ
@given(blob=st.one_of(
    st.binary(max_size=300),
    st.lists(st.lists(st.sampled_from(["1", "-2.5", "x", "", "nan", "1e400", "a,b", '"'
                                       ]), min_size=1, max_size=4), max_size=6)
    .map(lambda rows: "\n".join(",".join(r) for r in rows).encode())))
def test_csv_loader_random_bytes(blob):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "d.csv")
        _write(path, blob)
        try:
            X, y = load_csv(path)
        except ValueError as exc:  # UnicodeDecodeError is a ValueError too
            assert str(exc)
            return
        assert X.ndim == 2 and y.shape == (X.shape[0],)
        assert np.all(np.isfinite(X)) and np.all(np.isfinite(y))


@settings(FUZZ, max_examples=25)
@given(blob=st.binary(max_size=200))
def test_cli_fit_and_predict_random_csv(blob):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "d.csv")
        _write(path, blob)
        model = os.path.join(tmp, "m.npz")
        _write(model, blob)
        for args in (["fit", "CSVC", "--data", path, "--backend", "smo"],
                     ["predict", model, path]):
            rc, _out, err = _run(args)
            assert rc in (0, 2, 3) and "Traceback" not in err, (args, err)


# ----------------------------------------------------------------------------- scales (issue 14)
CASES = [(name, backend) for name, bs in FUZZ_BACKENDS.items() for backend in bs]


@st.composite
def scaled_fit(draw):
    """An estimator, a backend, and a small problem with features, C and gamma scaled by
    ``10^k``, ``k`` in ``[-12, 12]``."""
    name, backend = draw(st.sampled_from(CASES))
    sx, sc, sg = (10.0 ** draw(st.integers(-12, 12)) for _ in range(3))
    n = draw(st.integers(8, 12))
    seed = draw(st.integers(0, 2**16))
    kernel = draw(st.sampled_from(["rbf", "linear"]))
    return name, backend, sx, sc, sg, n, seed, kernel


@settings(FUZZ, max_examples=20)
@given(scaled_fit())
def test_fuzz_scales_every_estimator_and_backend(case):
    from primaldual.testing import assert_honest_fit

    name, backend, sx, sc, sg, n, seed, kernel = case
    est, X, y = scaled_case(name, sx, sc, sg, n, seed, kernel)
    assert_honest_fit(est, X, y, backend=backend)


@pytest.mark.parametrize("case", [
    # benchmarks/fuzz_scales.py --seed 7: the kernel block of the certificate and the one of
    # predict rounded k(x, x) differently (0 or 1: ||x||^2 + ||x||^2 - 2 x.x with ||x||^2 ~ 1e12
    # and gamma = 1e5), so a training prediction disagreed with the certified f
    ("ProximalSVC", "cvxpy", 1e6, 0.1, 1e5, 12, 6857, "rbf"),
])
def test_fuzz_scales_found_cases(case):
    from primaldual.testing import assert_honest_fit

    name, backend, sx, sc, sg, n, seed, kernel = case
    est, X, y = scaled_case(name, sx, sc, sg, n, seed, kernel)
    assert_honest_fit(est, X, y, backend=backend)


# ----------------------------------------------------------------------------- oracle (issue 27)
@pytest.mark.parametrize("seed", list(range(0, 5200, 347)))
def test_fuzz_oracle_sample(seed):
    """A small fixed sample of benchmarks/fuzz_oracle.py's cases (every estimator, backend,
    scale, tol, weight): honest by the independent oracle, or one of primaldual's errors."""
    from primaldual.testing import assert_honest_fit, oracle_case

    c = oracle_case(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_honest_fit(c["estimator"], c["X"], c["y"], **c["fit"])
