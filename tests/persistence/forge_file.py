"""Forging a model file for the persistence tests: a saved file rewritten with its metadata or
arrays edited and its digest recomputed, so only the reader's schema checks stand between the
forgery and a loaded model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from primaldual.persistence.format import _digest


def refile(src: Path, dst: Path, edit_meta: Any = None, edit_arrays: Any = None) -> Path:
    """``src`` rewritten to ``dst`` after ``edit_meta(meta)`` and ``edit_arrays(arrays)``
    (each optional, editing in place), with a digest that matches the edited contents."""
    with np.load(src) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["__meta__"].tobytes().decode())
    if edit_meta:
        edit_meta(meta)
    if edit_arrays:
        edit_arrays(arrays)
    meta_bytes = json.dumps(meta).encode()
    arrays["__meta__"] = np.frombuffer(meta_bytes, dtype=np.uint8)
    arrays["__digest__"] = np.frombuffer(_digest(arrays, meta_bytes).encode(), dtype=np.uint8)
    np.savez(dst, **arrays)
    return dst
