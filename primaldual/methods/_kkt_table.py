"""The per-sample KKT table of a fit: :class:`KKTTable` and :func:`kkt_table`.

Below the estimators, so that an estimator's ``kkt_table()`` builds its own table;
:mod:`primaldual.teaching` re-exports both.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["KKTTable", "kkt_table", "model_bias", "model_task"]


def model_bias(model: Any) -> float:
    """The bias of the primal-dual view, ``b_``, on the scale of ``beta_``: the table's
    ``f = K beta + b`` must pair ``beta_`` with its own bias. ``intercept_`` may be on another
    scale (nu-SVC's is LIBSVM's ``b / rho``), so it serves only a model without ``b_``."""
    b = getattr(model, "b_", None)
    return float(b) if b is not None else float(np.ravel(model.intercept_)[0])


def model_task(model: Any) -> str:
    return getattr(model, "_task", "classification")


class KKTTable:
    """Per-sample complementarity view of one fit: rows ``i``, columns the primal variables
    (``ξ_i``, ...), the multipliers (``α_i``, ``μ_i``, ...), ``y_i f(x_i)`` (or ``f(x_i)``), each
    inequality's slack ``g_i`` and product ``λ_i g_i`` (zero at an optimum), and the category
    (non-SV / free SV / bounded SV).

    Attributes
    ----------
    columns : list of str
    values : dict str -> ndarray (one entry per column except ``category``)
    category : ndarray of str
    legend : list of str
        The slack ``g_i`` of each inequality, as rendered by the primal.
    """

    def __init__(self, columns: list[str], values: dict[str, np.ndarray],
                 category: np.ndarray, legend: list[str]) -> None:
        self.columns, self.values, self.category, self.legend = columns, values, category, legend

    def __len__(self) -> int:
        return len(self.category)

    def _cell(self, col: str, i: int, tex: bool = False) -> str:
        if col == "category":
            return str(self.category[i])
        v = float(self.values[col][i])
        if col == "i":
            return str(int(v))
        if "·" in col:
            return f"{v:.1e}"
        return f"{v:.4f}"

    def __str__(self) -> str:
        n = len(self)
        cells = [[self._cell(c, i) for c in self.columns] for i in range(n)]
        width = [max(len(c), *(len(r[k]) for r in cells)) for k, c in enumerate(self.columns)]
        head = "  ".join(c.rjust(w) for c, w in zip(self.columns, width, strict=True))
        lines = [head, "-" * len(head)]
        lines += ["  ".join(x.rjust(w) for x, w in zip(r, width, strict=True)) for r in cells]
        if self.legend:
            lines.append("")
            lines += self.legend
        return "\n".join(lines)

    __repr__ = __str__

    def to_latex(self) -> str:
        """A ``tabular`` with the same columns."""
        from ..model.symbols import GREEK, LATEX_GREEK
        inv = {v: LATEX_GREEK[k] for k, v in GREEK.items()}

        def tex(c: str) -> str:
            s = c
            for u, lx in inv.items():
                s = s.replace(u, lx + " ")
            return "$" + s.replace("·", r"\cdot ").replace("*", "^*") + "$" \
                if c not in ("i", "category") else c
        head = " & ".join(tex(c) for c in self.columns)
        body = r" \\" + "\n".join(
            " & ".join(self._cell(c, i) for c in self.columns) + r" \\"
            for i in range(len(self)))
        return (r"\begin{tabular}{" + "r" * (len(self.columns) - 1) + "l}\n" + head + r" \\"
                + r"\hline" + "\n" + body[3:] + "\n" + r"\end{tabular}")

    def to_markdown(self) -> str:
        head = "| " + " | ".join(self.columns) + " |"
        sep = "|" + "|".join("---:" for _ in self.columns) + "|"
        rows = ["| " + " | ".join(self._cell(c, i) for c in self.columns) + " |"
                for i in range(len(self))]
        return "\n".join([head, sep, *rows])


def kkt_table(model: Any, tol: float | None = None) -> KKTTable:
    """The per-sample KKT table of a fitted binary classifier or regressor (see
    :class:`KKTTable`). Computed from the primal point and multipliers the certificate used."""
    state = getattr(model, "_kkt_state", None)
    if state is None:
        raise ValueError("kkt_table needs a model fitted in this session (binary task, no "
                         "zero sample weights); fit it first")
    data, point, mults = state
    P = model._primal(data)
    n = data.N
    cols: list[str] = ["i"]
    vals: dict[str, np.ndarray] = {"i": np.arange(n, dtype=float)}
    reg = model_task(model) == "regression"
    beta = np.asarray(model.beta_, dtype=float)
    if "order" in getattr(data, "extra", {}):  # LapSVC/LapRLS: beta_ in the rows' own order
        beta = beta[data.extra["order"]]
    f = data.kmatvec(beta) + model_bias(model)
    if getattr(data, "extra", {}).get("l") is not None:   # LapSVC/LapRLS: labelled rows
        n = int(data.extra["l"])
        vals["i"] = vals["i"][:n]
        f = f[:n]
    yv = np.asarray(data.y, dtype=float)[:n]
    cols.append("y_i")
    vals["y_i"] = yv
    if reg:
        cols.append("f(x_i)")
        vals["f(x_i)"] = f
    else:
        cols.append("y_i f(x_i)")
        vals["y_i f(x_i)"] = yv * f
    for c in P.constraints:
        if c.scalar or c.multiplier not in mults:
            continue
        lam = np.atleast_1d(np.asarray(mults[c.multiplier], dtype=float))
        if lam.shape[0] != n:
            continue
        cols.append(c.mult_txt)
        vals[c.mult_txt] = lam
    for v in P.variables:
        if v.scalar or v.feature or v.name not in point:
            continue
        x = np.atleast_1d(np.asarray(point[v.name], dtype=float))
        if x.shape[0] == n:
            cols.append(v.txt)
            vals[v.txt] = x
    legend = []
    for c in P.constraints:
        if c.scalar or c.equality or c.multiplier not in mults:
            continue
        lam = np.atleast_1d(np.asarray(mults[c.multiplier], dtype=float))
        if lam.shape[0] != n:
            continue
        g = np.atleast_1d(c.value(point))[:n]
        gname = f"g[{c.mult_txt}]"
        pname = f"{c.mult_txt}·g"
        cols += [gname, pname]
        vals[gname], vals[pname] = g, lam * g
        legend.append(f"g[{c.mult_txt}] = {c.g_render()[0]} ≥ 0   (complementarity: "
                      f"{c.mult_txt} g = 0)")
    cat = np.full(n, "non-SV", dtype=object)
    sv = getattr(model, "dual_support_", None)
    if sv is not None:
        free, bnd = model.dual_free_support_, model.dual_bounded_support_
    else:
        sv, free, bnd = model.support_, model.free_support_, model.bounded_support_
    cat[np.asarray(free, dtype=int)] = "free SV"
    cat[np.asarray(bnd, dtype=int)] = "bounded SV"
    cols.append("category")
    return KKTTable(cols, vals, cat, legend)
