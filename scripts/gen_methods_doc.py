"""Regenerate docs/methods.md from the formulation catalogue and `primaldual show --markdown`.

Run from the repository root with ../shared beside it: `python scripts/gen_methods_doc.py`.
"""
import contextlib
import io
import re
from pathlib import Path

from primaldual.cli import main

F = open(Path(__file__).resolve().parents[2] / 'shared' / 'FORMULATIONS.md').read()
secs = {int(m.group(1)): (m.group(2), m.group(3)) for m in
        re.finditer(r'^## (\d+)\. (.*?)\n(.*?)(?=^## |\Z)', F, re.S | re.M)}
FAM = [("Primal", "Hard-margin and soft-margin classifiers", [(1, "HardMarginSVC"), (2, "CSVC"), (3, "L2SVC"), (4, "NuSVC")]),
       (None, "Support-vector regression", [(5, "EpsilonSVR"), (6, "NuSVR")]),
       (None, "Least-squares SVMs", [(7, "LSSVC"), (8, "LSSVR"), (9, None)]),
       (None, "Proximal SVM and kernel ridge", [(10, "ProximalSVC"), (11, "KernelRidge")]),
       (None, "Semi-supervised: Laplacian RLS and Laplacian SVM", [(12, "LapRLS"), (12, "LapSVC")]),
       (None, "Kernel logistic regression", [(13, "KernelLogisticRegression")]),
       (None, "Low-rank reformulation (a transformation of the duals above)", [(14, None)])]
out = ["# Methods: primal, dual, KKT conditions and recovery\n",
       "One section per method family. For every method the statement from the formulation",
       "catalogue (primal, Lagrangian, stationarity, dual, complementarity and how `w`, `b` and",
       "the support vectors are recovered) comes first; below it, the problem objects exactly as",
       "the library builds them, generated with `primaldual show METHOD --markdown` on a",
       "six-point toy dataset (so `N = 6`; names are symbolic). Signs follow",
       "[conventions.md](conventions.md). Equation numbers in brackets point into the reference texts.\n",
       "Regenerate the generated blocks with `primaldual show METHOD --markdown`.\n"]
out.append("Contents: " + " · ".join(f"[{t}](#{re.sub(r'[^a-z0-9 -]', '', t.lower()).replace(' ', '-')})" for _, t, _ in FAM) + "\n")
done = set()
for _, title, items in FAM:
    out.append(f"## {title}\n")
    for num, cls in items:
        if num not in done:
            name, body = secs[num]
            out.append(f"### {num}. {name}\n\n{body.strip()}\n")
            done.add(num)
        if cls:
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                assert main(["show", cls, "--markdown"]) == 0
            md = buf.getvalue().replace("# " + cls, "").strip()
            md = re.sub(r"^## ", "##### ", md, flags=re.M)
            out.append(f"#### `{cls}` as built by the library (`primaldual show {cls} --markdown`)\n\n{md}\n")
shared = F[F.index("## Tools every method shares"):]
out.append(shared.replace("## Tools every method shares", "## Tools every method shares"))
open(Path(__file__).resolve().parents[1] / 'docs' / 'methods.md', 'w').write("\n".join(out))
