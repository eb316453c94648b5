"""Shared fixtures of the test suite (the layout mirrors the package: tests/<subpackage>/ for
primaldual/<subpackage>/, tests/test_<module>.py for primaldual/<module>.py, tests/compat/ for
scikit-learn/LIBSVM conformance and tests/integration/ for checks across the whole package)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

# figures are drawn off-screen in every test (also when MPLBACKEND was not exported)
os.environ.setdefault("MPLBACKEND", "Agg")

#: The repository root (docs/, examples/, benchmarks/).
ROOT = Path(__file__).resolve().parent.parent


#: [signatures, seconds] numba compiled in this process (cache misses only: a load from its
#: on-disk cache fires no compile event; the outermost compile of a nest counted once)
_compiled = [0, 0.0]


def pytest_configure(config: pytest.Config) -> None:
    from tests import background

    if not config.option.collectonly:
        # numba's cache for the routes the suite compiles, filled on the second CPU
        background.warm_up(background.script("tests/warm_numba.py", timeout=600))
    try:
        from numba.core import event
    except ImportError:          # numba missing: the suite's own import checks say so
        return

    class CompileTime(event.Listener):
        depth, t0 = 0, 0.0

        def on_start(self, ev) -> None:
            if self.depth == 0:
                self.t0 = time.perf_counter()
            self.depth += 1

        def on_end(self, ev) -> None:
            self.depth -= 1
            if self.depth == 0:
                _compiled[0] += 1
                _compiled[1] += time.perf_counter() - self.t0

    event.register("numba:compile", CompileTime())


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the selected script-running tests' commands on the second CPU
    (:mod:`tests.background`)."""
    from tests import background

    commands = []
    for item in session.items:
        command = getattr(getattr(item, "function", None), background.ATTR, None)
        if command is not None:
            callspec = getattr(item, "callspec", None)
            commands.append(command(**(callspec.params if callspec is not None else {})))
    if not session.config.option.collectonly:
        background.start(commands)


def pytest_sessionfinish(session: pytest.Session) -> None:
    from tests import background

    background.shutdown()


def pytest_terminal_summary(terminalreporter) -> None:
    from tests import background

    line = background.summary()
    if line:
        terminalreporter.write_line(line)
    if _compiled[0]:
        terminalreporter.write_line(f"numba compiled {_compiled[0]} signatures in this process "
                                    f"in {_compiled[1]:.0f} s (none when its on-disk cache is "
                                    "warm)")


@pytest.fixture(scope="session", autouse=True)
def _smo_compiled_route():
    """Every SMO fit of the suite runs the compiled (numba) core, whatever numba's cache held
    at the start.  With a cold cache a small fit would take the dense numpy route until some
    fit compiled the core, so tests comparing two fits to 1e-6 would depend on the test
    order.  The dense route has its own tests (tests/backends/test_smo_dense.py), which
    switch it on with monkeypatch."""
    from primaldual.backends.smo import solver

    ready = solver._numba_ready
    solver._numba_ready = lambda: True
    yield
    solver._numba_ready = ready


@pytest.fixture
def repo_root() -> Path:
    """The repository root."""
    return ROOT


@pytest.fixture
def binary_data():
    """``make(seed=0, n=40, d=2) -> (X, y)``: two Gaussian classes at ``+-1`` on the first
    feature, labels in {-1, +1} (both classes present)."""

    def make(seed: int = 0, n: int = 40, d: int = 2) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(seed)
        y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        X = rng.standard_normal((n, d))
        X[:, 0] += y
        return X, y

    return make


@pytest.fixture
def regression_data():
    """``make(seed=0, n=40, d=1) -> (X, y)``: ``y = sinc(x_1) + 0.1 noise`` on ``[-3, 3]^d``."""

    def make(seed: int = 0, n: int = 40, d: int = 1) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(seed)
        X = rng.uniform(-3.0, 3.0, size=(n, d))
        return X, np.sinc(X[:, 0]) + 0.1 * rng.standard_normal(n)

    return make


@pytest.fixture
def count_C_checks(monkeypatch):
    """Count the checks of ``CSVC``'s ``C``: its constraint table's check of ``C`` is wrapped so
    that every call appends ``"C"`` to the returned list."""
    import primaldual as pd

    calls: list[str] = []
    table = dict(pd.CSVC._parameter_constraints)
    check = table["C"]

    def counting(value, name):
        calls.append(name)
        return check(value, name)

    monkeypatch.setattr(pd.CSVC, "_parameter_constraints", {**table, "C": counting})
    return calls
