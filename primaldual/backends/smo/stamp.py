"""One source stamp for numba's on-disk cache of the compiled SMO core's modules.

numba keys a function's cache by the stamp (modification time and size) of its own source file
only, so a cached caller keeps the code of a callee it was compiled with after that callee's
file changes (numba's documented limitation).  :func:`tie` gives every cached function of a
module one stamp of all the files the compiled core is made of: an edit of any of them
recompiles them all, as when the core was a single file."""

from __future__ import annotations

import os
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))

#: the sources of the compiled SMO core (and of the group SMO loop, which calls its columns)
FILES: tuple[str, ...] = tuple(os.path.normpath(os.path.join(_HERE, f)) for f in (
    "codes.py", "columns.py", "threads.py", "cache.py", "select.py", "shrink.py", "core.py",
    os.path.join("..", "gsmo", "core.py"), os.path.join("..", "..", "kernels", "_fastexp.py")))


def source_stamp() -> tuple:
    """``(mtime, size)`` of each of :data:`FILES` (``None`` for a missing one)."""
    out: list[tuple[float, int] | None] = []
    for f in FILES:
        try:
            st = os.stat(f)
        except OSError:
            out.append(None)
        else:
            out.append((st.st_mtime, st.st_size))
    return tuple(out)


def tie(namespace: dict[str, Any], own: str | None = None) -> None:
    """Give the numba cache of every compiled function in ``namespace`` (a module's
    ``globals()``, called after its definitions) :func:`source_stamp` instead of its own file's
    stamp; ``own``: the file of a module outside :data:`FILES` that calls into them (its stamp
    is added, so that an edit of it or of any of them recompiles it, and an edit of it alone
    leaves the core's cache as it is).  Where numba's cache object has another shape, nothing
    changes (numba's own stamp, only the file of each function)."""
    stamp = source_stamp()
    if own is not None:
        st = os.stat(own)
        stamp = (*stamp, (st.st_mtime, st.st_size))
    for obj in list(namespace.values()):
        cache_file = getattr(getattr(obj, "_cache", None), "_cache_file", None)
        if cache_file is not None and hasattr(cache_file, "_source_stamp"):
            cache_file._source_stamp = stamp
