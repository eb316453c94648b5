"""Embedded datasets: shapes, labels, determinism, CSV loading and its errors."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.datasets as skd

from primaldual.datasets import (
    DATASET_TASKS,
    DATASETS,
    RIPLEY_CENTRES,
    RIPLEY_SD,
    DatasetFileNotFoundError,
    load_csv,
    load_dataset,
    ripley,
    sinc,
    train_test_split_seeded,
    two_spirals,
)

EXPECTED_SHAPES = {
    "iris": (150, 4), "wine": (178, 13), "breast_cancer": (569, 30), "diabetes": (442, 10),
    "two_spirals": (200, 2), "ripley": (250, 2), "sinc": (500, 1), "blobs": (200, 2),
    "moons": (200, 2), "circles": (200, 2), "classification": (1000, 20),
    "regression": (1000, 20), "amini": (6, 2), "amini_soft": (6, 2), "amini_kernel": (8, 2),
    "amini_kernel_soft": (8, 2),
}


@pytest.mark.parametrize("name", DATASETS)
def test_shapes_labels_and_standardisation(name):
    X, y = load_dataset(name)
    assert X.shape == EXPECTED_SHAPES[name] and y.shape == (X.shape[0],)
    assert X.dtype == np.float64 and np.all(np.isfinite(X)) and np.all(np.isfinite(y))
    task = DATASET_TASKS[name]
    if task == "binary":
        assert set(np.unique(y)) == {-1.0, 1.0}
    elif task == "multiclass":
        assert set(np.unique(y)) == {0, 1, 2}
    if name.startswith("amini"):   # the lecture's points, never standardised
        np.testing.assert_array_equal(X[0], [2.16, 2.94] if X.shape[0] == 6 else [0.92, -0.01])
        return
    np.testing.assert_allclose(X.mean(axis=0), 0.0, atol=1e-10)
    np.testing.assert_allclose(X.std(axis=0), 1.0, atol=1e-10)


@pytest.mark.parametrize("name", DATASETS)
def test_determinism(name):
    X1, y1 = load_dataset(name, random_state=3, standardize=False)
    X2, y2 = load_dataset(name, random_state=3, standardize=False)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    if name not in ("iris", "wine", "breast_cancer", "diabetes", "two_spirals") \
            and not name.startswith("amini"):
        X3, _ = load_dataset(name, random_state=4, standardize=False)
        assert not np.array_equal(X1, X3)


def test_bundled_match_sklearn():
    X, y = load_dataset("iris", standardize=False)
    ref = skd.load_iris()
    np.testing.assert_array_equal(X, ref.data)
    np.testing.assert_array_equal(y, ref.target)
    X, y = load_dataset("breast_cancer", standardize=False)
    ref = skd.load_breast_cancer()
    np.testing.assert_array_equal(X, ref.data)
    # malignant (sklearn target 0) -> -1, benign (1) -> +1
    assert list(ref.target_names) == ["malignant", "benign"]
    np.testing.assert_array_equal(y == -1, ref.target == 0)
    X, y = load_dataset("wine", n_samples=50, random_state=1)
    assert X.shape == (50, 13)
    with pytest.raises(ValueError, match="n_samples"):
        load_dataset("iris", n_samples=151)
    with pytest.raises(ValueError, match="noise"):
        load_dataset("iris", noise=0.1)


def test_generator_sizes_and_options():
    for name in ("two_spirals", "ripley", "sinc", "blobs", "moons", "circles",
                 "classification", "regression"):
        X, y = load_dataset(name, n_samples=61)
        assert X.shape[0] == 61 == y.shape[0]
    X, _ = load_dataset("classification", n_samples=50, n_features=7)
    assert X.shape == (50, 7)
    X, _ = load_dataset("blobs", n_samples=50, n_features=5)
    assert X.shape == (50, 5)
    with pytest.raises(ValueError, match="n_features"):
        load_dataset("sinc", n_features=3)
    with pytest.raises(ValueError, match="noise"):
        load_dataset("sinc", noise=-1.0)
    with pytest.raises(ValueError, match="n_samples"):
        load_dataset("ripley", n_samples=1)


def test_unknown_name_lists_allowed():
    with pytest.raises(ValueError, match="allowed") as exc:
        load_dataset("mnist")
    for name in DATASETS:
        assert name in str(exc.value)
    with pytest.raises(TypeError):
        load_dataset(42)


def test_two_spirals_geometry():
    # With 97 points per class this is the CMU two-spirals benchmark (Lang & Witbrock):
    # point i: angle i*pi/16, radius 6.5*(104-i)/104, class 2 = point reflection.
    X, y = two_spirals(n_samples=194)
    i = np.arange(97)
    r = 6.5 * (104 - i) / 104
    ref = np.column_stack([r * np.sin(i * np.pi / 16), r * np.cos(i * np.pi / 16)])
    np.testing.assert_allclose(X[y == 1], ref, atol=1e-12)
    np.testing.assert_allclose(X[y == -1], -ref, atol=1e-12)
    # no point of one class coincides with a point of the other (separable problem)
    d = np.linalg.norm(X[y == 1][:, None] - X[y == -1][None], axis=2)
    assert d.min() > 0.1


def test_ripley_mixture_statistics():
    X, y = ripley(n_samples=20000, random_state=0)
    assert np.sum(y == 1) == np.sum(y == -1) == 10000
    for label in (-1, 1):
        cent = np.asarray(RIPLEY_CENTRES[label])
        Xc = X[y == label]
        np.testing.assert_allclose(Xc.mean(axis=0), cent.mean(axis=0), atol=0.01)
        # x-coordinate: equal mixture of N(c1, sd^2) and N(c2, sd^2),
        # variance sd^2 + ((c1 - c2) / 2)^2
        half_gap = (cent[0, 0] - cent[1, 0]) / 2
        assert Xc[:, 0].var() == pytest.approx(RIPLEY_SD**2 + half_gap**2, rel=0.05)
    # y-coordinate within a class is a pure N(c_y, sd^2) (both centres share c_y)
    assert X[y == -1, 1].std() == pytest.approx(RIPLEY_SD, rel=0.03)
    assert X[y == 1, 1].std() == pytest.approx(RIPLEY_SD, rel=0.03)
    # default is 250 points as in Ripley's synth.tr
    assert load_dataset("ripley")[0].shape == (250, 2)


def test_sinc_formula_and_noise():
    X, y = sinc(n_samples=400, noise=0.0, random_state=1)
    x = X[:, 0]
    assert x.min() >= -10 and x.max() <= 10
    np.testing.assert_allclose(y, np.sin(x) / x, rtol=1e-12)
    Xn, yn = sinc(n_samples=4000, noise=0.1, random_state=2)
    resid = yn - np.sin(Xn[:, 0]) / Xn[:, 0]
    assert resid.std() == pytest.approx(0.1, rel=0.05)
    Xd, yd = load_dataset("sinc", n_samples=4000, random_state=2, standardize=False)
    np.testing.assert_allclose(np.std(yd - np.sinc(Xd[:, 0] / np.pi)), 0.1, rtol=0.05)


# ------------------------------------------------------------------ CSV


def test_csv_with_and_without_header(tmp_path):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((12, 4))
    p1 = tmp_path / "plain.csv"
    np.savetxt(p1, A, delimiter=",")
    X, y = load_csv(p1)
    np.testing.assert_allclose(X, A[:, :3])
    np.testing.assert_allclose(y, A[:, 3])
    p2 = tmp_path / "header.csv"
    np.savetxt(p2, A, delimiter=",", header="a,b,c,target", comments="")
    X2, y2 = load_dataset(str(p2), standardize=False)
    np.testing.assert_allclose(X2, A[:, :3])
    np.testing.assert_allclose(y2, A[:, 3])
    X3, _ = load_dataset(p2)  # a Path object works, standardised
    np.testing.assert_allclose(X3.mean(axis=0), 0.0, atol=1e-12)
    X4, y4 = load_dataset(str(p2), n_samples=5, random_state=0, standardize=False)
    assert X4.shape == (5, 3) and set(y4) <= set(A[:, 3])


def test_csv_errors(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        load_dataset(str(tmp_path / "missing.csv"))
    with pytest.raises(FileNotFoundError):
        load_dataset(str(tmp_path / "missing.csv"))
    assert issubclass(DatasetFileNotFoundError, ValueError)


@pytest.mark.parametrize("text, match", [
    ("x,y\n1,2\n3,abc\n", r"non-numeric cell 'abc' at row 3, column 2"),
    ("1\n2\n3\n", "at least 2 columns"),
    ("1,2,3\n4,5\n", "row 2 has 2 columns"),
    ("", "no data"),
    ("a,b\n", "no data"),
    ("1,2\nnan,3\n", "non-finite"),
])
def test_csv_content_errors(tmp_path, text, match):
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    with pytest.raises(ValueError, match=match):
        load_dataset(str(bad))


def test_train_test_split_seeded():
    X, y = load_dataset("breast_cancer")
    a = train_test_split_seeded(X, y, test_size=0.3, random_state=5)
    b = train_test_split_seeded(X, y, test_size=0.3, random_state=5)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)
    ytr, yte = a[2], a[3]
    assert abs(np.mean(ytr == 1) - np.mean(yte == 1)) < 0.02  # stratified
    Xr, yr = load_dataset("sinc", n_samples=100)
    Xtr, Xte, _, _ = train_test_split_seeded(Xr, yr, test_size=0.2)
    assert Xtr.shape == (80, 1) and Xte.shape == (20, 1)
