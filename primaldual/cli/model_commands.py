"""``show``, ``fit`` and ``predict``: the subcommands that build, fit or load a model."""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from typing import Any

import numpy as np

from ..exceptions import IgnoredParameterWarning
from .common import HYPER, CLIError, check_output_path, check_regular_file, resolve_method, task_of
from .data import check_label_column, load_fit_data, read_features, show_data


def cmd_show(args: argparse.Namespace) -> int:
    """``show``: the primal, Lagrangian, KKT conditions and dual of a method (``--data``: on
    those data, with the numbers; ``--steps``: the mechanical derivation)."""
    from ..teaching import show_text

    cls = resolve_method(args.method)
    X, y, name = show_data(task_of(cls), args.data)
    slide_defaults(cls, args, name)
    # show solves with CVXPY (--steps, --data numbers): no SMO tolerance is passed on, so no
    # warning about a tol the user never set
    model = make_model(cls, args, smo_tol=False)
    fmt = "latex" if args.latex else "markdown" if args.markdown else "text"
    head = (f"{cls.__name__} on {name} ({X.shape[0]} points in R^{X.shape[1]}; "
            f"--data NAME|PATH.csv to change), kernel={getattr(model, 'kernel', '')}")
    print({"text": head, "latex": f"% {head}", "markdown": f"_{head}_\n"}[fmt])
    print(show_text(model, X, y, fmt, data_name=name, steps=args.steps,
                    numbers=args.data is not None))
    return 0


def slide_defaults(cls: type, args: argparse.Namespace, name: str | None) -> None:
    """On one of Amini's worked examples, the slide's kernel and ``C`` unless the command line
    gives them (``C`` only for a method that has one)."""
    from ..datasets import AMINI_EXAMPLES

    ex = AMINI_EXAMPLES.get(name or "")
    if ex is None:
        return
    if args.kernel is None:
        args.kernel = ex.kernel
    if ex.C is not None and getattr(args, "C", None) is None and "C" in cls().get_params():
        args.C = ex.C


def make_model(cls: type, args: argparse.Namespace, smo_tol: bool = True) -> Any:
    """The estimator with the hyper-parameters given on the command line; ``smo_tol``: ask
    SMO-type methods for ``tol=1e-5`` when ``--tol`` is not given (``fit``)."""
    params = cls().get_params(deep=False)  # the constructor's parameters and defaults
    kw: dict[str, Any] = {}
    for name in HYPER:
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


def hyper_text(model: Any) -> str:
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


def certificate_text(model: Any) -> str:
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
    """``fit``: fit a method on ``--data`` and print its certificate (``--table``, ``--save``,
    ``--plot`` for more)."""
    cls = resolve_method(args.method)
    for opt, path in (("--save", args.save), ("--plot", args.plot)):
        check_output_path(path, opt)
    X, y, scaler = load_fit_data(args.data, args.n_samples, args.standardize)
    if task_of(cls) == "classification":
        check_label_column(y, args.data, cls.__name__)
    slide_defaults(cls, args, args.data)
    # the CLI's tighter default tol is for SMO; a backend named on the command line that is not
    # SMO gets the class default (no warning about a tol the user never set)
    model = make_model(cls, args, smo_tol=args.backend in (None, "auto", "smo"))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        if args.tol is None:   # the CLI's own tol=1e-5 for SMO: no warning where it is unused
            warnings.filterwarnings("ignore", message=r".*: tol=1e-05 is ignored by backend",
                                    category=IgnoredParameterWarning)
        model.fit(X, y, backend=args.backend, form=args.form)
    elapsed = time.perf_counter() - t0
    print(f"{cls.__name__} on {args.data} ({X.shape[0]} x {X.shape[1]}), "
          f"{hyper_text(model)}backend={getattr(model, 'backend_', args.backend)}, "
          f"form={args.form}")
    print(certificate_text(model))
    status = getattr(model, "status_", "optimal")
    if status not in ("optimal",):
        print(f"primaldual: warning: solver status {status!r}: the point is not certified "
              "optimal (see the gap and KKT residuals above)", file=sys.stderr)
    score = model.score(X, y)
    print(f"training {'R^2' if task_of(cls) == 'regression' else 'accuracy'}: {score:.4f}  "
          f"(fit {elapsed:.3f} s)")
    if args.table:
        if getattr(model, "estimators_", None) is not None:
            raise CLIError("argument --table: a per-sample table needs a binary or regression "
                           "fit (this fit has several sub-problems)")
        table = model.kkt_table()
        if args.table == "text":
            from ..teaching import side_by_side
            print(side_by_side(model))
            print()
        print({"text": str, "latex": type(table).to_latex,
               "markdown": type(table).to_markdown}[args.table](table))
        from ..teaching import slide_note

        note = slide_note(model, args.data)
        if note:
            print(note)
    if args.save:
        from ..persistence import save

        # the model file keeps the CLI's standardisation: predict applies it to raw rows
        save(model, args.save, preprocessing=scaler)
        print(f"saved model to {args.save}"
              + (" (with its standardisation of the features)" if scaler is not None else ""))
    if args.plot:
        from ..plotting import plot_fit

        plot_fit(model, X, y, args.plot)
        print(f"saved plot to {args.plot}")
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
    """``predict``: one prediction per row of the CSV with a saved model (and its score on
    stderr when the CSV has a target column)."""
    from ..persistence import load, preprocess

    if not os.path.exists(args.model):
        raise CLIError(f"argument MODEL: file not found: {args.model}")
    check_regular_file(args.model, "MODEL")
    model = load(args.model)
    n_features = int(getattr(model, "n_features_in_", 0)) or None
    if n_features is None:
        raise CLIError(f"argument MODEL: {args.model} does not hold a fitted model")
    X, y = read_features(args.csv, n_features)
    X = preprocess(model, X)  # the standardisation fit applied (stored in the model file)
    if not hasattr(model, "predict"):
        if hasattr(model, "decision_function"):   # EnclosingBall: a score per row
            for p in model.decision_function(X):
                print(f"{p:.10g}")
            print(f"# {type(model).__name__}: R^2 - ||phi(x) - c||^2 per row (>= 0 inside "
                  "the ball)", file=sys.stderr)
        else:                                     # KernelPCA: the component scores per row
            for row in model.transform(X):
                print(",".join(f"{v:.10g}" for v in row))
            print(f"# {type(model).__name__}: the component scores of each row",
                  file=sys.stderr)
        return 0
    pred = model.predict(X)
    for p in pred:
        print(f"{p:.10g}" if isinstance(p, (float, np.floating)) else p)
    if y is not None:
        from sklearn.base import is_regressor
        score = model.score(X, y)                # R^2 for a regressor (scikit-learn's score)
        label = "R^2" if is_regressor(model) else "accuracy"
        print(f"# {label} against the last column: {score:.4f}", file=sys.stderr)
    return 0
