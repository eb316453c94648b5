"""Reading and checking a model file before anything is built from it: the regular file,
the zip directory, every ``.npy`` header, the declared widths, and the arrays and metadata
of a binary model against the schema. Anything wrong raises
:class:`~primaldual.exceptions.ModelFileError`."""

from __future__ import annotations

import io
import math
import os
import stat
import zipfile
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..exceptions import ModelFileError
from .format import _ARRAY_SCHEMA, _BAD_ZIP_FLAGS, _MIN_ROW_BYTES, SCHEMA_VERSION
from .sparse import CSR_PARTS


def _read_regular_file(path: str | os.PathLike, where: str, max_bytes: int) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``max_bytes``: opened
    without blocking (``O_NONBLOCK``) and checked with ``fstat`` on the open descriptor, so a
    named pipe, a device or a directory is refused instead of read forever."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except (OSError, ValueError, TypeError) as exc:
        raise ModelFileError(f"{where} cannot be read: {exc}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a named pipe"
                    if stat.S_ISFIFO(st.st_mode) else "a device"
                    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "a socket"
                    if stat.S_ISSOCK(st.st_mode) else "not a regular file")
            raise ModelFileError(f"{where} is {kind}; a model file must be a regular file")
        if st.st_size > max_bytes:
            raise ModelFileError(f"{where} is {st.st_size} bytes, more than "
                                 f"max_bytes={max_bytes}")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=True) as fh:
            fd = -1
            raw = fh.read(st.st_size + 1)
    except ModelFileError:
        raise
    except (OSError, ValueError) as exc:
        raise ModelFileError(f"{where} cannot be read: {exc}") from exc
    finally:
        if fd >= 0:
            os.close(fd)
    if len(raw) > max_bytes:
        raise ModelFileError(f"{where} grew beyond max_bytes={max_bytes} while being read")
    return raw


def _read_members(raw: bytes, where: str) -> dict[str, np.ndarray]:
    """The ``.npy`` members of an uncompressed zip, each header checked before its data."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(raw))
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError,
            RuntimeError, NotImplementedError) as exc:  # e.g. "zip file version 9.9"

        raise ModelFileError(f"{where} is not a readable primaldual model file (truncated or "
                             f"not an .npz): {exc}") from exc
    if len(infos) > 64:
        raise ModelFileError(f"{where} has {len(infos)} entries; a model file has at most 16")
    total = 0
    for info in infos:
        if info.flag_bits & _BAD_ZIP_FLAGS:
            raise ModelFileError(f"{where}: entry {info.filename!r} has zip flags "
                                 f"{info.flag_bits:#x} (encrypted or patched data); primaldual "
                                 "writes plain uncompressed .npz files")
        if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
            raise ModelFileError(f"{where}: entry {info.filename!r} is compressed; primaldual "
                                 "writes uncompressed .npz files (a compressed entry could "
                                 "expand without bound)")
        total += info.file_size
        if not info.filename.endswith(".npy") or info.file_size > len(raw) or total > len(raw):
            raise ModelFileError(f"{where}: entry {info.filename!r} (declared "
                                 f"{info.file_size} bytes) does not fit in a file of "
                                 f"{len(raw)} bytes")
    out: dict[str, np.ndarray] = {}
    for info in infos:
        name = info.filename[:-4]
        if name in out:
            raise ModelFileError(f"{where}: entry {name!r} appears twice")
        try:
            with zf.open(info) as fh:
                data = fh.read(info.file_size + 1)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError,
                NotImplementedError) as exc:
            raise ModelFileError(f"{where}: entry {name!r} is unreadable: {exc}") from exc
        if len(data) != info.file_size:
            raise ModelFileError(f"{where}: entry {name!r} has {len(data)} bytes, its directory "
                                 f"says {info.file_size}")
        out[name] = _parse_npy(data, name, where)
    return out


def _parse_npy(data: bytes, name: str, where: str) -> np.ndarray:
    fmt = np.lib.format
    fh = io.BytesIO(data)
    try:
        version = fmt.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(fh, max_header_size=10000)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = fmt.read_array_header_2_0(fh, max_header_size=10000)
        else:
            raise ValueError(f"unsupported .npy version {version}")
    except (ValueError, OSError, EOFError, SyntaxError, TypeError, RecursionError,
            MemoryError) as exc:
        raise ModelFileError(f"{where}: array {name!r} has a bad .npy header: {exc}") from exc
    if dtype.hasobject or dtype.kind not in "biuf" or dtype.fields is not None \
            or dtype.subdtype is not None:
        raise ModelFileError(f"{where}: array {name!r} has dtype {dtype}; only numeric arrays "
                             "are allowed")
    if len(shape) > 3 or any(not isinstance(s, int) or s < 0 for s in shape):
        raise ModelFileError(f"{where}: array {name!r} has an invalid shape {shape}")
    body = len(data) - fh.tell()
    if math.prod(shape) * dtype.itemsize != body:
        raise ModelFileError(f"{where}: array {name!r} declares shape {shape} of {dtype} "
                             f"({math.prod(shape) * dtype.itemsize} bytes) but holds {body}")
    arr = np.frombuffer(data, dtype=dtype, offset=fh.tell()).copy()
    return arr.reshape(shape, order="F" if fortran else "C")


def _check_widths(meta: Any, budget: int, where: str) -> None:
    """Every ``n_features_in`` the file declares (the model's and its sub-models') must be
    backed by the data present: the predict check reads one row of that many floats, so its
    bytes may not exceed ``budget`` (twice the file) or :data:`_MIN_ROW_BYTES`. A file of a
    few kB declaring ``n_features_in = 1e8`` is refused before anything is allocated."""
    if not isinstance(meta, dict):
        return
    metas = [meta]
    mc = meta.get("multiclass")
    if isinstance(mc, dict) and isinstance(mc.get("estimators"), list):
        metas += [m for m in mc["estimators"] if isinstance(m, dict)]
    limit = max(budget, _MIN_ROW_BYTES)
    for m in metas:
        nf = m.get("n_features_in")
        if isinstance(nf, int) and not isinstance(nf, bool) and 8 * nf > limit:
            raise ModelFileError(f"{where}: n_features_in = {nf} is not backed by the data in "
                                 f"the file ({limit // 2} bytes): one row of it would need "
                                 f"{8 * nf} bytes")


def _need(cond: bool, where: str, what: str) -> None:
    if not cond:
        raise ModelFileError(f"{where}: {what}")


def check_own_header(meta: dict, where: str, cls: type, name: str) -> dict:
    """The header fields every estimator's file shares: the schema version this library
    reads, ``params`` a JSON object of ``cls``'s own hyper-parameters only, ``n_features_in``
    a positive integer. Returns ``params``."""
    from .format import SCHEMA_VERSION

    _need(meta.get("schema_version") == SCHEMA_VERSION, where,
          f"has schema version {meta.get('schema_version')!r}; this primaldual reads version "
          f"{SCHEMA_VERSION}")
    params: Any = meta.get("params")
    _need(isinstance(params, dict), where, "params must be a JSON object")
    bad = sorted(set(params) - set(cls().get_params(deep=False)))
    _need(not bad, where, f"unknown hyper-parameter(s) {bad} for {name}")
    check_n_features(meta, where)
    return params


def check_n_features(meta: dict, where: str) -> int:
    """``n_features_in``: a positive integer (at most 1e8)."""
    nf: Any = meta.get("n_features_in")
    _need(isinstance(nf, int) and not isinstance(nf, bool) and 1 <= nf <= 10**8, where,
          "n_features_in must be a positive integer")
    return nf


#: the numpy dtype kinds a file's ``classes_dtype`` may name (``"ob"``: object labels, which
#: only a one-vs-one catalogue model keeps)
CLASS_DTYPES = ("in", "ui", "fl", "<U", "bo", "st", "|S")


def check_classes(meta: dict, where: str, kinds: tuple[str, ...] = CLASS_DTYPES) -> np.ndarray:
    """``classes``: a list of at least two labels in an allowed ``classes_dtype`` that holds
    them unchanged (:func:`_classes_array`). Returns the ``classes_`` array."""
    labels: Any = meta.get("classes")
    _need(isinstance(labels, list) and len(labels) >= 2
          and all(isinstance(c, (str, int, float)) for c in labels), where,
          "classes must be a list of at least two labels")
    _need(isinstance(meta.get("classes_dtype"), str) and meta["classes_dtype"][:2] in kinds,
          where, f"classes_dtype {meta.get('classes_dtype')!r} is not allowed")
    return _classes_array(labels, meta["classes_dtype"], where)


def _base_name(name: str) -> str:
    """The array a packed CSR part belongs to (``name`` itself when it is not a part)."""
    for suffix in CSR_PARTS:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_unit_numbers(u: dict, where: str, residual: str) -> None:
    """The numbers every iterative unit (a GP's Laplace mode, an RVM's evidence loop) stores:
    its ``log_marginal_likelihood`` (a number), its final ``residual`` (a number, or
    ``"inf"``/``"nan"`` as JSON writes them) and ``n_iter`` (an integer >= 0)."""
    _need(_is_num(u.get("log_marginal_likelihood")), where,
          "log_marginal_likelihood must be a number")
    _need(_is_num(u.get(residual)) or u.get(residual) in ("inf", "nan"), where,
          f"{residual} must be a number")
    n_iter: Any = u.get("n_iter")
    _need(isinstance(n_iter, int) and not isinstance(n_iter, bool) and n_iter >= 0, where,
          "n_iter must be an integer >= 0")


def _classes_array(labels: Any, dtype: str, where: str) -> np.ndarray:
    """The fitted ``classes_``: unique labels that survive their stored dtype unchanged (a
    ``'<U1'`` dtype would truncate ``'ab'`` to ``'a'`` and merge classes silently)."""
    try:
        exact = np.asarray(labels)
        out = np.asarray(labels, dtype=dtype)
        same = out.shape == exact.shape and bool(np.all(out.astype(exact.dtype) == exact))
    except (TypeError, ValueError, OverflowError) as exc:
        raise ModelFileError(f"{where}: classes do not fit classes_dtype {dtype!r}") from exc
    _need(out.ndim == 1 and same, where,
          f"classes {exact.tolist()!r} are not representable in classes_dtype {dtype!r}")
    _need(np.unique(out).shape[0] == out.shape[0], where, "classes are not unique")
    return out


def check_array_schema(arrays: dict[str, Any], schema: dict[str, tuple[str, int]],
                       where: str) -> None:
    """Every array named in ``schema`` (``name -> (dtype kinds, ndim)``) and of that kind and
    dimension; a float array float64 (save writes no other: a narrower float is a forged or
    converted file) and finite."""
    for k, a in arrays.items():
        _need(k in schema, where, f"unexpected array {k!r}")
        kinds, ndim = schema[k]
        _need(a.dtype.kind in kinds and a.ndim == ndim, where,
              f"array {k!r} must be {ndim}-D of kind {kinds!r}, got {a.ndim}-D {a.dtype}")
        if a.dtype.kind == "f":
            _need(a.dtype == np.float64, where, f"array {k!r} must be float64, got {a.dtype}")
            vals = a.data if sp.issparse(a) else a
            _need(bool(np.all(np.isfinite(vals))), where, f"array {k!r} has non-finite values")


def check_finite_on_rows(predict: Any, n_features: int, points: np.ndarray, where: str,
                         what: str) -> None:
    """A loaded model's ``predict`` (any of its outputs) must be finite on a row of zeros and
    on its first 50 stored ``points``: a file whose kernel parameters are out of range (a
    forged degree, a width that overflows) is refused, naming ``what`` went non-finite."""
    rows = np.vstack([np.zeros((1, n_features)), np.asarray(points)[:50]])
    with np.errstate(all="ignore"):
        out = predict(rows)
    outs = out if isinstance(out, tuple) else (out,)
    if not all(np.all(np.isfinite(np.asarray(o, dtype=float))) for o in outs):
        raise ModelFileError(f"{where}: {what} is not finite: a non-finite value on its "
                             "stored rows (kernel parameters out of range?)")


def _check_arrays(arrays: dict[str, np.ndarray], meta: dict, where: str) -> None:
    d = meta["n_features_in"]
    check_array_schema(arrays, _ARRAY_SCHEMA, where)
    for k in ("support_vectors_", "dual_coef_", "support_", "beta_"):
        _need(k in arrays, where, f"array {k!r} is missing")
    n = arrays["beta_"].shape[0]
    n_sv = arrays["support_"].shape[0]
    _need(arrays["support_vectors_"].shape == (n_sv, d), where,
          f"support_vectors_ must have shape ({n_sv}, {d}), got "
          f"{arrays['support_vectors_'].shape}")
    _need(arrays["dual_coef_"].shape == (1, n_sv), where,
          "dual_coef_ and support_ differ in length (dual_coef_ must be (1, n_SV))")
    for k in ("alpha_", "alpha_star_"):
        if k in arrays:
            _need(arrays[k].shape == (n,), where, f"{k} must have length {n}")
    for k in ("support_", "free_support_", "bounded_support_"):
        if k in arrays:
            a = arrays[k]
            _need(a.size == 0 or (int(a.min()) >= 0 and int(a.max()) < n), where,
                  f"{k} indexes outside 0..{n - 1}")
    if "eta_" in arrays:
        V = arrays.get("lowrank__V")
        _need(V is not None and V.shape[1] == arrays["eta_"].shape[0], where,
              "eta_ and the low-rank factor differ in rank")


def _check_header(meta: Any, where: str, classes: dict[str, type]) -> None:
    """Schema version, model class and its hyper-parameter names (binary and multiclass)."""
    _need(meta.get("schema_version") == SCHEMA_VERSION, where,
          f"has schema version {meta.get('schema_version')!r}; this primaldual reads version "
          f"{SCHEMA_VERSION}")
    _need(isinstance(meta.get("class"), str) and meta["class"] in classes, where,
          f"names an unknown model class {meta.get('class')!r}; allowed: {sorted(classes)}")
    _need(isinstance(meta.get("params"), dict), where, "params must be a JSON object")
    allowed = set(classes[meta["class"]]().get_params(deep=False))
    bad = sorted(set(meta["params"]) - allowed)
    _need(not bad, where, f"unknown hyper-parameter(s) {bad} for {meta['class']}")


def _check_certificate(c: Any, where: str) -> None:
    """A stored certificate: objectives, gap and KKT residuals numbers, a status string."""
    _need(isinstance(c, dict), where, "certificate must be a JSON object")
    for k in ("primal_objective", "dual_objective", "duality_gap", "relative_gap"):
        _need(_is_num(c.get(k)) or c.get(k) in ("nan", "inf", "-inf"), where,
              f"certificate field {k!r} must be a number")
    _need(isinstance(c.get("kkt"), dict) and all(_is_num(v) or v in ("nan", "inf")
                                                  for v in c["kkt"].values()), where,
          "certificate kkt must map names to numbers")
    _need(isinstance(c.get("status"), str), where, "certificate status must be a string")
    _need(isinstance(c.get("extra", {}), dict), where, "certificate extra must be an object")


def check_kernel(d: Any, where: str, field: str = "kernel") -> None:
    """The stored kernel rebuilt by the kernel's own constructor, whose parameter checks
    (positive finite ``gamma``, an integer ``degree`` in ``[1, 1000]``, ...) decide; a
    refusal is a ``ModelFileError`` naming ``field`` and the parameter. Checked before any
    prediction: a forged poly degree of ``1e9`` whose kernel underflows to 0 predicts finite
    values and would pass a predict-based check."""
    from ..kernels import kernel_from_dict

    _need(isinstance(d, dict), where, f"{field} must be a JSON object")
    try:
        kernel_from_dict(d)
    except (ValueError, TypeError) as exc:
        raise ModelFileError(f"{where}: {field} {d.get('name')!r}: {exc}") from exc


def _check_meta(meta: Any, where: str, classes: dict[str, type]) -> None:
    _need(isinstance(meta, dict), where, "metadata is not a JSON object")
    _check_header(meta, where, classes)
    check_kernel(meta.get("kernel"), where)
    _need(_is_num(meta.get("intercept")) and math.isfinite(meta["intercept"]), where,
          "intercept must be a finite number")
    nf = meta.get("n_features_in")
    _need(isinstance(nf, int) and not isinstance(nf, bool) and 1 <= nf <= 10**8, where,
          "n_features_in must be a positive integer")
    classifier = getattr(classes[meta["class"]], "_task", None) == "classification"
    _need((meta.get("classes") is not None) == classifier, where,
          f"classes must be {'a list of two labels' if classifier else 'null'} for "
          f"{meta['class']}")
    if meta.get("classes") is not None:
        _need(isinstance(meta["classes"], list) and len(meta["classes"]) == 2
              and all(isinstance(c, (str, int, float)) for c in meta["classes"]), where,
              "classes must be a list of two labels")
        _need(isinstance(meta.get("classes_dtype"), str) and meta["classes_dtype"][:2]
              in ("in", "ui", "fl", "<U", "bo", "st", "|S", "ob"), where,
              f"classes_dtype {meta.get('classes_dtype')!r} is not allowed")
    _check_certificate(meta.get("certificate"), where)
    _need(meta.get("backend") is None or isinstance(meta["backend"], str), where,
          "backend must be a string")
    _need(meta.get("lowrank") is None or isinstance(meta["lowrank"], dict), where,
          "lowrank must be a JSON object")
