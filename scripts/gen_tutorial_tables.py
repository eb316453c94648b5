"""Regenerate the output quoted in docs/tutorial.md from real runs.

Each quoted block follows a marker ``<!-- output: KEY -->`` and is the output of one run:

* ``cli-certificate``: ``primaldual fit csvc --data ripley --C 10 --gamma 2`` (section 3),
* ``python-certificate``: ``print(m.certificate_)`` of section 5's Python block, which loads
  the data as the CLI does (``standardize=False``) and passes the CLI's ``tol=1e-5``.

The wall-clock lines (``time [s]``, ``(fit ... s)``) are replaced by ``...``.
``python scripts/gen_tutorial_tables.py`` rewrites the page; tests/integration/test_tutorial_tables.py
regenerates the blocks and compares them to the page (numbers to 1e-4 relative, residuals at
round-off level as equal).
"""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "tutorial.md"
MARKER = re.compile(r"(<!-- output: ([\w-]+) -->\n```text\n)(.*?)(```)", re.S)


def _elide_times(text: str) -> str:
    text = re.sub(r"^time \[s\] .*$", "...", text, flags=re.M)
    return re.sub(r"\s+\(fit [0-9.]+ s\)", "", text)


def cli_certificate() -> str:
    from primaldual.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["fit", "csvc", "--data", "ripley", "--C", "10", "--gamma", "2"]) == 0
    return _elide_times(buf.getvalue())


def python_block() -> str:
    """Section 5's Python code (the first ```python block after its heading)."""
    sec = PAGE.read_text().split("## 5. The same from Python")[1]
    return re.search(r"```python\n(.*?)```", sec, re.S).group(1)


def python_certificate() -> str:
    """What ``print(m.certificate_)`` prints when section 5's block runs (in a scratch folder:
    the block saves a file)."""
    import os
    import tempfile

    code = python_block()
    head = code.split("print(m.certificate_)")[0]
    ns: dict = {"__name__": "__docs__"}
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(head, "tutorial.md[section 5]", "exec"), ns)  # noqa: S102
        finally:
            os.chdir(cwd)
    return _elide_times(str(ns["m"].certificate_) + "\n")


GENERATORS = {"cli-certificate": cli_certificate, "python-certificate": python_certificate}


def quoted() -> dict[str, str]:
    """The blocks on the page, by key."""
    return {m.group(2): m.group(3) for m in MARKER.finditer(PAGE.read_text())}


def main() -> None:
    text = PAGE.read_text()
    fresh = {k: GENERATORS[k]() for k in quoted()}
    PAGE.write_text(MARKER.sub(lambda m: m.group(1) + fresh[m.group(2)] + m.group(4), text))


if __name__ == "__main__":
    main()
