"""The ``primaldual`` command line (also ``python -m primaldual``).

Subcommands::

    primaldual show METHOD [--latex | --markdown]      primal, Lagrangian, KKT conditions, dual
    primaldual fit [METHOD] [--data NAME|PATH.csv] [--kernel K] [--C C] [--gamma G]
                   [--backend B] [--form F] [--save model.npz] [--plot out.png]
    primaldual predict MODEL.npz PATH.csv              one prediction per line
    primaldual check METHOD                            dual vs primal (and vs mechanical dual)
    primaldual bench [--quick] [--dir DIR [NAME ...]]   timings vs scikit-learn / run scripts
    primaldual derive SPEC.py                          mechanical dual of a user's primal spec
    primaldual check-derivation FILE.py                a hand derivation vs the mechanical one
    primaldual exercise [--list | NAME [--answer FILE.py | --solution]]
                                                       graded derivation exercises

``primaldual fit`` without arguments fits a C-SVC (RBF kernel) on the standardised
breast-cancer data and prints its certificate.

Exit codes: 0 success, 1 ``check``, ``check-derivation`` or ``exercise --answer`` found a
difference, 2 bad argument or a fitting error (one line naming the argument and the allowed
values, no traceback), 3 the problem is infeasible (e.g. hard margin on non-separable data).
"""

from __future__ import annotations

import argparse
import os
import runpy
import subprocess
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import catalogue
from .exceptions import IgnoredParameterWarning

__all__ = ["METHOD_ALIASES", "main", "resolve_method", "build_parser"]

#: Accepted short names -> class name, and the class names in catalogue order: both are
#: :mod:`primaldual.catalogue`'s lists.
METHOD_ALIASES: dict[str, str] = catalogue.ALIASES
METHOD_CLASSES: tuple[str, ...] = catalogue.NAMES

#: Hyper-parameters the ``fit`` subcommand may pass on (only those the class accepts).
_HYPER = ("kernel", "C", "gamma", "degree", "coef0", "nu", "epsilon")


class CLIError(Exception):
    """A user error: printed as one line, exit code ``code``."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


# ----------------------------------------------------------------------------- names
def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def method_names() -> list[str]:
    """Allowed method names: class names and aliases."""
    return list(METHOD_CLASSES) + sorted(METHOD_ALIASES)


def resolve_method(name: str) -> type:
    """The method class for a class name or alias (``CLIError`` naming the allowed values)."""
    try:
        return catalogue.method_class(catalogue.resolve(name))
    except ValueError as exc:
        raise CLIError(f"argument METHOD: {exc}") from None


def _task(cls: Any) -> str:
    return cls._task


# ----------------------------------------------------------------------------- data
#: generated 2-D/1-D sets whose geometry is the point: the CLI never standardises them
_GEOMETRIC = ("two_spirals", "ripley", "sinc", "blobs", "moons", "circles", "amini")


def _show_data(task: str, name: str | None) -> tuple[np.ndarray, np.ndarray, str]:
    """The data ``show`` builds the problems on: ``--data`` if given, else the six points of
    Amini's lecture (classification) or eight points of ``sinc`` (regression); named in the
    output."""
    if name is not None:
        X, y = _load_data(name)
        return X, y, name
    if task == "regression":
        X, y = _load_data("sinc", 8)
        return X, y, "sinc"
    X, y = _load_data("amini")
    return X, y, "amini"


def _random_data(task: str, n: int = 24, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    if task == "regression":
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.standard_normal(n)
    else:
        y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
        y[0], y[1] = 1.0, -1.0
    return X, y


def _load_data(name: str, n_samples: int | None = None, standardize: bool | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """Load ``--data``; ``standardize=None`` scales the features of bundled and CSV data to
    zero mean and unit variance and leaves the generated geometric sets (two_spirals, ripley,
    sinc, blobs, moons, circles, amini) as generated, as the examples use them."""
    from .datasets import DATASETS, load_dataset

    if not str(name).lower().endswith(".csv") and name not in DATASETS:
        raise CLIError(f"argument --data: unknown dataset {name!r}; allowed: "
                       f"{', '.join(DATASETS)} or a PATH.csv")
    if str(name).lower().endswith(".csv") and not os.path.exists(name):
        raise CLIError(f"argument --data: file not found: {name}")
    if str(name).lower().endswith(".csv"):
        _check_regular_file(name, "--data")
    else:
        _check_generated_size(name, n_samples)
    if standardize is None:
        standardize = name not in _GEOMETRIC
    return load_dataset(name, n_samples=n_samples, standardize=standardize)


# ----------------------------------------------------------------------------- issue 27
def _check_regular_file(path: str, arg: str) -> None:
    """A path the CLI reads must be a regular file: a named pipe, a device or a directory
    is refused (reading one would block or never end)."""
    import stat

    try:
        mode = os.stat(path).st_mode  # stat never blocks, even on a named pipe
    except OSError as exc:
        raise CLIError(f"argument {arg}: cannot read {path}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        kind = ("a directory" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special")
        raise CLIError(f"argument {arg}: {path} is {kind}, not a regular file")


def _check_generated_size(name: str, n_samples: int | None) -> None:
    """A generated dataset of ``n_samples`` rows (up to 20 features, as float64, plus the
    generator's working copies: 3 x (n, 21)) must fit in memory (system, process and cgroup
    limits): refused with the sizes instead of being killed by the OOM killer."""
    if n_samples is None or n_samples < 1:
        return
    from .exceptions import InsufficientMemoryError
    from .validation import block_bytes, check_memory

    try:
        check_memory(block_bytes([(n_samples, 21)] * 3), f"generating {n_samples} rows of "
                     f"{name!r}", hint="use a smaller --n-samples")
    except InsufficientMemoryError as exc:
        raise CLIError(f"argument --n-samples: {exc}") from None


def _standardized(X: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``(X - mean) / scale`` per column (a constant column only centred, as
    :func:`primaldual.datasets.load_dataset`'s ``standardize``) and the scaler record the
    model file keeps, so that ``predict`` on raw rows sees what ``fit`` saw."""
    with np.errstate(over="ignore", invalid="ignore"):
        mean = X.mean(axis=0)
        scale = X.std(axis=0)
        Xs = (X - mean) / np.where(scale == 0, 1.0, scale)
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(scale)) and np.all(np.isfinite(Xs))):
        # finite values near 1e308 overflow the plain sums: the statistics of the columns
        # divided by their largest magnitude, scaled back (the same numbers where both exist)
        top = np.max(np.abs(X), axis=0)
        top[~(top > 0)] = 1.0
        Z = X / top
        mz, sz = Z.mean(axis=0), Z.std(axis=0)
        mean, scale = mz * top, sz * top
        if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(scale))):
            raise CLIError("argument --data: a column's mean or spread is not representable "
                           "in float64; rescale the data")
        Xs = (Z - mz) / np.where(sz == 0, 1.0, sz)
    scale[scale == 0] = 1.0
    return Xs, {"mean": mean, "scale": scale}


def _load_fit_data(name: str, n_samples: int | None, standardize: bool | None
                   ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray] | None]:
    """:func:`_load_data` for ``fit``: the raw rows standardised here, returning the scaler
    record (``None`` when the data are not standardised)."""
    if standardize is None:
        standardize = name not in _GEOMETRIC
    X, y = _load_data(name, n_samples, standardize=False)
    if not standardize or name == "amini":
        return X, y, None
    X, scaler = _standardized(np.asarray(X, dtype=np.float64))
    return X, y, scaler


def _read_features(path: str, n_features: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Read a numeric CSV for ``predict``: ``n_features`` columns, or one more (the target)."""
    if not os.path.exists(path):
        raise CLIError(f"argument CSV: file not found: {path}")
    _check_regular_file(path, "CSV")
    try:
        data = np.genfromtxt(path, delimiter=",", dtype=float)
    except ValueError as exc:
        raise CLIError(f"argument CSV: cannot parse {path}: {exc}") from None
    data = np.atleast_2d(data)
    if data.shape[1] == 1 and n_features != 1:
        data = data.T
    if np.all(np.isnan(data[0])):  # header row
        data = data[1:]
    if data.size == 0 or np.any(np.isnan(data)):
        raise CLIError(f"argument CSV: {path} must be numeric (an optional header row allowed)")
    if data.shape[1] == n_features:
        return data, None
    if data.shape[1] == n_features + 1:
        return data[:, :-1], data[:, -1]
    raise CLIError(f"argument CSV: {path} has {data.shape[1]} columns; the model expects "
                   f"{n_features} feature columns (optionally plus a target column)")


# ----------------------------------------------------------------------------- show
def cmd_show(args: argparse.Namespace) -> int:
    from .teaching import show_text

    cls = resolve_method(args.method)
    X, y, name = _show_data(_task(cls), args.data)
    if name == "amini" and args.kernel is None:
        args.kernel = "linear"   # the lecture's kernel
    # show solves with CVXPY (--steps, --data numbers): no SMO tolerance is passed on, so no
    # warning about a tol the user never set
    model = _make_model(cls, args, smo_tol=False)
    fmt = "latex" if args.latex else "markdown" if args.markdown else "text"
    head = (f"{cls.__name__} on {name} ({X.shape[0]} points in R^{X.shape[1]}; "
            f"--data NAME|PATH.csv to change), kernel={getattr(model, 'kernel', '')}")
    print({"text": head, "latex": f"% {head}", "markdown": f"_{head}_\n"}[fmt])
    print(show_text(model, X, y, fmt, data_name=name, steps=args.steps,
                    numbers=args.data is not None))
    return 0


# ----------------------------------------------------------------------------- fit
def _gamma(value: str) -> float | str:
    if value in ("scale", "auto"):
        return value
    try:
        g = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a positive number, 'scale' or 'auto', got {value!r}") from None
    if not g > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {value!r}")
    return g


def _make_model(cls: type, args: argparse.Namespace, smo_tol: bool = True) -> Any:
    """The estimator with the hyper-parameters given on the command line; ``smo_tol``: ask
    SMO-type methods for ``tol=1e-5`` when ``--tol`` is not given (``fit``)."""
    params = cls().get_params(deep=False)  # the constructor's parameters and defaults
    kw: dict[str, Any] = {}
    for name in _HYPER:
        val = getattr(args, name, None)
        if val is None:
            continue
        if name not in params:
            raise CLIError(f"argument --{name}: not a parameter of {cls.__name__}; allowed: "
                           f"{', '.join(params)}")
        kw[name] = val
    tol = getattr(args, "tol", None)
    if "tol" in params:
        if tol is not None:
            kw["tol"] = tol
        elif smo_tol and params["tol"] == 1e-3:
            # SMO stops at LIBSVM's tol=1e-3 (relative gap ~1e-4); the CLI prints a certificate,
            # so it asks for a tighter one by default
            kw["tol"] = 1e-5
    elif tol is not None:
        raise CLIError(f"argument --tol: not a parameter of {cls.__name__}")
    return cls(**kw)


def _hyper_text(model: Any) -> str:
    """``kernel=..., C=..., gamma=..., `` for the fit header: only the parameters the model has,
    ``gamma`` only for a kernel that uses it (with the value ``scale``/``auto`` resolved to)."""
    params = model.get_params(deep=False)
    out = []
    kern = params.get("kernel")
    if kern is not None:
        out.append(f"kernel={kern}")
    for name in ("C", "nu", "epsilon"):
        if name in params:
            out.append(f"{name}={params[name]}")
    if "gamma" in params and kern in ("rbf", "poly", "sigmoid"):
        g = params["gamma"]
        value = getattr(getattr(model, "kernel_", None), "gamma", None)
        out.append(f"gamma={g} (= {value:.4g})" if isinstance(g, str) and value is not None
                   else f"gamma={g}")
    return "".join(f"{t}, " for t in out)


def _certificate_text(model: Any) -> str:
    cert = getattr(model, "certificate_", None)
    if cert is not None:
        return cert.table()
    ests = getattr(model, "estimators_", None)
    if ests:
        parts = []
        for i, est in enumerate(ests):
            c = getattr(est, "certificate_", None)
            if c is not None:
                parts.append(f"-- sub-problem {i} --\n{c.table()}")
        if parts:
            return "\n".join(parts)
    return "(no certificate)"


def cmd_fit(args: argparse.Namespace) -> int:
    cls = resolve_method(args.method)
    for opt, path in (("--save", args.save), ("--plot", args.plot)):
        _check_output_path(path, opt)
    X, y, scaler = _load_fit_data(args.data, args.n_samples, args.standardize)
    if _task(cls) == "classification":
        _check_label_column(y, args.data, cls.__name__)
    if args.data == "amini" and args.kernel is None:
        args.kernel = "linear"   # the lecture's kernel
    # the CLI's tighter default tol is for SMO; a backend named on the command line that is not
    # SMO gets the class default (no warning about a tol the user never set)
    model = _make_model(cls, args, smo_tol=args.backend in (None, "auto", "smo"))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        if args.tol is None:   # the CLI's own tol=1e-5 for SMO: no warning where it is unused
            warnings.filterwarnings("ignore", message=r".*: tol=1e-05 is ignored by backend",
                                    category=IgnoredParameterWarning)
        model.fit(X, y, backend=args.backend, form=args.form)
    elapsed = time.perf_counter() - t0
    print(f"{cls.__name__} on {args.data} ({X.shape[0]} x {X.shape[1]}), "
          f"{_hyper_text(model)}backend={getattr(model, 'backend_', args.backend)}, "
          f"form={args.form}")
    print(_certificate_text(model))
    status = getattr(model, "status_", "optimal")
    if status not in ("optimal",):
        print(f"primaldual: warning: solver status {status!r}: the point is not certified "
              "optimal (see the gap and KKT residuals above)", file=sys.stderr)
    score = model.score(X, y)
    print(f"training {'R^2' if _task(cls) == 'regression' else 'accuracy'}: {score:.4f}  "
          f"(fit {elapsed:.3f} s)")
    if args.table:
        if getattr(model, "estimators_", None) is not None:
            raise CLIError("argument --table: a per-sample table needs a binary or regression "
                           "fit (this fit has several sub-problems)")
        table = model.kkt_table()
        if args.table == "text":
            from .teaching import side_by_side
            print(side_by_side(model))
            print()
        print({"text": str, "latex": type(table).to_latex,
               "markdown": type(table).to_markdown}[args.table](table))
        if args.data == "amini" and cls.__name__ == "HardMarginSVC":
            from .teaching import AMINI_NOTE
            print(AMINI_NOTE)
    if args.save:
        from .persistence import save

        # the model file keeps the CLI's standardisation: predict applies it to raw rows
        save(model, args.save, preprocessing=scaler)
        print(f"saved model to {args.save}"
              + (" (with its standardisation of the features)" if scaler is not None else ""))
    if args.plot:
        from .plotting import plot_fit

        plot_fit(model, X, y, args.plot)
        print(f"saved plot to {args.plot}")
    return 0


def _check_output_path(path: str | None, option: str) -> None:
    """Refuse an output file in a missing directory before any fitting is done."""
    if not path:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CLIError(f"argument {option}: directory does not exist: {folder}")
    if os.path.isdir(path):
        raise CLIError(f"argument {option}: {path} is a directory; give a file name")


#: More distinct labels than this on a classifier is taken as a regression target.
MAX_CLASSES = 20


def _check_label_column(y: np.ndarray, data: str, method: str) -> None:
    """A classifier's label column (the CSV's last column) must hold a few discrete labels."""
    y = np.asarray(y, dtype=float)
    n_distinct = np.unique(y).shape[0]
    fractional = bool(np.any(y != np.round(y)))
    if fractional or n_distinct > MAX_CLASSES:
        why = ("non-integer values" if fractional
               else f"{n_distinct} distinct values (more than {MAX_CLASSES})")
        raise CLIError(f"argument --data: the label column (the last column of {data}) has "
                       f"{why}, but {method} is a classifier: it looks like a regression "
                       "target; use a regression method (e.g. primaldual fit EpsilonSVR "
                       f"--data {data}, or LSSVR, KernelRidge), or put the class labels in "
                       "the last column")


# ----------------------------------------------------------------------------- predict
def cmd_predict(args: argparse.Namespace) -> int:
    from .persistence import load, preprocess

    if not os.path.exists(args.model):
        raise CLIError(f"argument MODEL: file not found: {args.model}")
    _check_regular_file(args.model, "MODEL")
    model = load(args.model)
    n_features = int(getattr(model, "n_features_in_", 0)) or None
    if n_features is None:
        raise CLIError(f"argument MODEL: {args.model} does not hold a fitted model")
    X, y = _read_features(args.csv, n_features)
    X = preprocess(model, X)  # the standardisation fit applied (stored in the model file)
    pred = model.predict(X)
    for p in pred:
        print(f"{p:.10g}" if isinstance(p, (float, np.floating)) else p)
    if y is not None:
        score = model.score(X, y)
        label = "R^2" if getattr(model, "_task", "") == "regression" else "accuracy"
        print(f"# {label} against the last column: {score:.4f}", file=sys.stderr)
    return 0


# ----------------------------------------------------------------------------- check
def cmd_check(args: argparse.Namespace) -> int:
    cls = resolve_method(args.method)
    if args.n < 2:
        raise CLIError(f"argument --n: need at least 2 points (one per class), got {args.n}")
    from .exceptions import InsufficientMemoryError
    from .validation import block_bytes, check_memory

    try:  # CVXPY's dual holds Q (n x n) and its copies: three n x n blocks, refused up front
        check_memory(block_bytes([(args.n, args.n)] * 3 + [(args.n, 3)]),
                     f"checking {cls.__name__} on {args.n} points (dense {args.n} x {args.n} "
                     "matrices for CVXPY)", hint="use a smaller --n")
    except InsufficientMemoryError as exc:
        raise CLIError(f"argument --n: {exc}") from None
    X, y = _random_data(_task(cls), args.n, args.seed)
    if cls.__name__ == "HardMarginSVC":
        X = X + 3.0 * y[:, None]  # hard margin needs separable data: pull the classes apart
    model = cls()
    P = model.primal(X, y)
    D = model.dual(X, y)
    sp = P.solve(backend="cvxpy")
    sd = D.solve(backend="cvxpy")
    if not (sp.has_point and sd.has_point):
        print(f"{cls.__name__}: primal status {sp.status}, dual status {sd.status}")
        print("FAIL")
        return 1
    pv, dv = float(P.evaluate(sp.values)), float(D.evaluate(sd.values))
    gap = pv - dv
    rel = abs(gap) / max(1.0, abs(pv))
    kkt_max = max((float(np.max(np.abs(v))) if np.size(v) else 0.0
                   for v in P.kkt().residuals(sp.values, sp.multipliers).values()), default=0.0)
    print(f"{cls.__name__}: N = {len(y)} seeded random points (seed {args.seed}), CVXPY")
    print(f"primal optimum        {pv:.10g}   ({sp.status})")
    print(f"dual optimum          {dv:.10g}   ({sd.status})")
    print(f"duality gap           {gap:.3e}")
    print(f"relative gap          {rel:.3e}")
    print(f"KKT max residual      {kkt_max:.3e}   (primal point and multipliers)")
    ok = rel <= args.tol and kkt_max <= max(args.tol * 100, 1e-4)
    from .model.dualize import dualize

    try:
        M = dualize(P).dual
    except (ValueError, TypeError, NotImplementedError) as exc:
        print(f"mechanical dual       not derived: {exc}")
        M = None
    if M is not None:
        sm = M.solve(backend="cvxpy")
        mv = float(sm.objective_value)
        mrel = abs(mv - dv) / max(1.0, abs(dv))
        print(f"mechanical dual       {mv:.10g}   (rel. difference to hand dual {mrel:.3e})")
        ok = ok and mrel <= args.tol
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


# ----------------------------------------------------------------------------- bench
def cmd_bench(args: argparse.Namespace) -> int:
    if args.dir is None:
        if args.only:
            raise CLIError("argument NAME: benchmark script names need --dir (the folder of "
                           "scripts, e.g. the source repository's benchmarks/)")
        from .bench import format_table, quick_comparison

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
    # the scripts import the primaldual this command runs from
    env = dict(os.environ, MPLBACKEND="Agg")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(__file__).resolve().parent.parent), env.get("PYTHONPATH", "")]
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


# ----------------------------------------------------------------------------- derive
def cmd_derive(args: argparse.Namespace) -> int:
    from .model import Problem

    if not os.path.exists(args.spec):
        raise CLIError(f"argument SPEC: file not found: {args.spec}")
    ns = runpy.run_path(args.spec, run_name="__primaldual_spec__")
    if isinstance(ns.get("primal"), Problem):
        P = ns["primal"]
    elif callable(ns.get("build")):
        P = ns["build"]()
    else:
        raise CLIError(f"argument SPEC: {args.spec} must define `primal` (a Problem) or "
                       "`build() -> Problem`")
    if not isinstance(P, Problem):
        raise CLIError(f"argument SPEC: build() returned {type(P).__name__}, not a Problem")
    print(f"== Primal ==\n{P}\n")
    print(f"== Lagrangian ==\n{P.lagrangian()}\n")
    print(f"== KKT conditions ==\n{P.kkt()}\n")
    from .model.dualize import dualize

    res = dualize(P)
    if res.steps:
        print("== Derivation ==")
        for i, st in enumerate(res.steps, 1):
            print(f"{i}. {st}")
        print()
    else:
        print(f"== Dual ==\n{res.dual}")
    return 0


# ----------------------------------------------------------------------------- derivations
def cmd_check_derivation(args: argparse.Namespace) -> int:
    """Run FILE.py and compare the pieces it defines (``primal`` or ``build()``, and any of
    ``dual``, ``lagrangian``, ``kkt``, ``recover``, ``mapping``) with the mechanical
    derivation; print the report (exit 1 when a piece differs)."""
    from .derivation_file import DerivationFileError, read_derivation_file

    try:
        rep = read_derivation_file(args.file).check(args.tol)
    except DerivationFileError as exc:
        raise CLIError(f"argument FILE: {exc}") from None
    print(rep)
    return 0 if rep.ok else 1


def cmd_exercise(args: argparse.Namespace) -> int:
    """``--list``, the statement of NAME, its reference answer (``--solution``) or the grading
    of an answer file (``--answer FILE``: exit 1 when a line is wrong)."""
    from . import exercises as ex_mod
    from .derivation_file import DerivationFileError

    if args.name is None:
        if args.answer or args.solution:
            raise CLIError("argument NAME: --answer and --solution need an exercise name; "
                           f"allowed: {', '.join(ex_mod.names())}")
        print(ex_mod.listing())
        return 0
    if args.list:
        raise CLIError("argument --list: lists every exercise; give it without NAME")
    if args.answer and args.solution:
        raise CLIError("argument --solution: not with --answer")
    try:
        ex = ex_mod.exercise(args.name)
    except ValueError as exc:
        raise CLIError(f"argument NAME: {exc}") from None
    if args.solution:
        print(ex_mod.reference_text(ex), end="")
        return 0
    if not args.answer:
        print(ex_mod.statement(ex))
        return 0
    try:
        result = ex_mod.grade(ex, args.answer, tol=args.tol)
    except DerivationFileError as exc:
        raise CLIError(f"argument --answer: {exc}") from None
    print(result)
    return 0 if result.ok else 1


# ----------------------------------------------------------------------------- parser
def _tolerance(text: str) -> float:
    """A ``--tol`` value: a finite number >= 0 (``nan``, ``inf`` and negatives are refused;
    ``0`` asks for an exact check, which a floating-point gap then fails)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}"
                                         ) from None
    if not (np.isfinite(v) and v >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return v


_METHOD_HELP = "one of " + ", ".join(catalogue.NAMES) + " (case-insensitive; aliases such " \
    "as csvc, nusvc, krr are accepted)"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump
        raise CLIError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``primaldual`` command."""
    from .backends import BACKENDS

    p = _Parser(prog="primaldual", description="Executable primal-dual theory for SVMs.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    s = sub.add_parser("show", help="print primal, Lagrangian, KKT conditions and dual")
    s.add_argument("method", metavar="METHOD", help=_METHOD_HELP)
    g = s.add_mutually_exclusive_group()
    g.add_argument("--latex", action="store_true", help="LaTeX instead of text")
    g.add_argument("--markdown", action="store_true", help="Markdown with $$ LaTeX $$ blocks")
    s.add_argument("--data", default=None, metavar="NAME|PATH.csv",
                   help="build the problems on this data and print X, y, K, Q and the solution "
                        "(default: the six points of Amini's lecture, named 'amini')")
    s.add_argument("--steps", action="store_true",
                   help="the mechanical derivation of the dual, checked against the "
                        "hand-written one")
    for opt, typ in (("--kernel", str), ("--C", float), ("--gamma", _gamma), ("--degree", int),
                     ("--coef0", float), ("--nu", float), ("--epsilon", float)):
        s.add_argument(opt, type=typ, default=None, dest=opt[2:])
    s.set_defaults(func=cmd_show, tol=None)

    f = sub.add_parser("fit", help="fit a method and print its certificate")
    f.add_argument("method", metavar="METHOD", nargs="?", default="CSVC")
    f.add_argument("--data", default="breast_cancer", metavar="NAME|PATH.csv")
    f.add_argument("--n-samples", type=int, default=None, dest="n_samples")
    f.add_argument("--kernel", default=None)
    f.add_argument("--C", type=float, default=None, dest="C")
    f.add_argument("--gamma", type=_gamma, default=None)
    f.add_argument("--degree", type=int, default=None)
    f.add_argument("--coef0", type=float, default=None)
    f.add_argument("--nu", type=float, default=None)
    f.add_argument("--epsilon", type=float, default=None)
    f.add_argument("--tol", type=_tolerance, default=None,
                   help="solver tolerance (default: 1e-5 for SMO-type methods)")
    f.add_argument("--backend", default="auto", choices=BACKENDS)
    f.add_argument("--form", default="dual", choices=("dual", "primal"))
    f.add_argument("--save", default=None, metavar="MODEL.npz")
    f.add_argument("--plot", default=None, metavar="OUT.png")
    f.add_argument("--table", nargs="?", const="text", default=None,
                   choices=("text", "latex", "markdown"),
                   help="print the per-sample KKT table (α_i, y_i f(x_i), ξ_i, μ_i, "
                        "complementarity products, category)")
    f.add_argument("--standardize", action=argparse.BooleanOptionalAction, default=None,
                   help="scale features to zero mean, unit variance (default: yes for "
                        "bundled and CSV data, no for the generated 2-D sets)")
    f.set_defaults(func=cmd_fit)

    r = sub.add_parser("predict", help="predict with a saved model")
    r.add_argument("model", metavar="MODEL.npz")
    r.add_argument("csv", metavar="PATH.csv")
    r.set_defaults(func=cmd_predict)

    c = sub.add_parser("check", help="verify the hand-derived dual against the primal")
    c.add_argument("method", metavar="METHOD", help=_METHOD_HELP)
    c.add_argument("--n", type=int, default=24, help="number of random points")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--tol", type=_tolerance, default=1e-5, help="relative gap tolerance")
    c.set_defaults(func=cmd_check)

    b = sub.add_parser("bench", help="time primaldual against scikit-learn, or run the "
                       "benchmark scripts of a folder")
    b.add_argument("--quick", action="store_true",
                   help="smaller sizes (built-in: N=500, one run; scripts: passed --quick)")
    b.add_argument("--n", type=int, default=None, help="built-in comparison: sample size")
    b.add_argument("--repeats", type=int, default=None,
                   help="built-in comparison: interleaved repeats (best kept)")
    b.add_argument("--dir", default=None,
                   help="run the scripts *.py of this folder (e.g. the repository's benchmarks/)")
    b.add_argument("--timeout", type=float, default=600.0)
    b.add_argument("only", nargs="*", metavar="NAME", help="only these benchmark scripts")
    b.set_defaults(func=cmd_bench)

    d = sub.add_parser("derive", help="derive the dual of a primal spec file mechanically")
    d.add_argument("spec", metavar="SPEC.py")
    d.set_defaults(func=cmd_derive)

    cd = sub.add_parser("check-derivation", help="compare the dual/Lagrangian/KKT system a "
                        "file derives by hand with the mechanical derivation")
    cd.add_argument("file", metavar="FILE.py")
    cd.add_argument("--tol", type=_tolerance, default=1e-7, help="relative tolerance")
    cd.set_defaults(func=cmd_check_derivation)

    e = sub.add_parser("exercise", help="graded exercises: derive a dual or a KKT system, "
                       "have it checked line by line")
    e.add_argument("name", metavar="NAME", nargs="?", default=None,
                   help="the exercise (see --list); alone: print its statement")
    e.add_argument("--list", action="store_true", help="list the exercises (the default "
                   "without NAME)")
    e.add_argument("--answer", default=None, metavar="FILE.py",
                   help="grade this answer (a check-derivation file; the exercise's data and "
                        "primal are given): exit 0 pass, 1 a wrong line")
    e.add_argument("--solution", action="store_true", help="print the reference answer")
    e.add_argument("--tol", type=_tolerance, default=1e-7, help="relative tolerance")
    e.set_defaults(func=cmd_exercise)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (see the module docstring)."""
    from .solution import InfeasibleProblemError

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser()
        if not argv:
            parser.print_help()
            return 0
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        return int(args.func(args) or 0)
    except CLIError as exc:
        print(f"primaldual: error: {exc}" if not str(exc).startswith("primaldual")
              else f"{exc}", file=sys.stderr)
        return exc.code
    except InfeasibleProblemError as exc:
        print(f"primaldual: infeasible: {exc}", file=sys.stderr)
        return 3
    except (ValueError, TypeError) as exc:
        print(f"primaldual: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except KeyboardInterrupt:
        return 130
    except MemoryError as exc:
        print(f"primaldual: out of memory: {_one_line(exc) or 'an allocation failed'}; use a "
              "smaller --n-samples or a backend that does not store the N x N kernel (smo, "
              "lowrank)", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"primaldual: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # never a traceback: an unexpected failure is one line too
        print(f"primaldual: internal error: {type(exc).__name__}: {_one_line(exc)} (please "
              "report it)", file=sys.stderr)
        return 2


def _one_line(exc: BaseException) -> str:
    """The exception's message on one line (at most 500 characters)."""
    text = " ".join(str(exc).split())
    return text if len(text) <= 500 else text[:497] + "..."


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
