"""Run the code cells of examples/primal_dual_tour.ipynb in order, in this process, with the
standard library's json and exec (no Jupyter needed), and store what each prints as its output.

``python scripts/run_notebook.py`` rewrites the notebook's outputs;
tests/integration/test_notebook.py runs the cells the same way, checks a few printed values and
compares the stored outputs with the fresh ones (numbers to 1e-4 relative, values below 1e-6 as
round-off).
"""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "primal_dual_tour.ipynb"


def load(path: Path = NOTEBOOK) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def code_cells(nb: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def run(nb: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """What each code cell prints (in order) and the namespace after the last one. A cell that
    raises stops the run with its index in the message."""
    import matplotlib

    matplotlib.use("Agg")
    ns: dict[str, Any] = {"__name__": "__notebook__"}
    printed = []
    for k, cell in enumerate(code_cells(nb)):
        buf = io.StringIO()
        code = compile("".join(cell["source"]), f"{NOTEBOOK.name}[code cell {k}]", "exec")
        with contextlib.redirect_stdout(buf):
            exec(code, ns)  # noqa: S102 - the notebook's own code
        printed.append(buf.getvalue())
    return printed, ns


def stored(nb: dict[str, Any]) -> list[str]:
    """The text each code cell's stored output shows (its stdout streams, joined)."""
    return ["".join("".join(o["text"]) for o in c.get("outputs", [])
                    if o.get("output_type") == "stream" and o.get("name") == "stdout")
            for c in code_cells(nb)]


def main() -> None:
    nb = load()
    printed, _ = run(nb)
    for n, (cell, text) in enumerate(zip(code_cells(nb), printed, strict=True), start=1):
        cell["execution_count"] = n
        cell["outputs"] = ([{"output_type": "stream", "name": "stdout",
                             "text": text.splitlines(True)}] if text else [])
    with open(NOTEBOOK, "w", encoding="utf-8") as fh:
        json.dump(nb, fh, indent=1, ensure_ascii=False)
        fh.write("\n")


if __name__ == "__main__":
    main()
