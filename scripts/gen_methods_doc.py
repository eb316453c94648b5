"""Regenerate docs/methods.md: every method's problems exactly as the library builds them.

Each block is the output of `primaldual show METHOD --markdown`; the derivations and sign
conventions they instantiate are stated in docs/formulations.md, which every block links to.
Reads nothing outside the repository. Run from anywhere: `python scripts/gen_methods_doc.py`.
"""
import contextlib
import io
import re
from pathlib import Path

from primaldual.cli import main

ROOT = Path(__file__).resolve().parents[1]

FAMILIES = [
    ("Hard-margin and soft-margin classifiers",
     [("HardMarginSVC", "1-hard-margin-svc"), ("CSVC", "2-c-svc-l1-soft-margin"),
      ("L2SVC", "3-l2-svc-squared-hinge"), ("NuSVC", "4-nu-svc")]),
    ("Support-vector regression", [("EpsilonSVR", "5-epsilon-svr"), ("NuSVR", "6-nu-svr")]),
    ("Least-squares SVMs", [("LSSVC", "7-ls-svm-classifier"), ("LSSVR", "8-ls-svm-regression")]),
    ("Proximal SVM and kernel ridge",
     [("ProximalSVC", "10-proximal-svc"), ("KernelRidge", "11-kernel-ridge-ls-svm-without-bias")]),
    ("Semi-supervised: Laplacian RLS and Laplacian SVM",
     [("LapRLS", "12-laplacian-rls-and-laplacian-svm"),
      ("LapSVC", "12-laplacian-rls-and-laplacian-svm")]),
    ("Kernel logistic regression",
     [("KernelLogisticRegression", "13-kernel-logistic-regression")]),
]


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")


def build() -> str:
    out = [
        "# Methods as the library builds them\n",
        "For every method: the primal (each constraint with its multiplier in brackets), the",
        "Lagrangian, the KKT conditions, the dual, how `w` and `b` are recovered, and the",
        "notation, exactly as `primaldual show METHOD --markdown` prints them. The derivations and",
        "sign conventions are in [Formulations](formulations.md) (linked from each method);",
        "the loss weight is `C` everywhere, `gamma` is always the RBF width.\n",
        "The problems are built on the six points of Amini's lecture (dataset `amini`, linear",
        "kernel, `N = 6`) for classifiers and on eight points of `sinc` (RBF kernel) for",
        "regressors; the symbols do not depend on the data. Regenerate this page with",
        "`python scripts/gen_methods_doc.py`.\n",
        "Contents: " + " · ".join(f"[{t}](#{_slug(t)})" for t, _ in FAMILIES) + "\n",
    ]
    for title, items in FAMILIES:
        out.append(f"## {title}\n")
        for cls, anchor in items:
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                assert main(["show", cls, "--markdown"]) == 0
            md = buf.getvalue().strip()
            md = re.sub(rf"^# {cls}\n", "", md, flags=re.M)
            md = re.sub(r"^_.* on .*_\n+", "", md, flags=re.M).strip()  # the data header line
            md = re.sub(r"^## ", "#### ", md, flags=re.M)
            section = anchor.split("-")[0]
            out.append(f"### {cls}\n\nStatement and derivation: "
                       f"[Formulations, section {section}](formulations.md#{anchor}).\n\n{md}\n")
    return "\n".join(out)


if __name__ == "__main__":
    (ROOT / "docs" / "methods.md").write_text(build())
