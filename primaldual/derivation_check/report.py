"""The report of :func:`~primaldual.derivation_check.check_derivation`: the compared pieces,
each with both printed lines and a witness, and their text."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Piece:
    """One compared piece: a line of the dual, a KKT condition, a Lagrangian term, ...

    ``yours`` and ``derived`` are the printed lines; ``witness`` states a point where the two
    disagree and by how much (empty when the piece agrees); ``hint`` is a reading of the
    difference when one applies (a constant factor, a sign)."""

    part: str
    title: str
    ok: bool
    yours: str = ""
    derived: str = ""
    witness: str = ""
    hint: str = ""
    #: the witness as values by the derived names (``{"alpha": ...}``; KKT and Lagrangian
    #: pieces: the primal variables and multipliers), and the disagreement there
    point: dict[str, np.ndarray] | None = None
    amount: float | None = None

    def lines(self) -> list[str]:
        out = [f"{self.part}: {self.title}"]
        if self.yours or self.derived:
            out.append(f"    yours   : {self.yours or '(nothing)'}")
            out.append(f"    derived : {self.derived or '(nothing)'}")
        if self.witness:
            out.append(f"    witness : {self.witness}")
        if self.hint:
            out.append(f"    hint    : {self.hint}")
        return out


@dataclass
class DerivationReport:
    """What :func:`check_derivation` found: ``ok``, the compared ``pieces`` (in printed
    order), the first differing piece (``first``) and the alignment of the variables.

    Each differing piece carries its witness as numbers too (``point``, ``amount``).
    ``str(report)`` is a one-line summary when everything agrees, otherwise the first
    difference with both lines, a witness and the other differing pieces, one line each."""

    subject: str
    pieces: list[Piece] = field(default_factory=list)
    alignment: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.pieces)

    @property
    def first(self) -> Piece | None:
        return next((p for p in self.pieces if not p.ok), None)

    def __bool__(self) -> bool:
        return self.ok

    def summary(self) -> str:
        what = "; ".join(self.checked) or "nothing"
        if self.ok:
            notes = [a for a in self.alignment if "(name)" not in a]
            al = f" ({', '.join(notes)})" if notes else ""
            return f"derivation OK for {self.subject}: {what} agree with the mechanical " \
                   f"derivation{al}"
        bad = [p for p in self.pieces if not p.ok]
        return (f"derivation of {self.subject} differs from the mechanical one in {len(bad)} "
                f"piece{'s' if len(bad) > 1 else ''}; first: {bad[0].part}, {bad[0].title}")

    def __str__(self) -> str:
        if self.ok:
            return self.summary()
        bad = [p for p in self.pieces if not p.ok]
        out = [self.summary(), *bad[0].lines()]
        if self.alignment:
            out.append("    aligned : " + _alignment_text(self.alignment))
        if len(bad) > 1:
            out.append("also differ:")
            out += [f"  - {p.part}: {p.title}" for p in bad[1:]]
        return "\n".join(out)

    __repr__ = __str__


def _alignment_text(entries: list[str]) -> str:
    """``α, b by name; a ↔ α (shape)``: the name matches grouped per piece."""
    groups: dict[str, list[str]] = {}
    other: list[str] = []
    for e in entries:
        head, _, rest = e.partition(" ") if e.startswith(("KKT ", "L ")) else ("", "", e)
        if rest.endswith(" (name)"):
            groups.setdefault(head, []).append(rest[:-7])
        else:
            other.append(e)
    parts = [f"{(h + ': ') if h else ''}{', '.join(v)} by name" for h, v in groups.items()]
    return "; ".join(parts + other)
