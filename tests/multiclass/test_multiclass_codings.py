"""Tests of the multiclass codings, decoding and the multiclass LS-SVM (docs/formulations.md 9)."""

import itertools
import math

import numpy as np
import pytest

from primaldual.backends import linsys as kkt
from primaldual.kernels import RBF
from primaldual.multiclass import code_matrix, decode, fit_lssvm_multiclass

CODINGS = ["moc", "ova", "ovo", "ecoc"]


# ----------------------------------------------------------------------------- code matrices


@pytest.mark.parametrize("m", [2, 3, 4, 5, 8, 10])
@pytest.mark.parametrize("coding", CODINGS)
def test_code_matrix_properties(m, coding):
    M = code_matrix(m, coding, random_state=0)
    assert M.shape[0] == m and set(np.unique(M)) <= {-1, 0, 1}
    # every class has its own codeword, and every output separates two non-empty groups
    assert len({tuple(r) for r in M}) == m
    assert np.all((M == 1).any(axis=0)) and np.all((M == -1).any(axis=0))
    expected = {"moc": max(1, math.ceil(math.log2(m))), "ova": m, "ovo": m * (m - 1) // 2,
                "ecoc": 2 ** (m - 1) - 1 if m <= 7 else math.ceil(10 * math.log2(m))}[coding]
    assert M.shape[1] == expected
    if coding != "ovo":
        assert np.all(M != 0)
    if coding == "ovo":
        assert np.all((M != 0).sum(axis=0) == 2)
        assert np.all((M != 0).sum(axis=1) == m - 1)
    if coding == "ova":
        assert np.array_equal(M, 2 * np.eye(m, dtype=int) - 1)


def test_ecoc_exhaustive_and_random_reproducible():
    M = code_matrix(4, "ecoc")
    assert M.shape == (4, 7) and len({tuple(c) for c in M.T}) == 7  # distinct columns
    # exhaustive code: rows at Hamming distance 2^(m-2) from each other
    D = (M.shape[1] - M.astype(int) @ M.T.astype(int)) // 2
    assert np.all(D[~np.eye(4, dtype=bool)] == 4)
    A = code_matrix(12, "ecoc", n_bits=20, random_state=3)
    B = code_matrix(12, "ecoc", n_bits=20, random_state=3)
    assert np.array_equal(A, B) and A.shape == (12, 20)


def test_code_matrix_bad_input():
    with pytest.raises(ValueError, match="n_classes"):
        code_matrix(1, "ova")
    with pytest.raises(TypeError, match="n_classes"):
        code_matrix(3.0, "ova")
    with pytest.raises(ValueError, match="coding"):
        code_matrix(3, "bogus")
    with pytest.raises(ValueError, match="n_bits"):
        code_matrix(3, "ova", n_bits=4)


# ----------------------------------------------------------------------------- decoding


@pytest.mark.parametrize("coding", CODINGS)
@pytest.mark.parametrize("method", ["hamming", "loss"])
def test_codewords_decode_to_their_class(coding, method):
    for m in (3, 5, 9):
        M = code_matrix(m, coding, random_state=1)
        scale = np.random.default_rng(m).uniform(0.5, 2.0, size=M.shape)
        assert np.array_equal(decode(M * scale, M, method=method), np.arange(m))


@pytest.mark.parametrize("seed", range(5))
def test_ovo_hamming_equals_max_wins_voting(seed):
    rng = np.random.default_rng(seed)
    m = 5
    M = code_matrix(m, "ovo")
    S = rng.standard_normal((200, M.shape[1]))
    S[rng.random(S.shape) < 0.05] = 0.0  # exact zeros: half a vote each way... as hamming
    votes = np.zeros((200, m))
    for col, (i, j) in enumerate(itertools.combinations(range(m), 2)):
        votes[:, i] += (S[:, col] > 0) + 0.5 * (S[:, col] == 0)
        votes[:, j] += (S[:, col] < 0) + 0.5 * (S[:, col] == 0)
    ref = np.argmax(votes, axis=1)  # argmax: first maximum = lowest class index on ties
    assert np.array_equal(decode(S, M, method="hamming"), ref)


def test_ties_go_to_lowest_class_index():
    M = code_matrix(4, "ova")
    S = np.array([[1.0, 1.0, -1.0, -1.0], [-1.0, -1.0, 1.0, 1.0], [-1.0, -1.0, -1.0, -1.0]])
    assert np.array_equal(decode(S, M), [0, 2, 0])
    M = code_matrix(3, "ovo")  # a 3-cycle: every class has one vote
    assert decode(np.array([[1.0, -1.0, 1.0]]), M)[0] == 0


def test_loss_decoding_options():
    rng = np.random.default_rng(0)
    M = code_matrix(6, "ecoc", n_bits=15, random_state=0)
    S = rng.standard_normal((50, 15))
    Mf = M.astype(float)
    ref = np.argmin(((1 - S[:, None, :] * Mf[None]) ** 2).sum(-1), axis=1)
    assert np.array_equal(decode(S, M, method="loss"), ref)
    ref = np.argmin(np.exp(-S[:, None, :] * Mf[None]).sum(-1), axis=1)
    assert np.array_equal(decode(S, M, method="loss", loss="exponential"), ref)
    assert np.array_equal(decode(S, M, method="loss", loss=lambda z: np.exp(-z)), ref)
    # with +-1 scores, hamming, linear loss and hinge loss agree
    Sb = np.sign(S)
    h = decode(Sb, M)
    assert np.array_equal(h, decode(Sb, M, method="loss", loss="linear"))
    assert np.array_equal(h, decode(Sb, M, method="loss", loss="hinge"))
    with pytest.raises(ValueError, match="loss"):
        decode(S, M, method="loss", loss="bogus")
    with pytest.raises(ValueError, match="scores"):
        decode(S[:, :3], M)
    with pytest.raises(ValueError, match="method"):
        decode(S, M, method="vote")


def test_dag_decoding_on_consistent_scores_equals_voting():
    rng = np.random.default_rng(2)
    m = 6
    M = code_matrix(m, "ovo")
    # scores from a latent per-class utility: pair (i, j) positive iff u_i > u_j
    U = rng.standard_normal((100, m))
    S = np.stack([U[:, i] - U[:, j] for i, j in itertools.combinations(range(m), 2)], axis=1)
    truth = np.argmax(U, axis=1)
    assert np.array_equal(decode(S, M, method="dag"), truth)
    assert np.array_equal(decode(S, M, method="hamming"), truth)
    with pytest.raises(ValueError, match="one-vs-one"):
        decode(S[:, :m], code_matrix(m, "ova"), method="dag")


# ----------------------------------------------------------------------------- multiclass LS-SVM


def blobs(seed, m=4, per=15, n=2):
    rng = np.random.default_rng(seed)
    centers = 4.0 * rng.standard_normal((m, n))
    X = np.vstack([c + rng.standard_normal((per, n)) for c in centers])
    y = np.repeat(np.arange(m), per)
    return X, y


def dense_bordered(K, C, s, d):
    N = K.shape[0]
    Mx = np.zeros((N + 1, N + 1))
    Mx[0, 1:] = s
    Mx[1:, 0] = s
    Mx[1:, 1:] = np.outer(s, s) * (K + np.eye(N) / C)
    sol = np.linalg.solve(Mx, np.r_[0.0, d])
    return sol[0], sol[1:]


@pytest.mark.parametrize("coding", CODINGS)
@pytest.mark.parametrize("seed", [0, 1])
def test_multiclass_outputs_equal_separate_binary_lssvms(coding, seed):
    X, y = blobs(seed)
    ker, C = RBF(gamma=0.3), 5.0
    model = fit_lssvm_multiclass(X, y, ker, C, coding, random_state=0)
    M = model.codes
    assert model.n_factors == (M.shape[1] if coding == "ovo" else 1)
    for col in range(M.shape[1]):
        labels = M[y, col].astype(float)
        rows = np.flatnonzero(labels != 0)
        b, a = dense_bordered(ker(X[rows]), C, labels[rows], np.ones(rows.size))
        assert abs(model.b[col] - b) < 1e-9
        assert np.max(np.abs(model.alpha[rows, col] - a)) < 1e-9
        assert np.all(model.alpha[labels == 0, col] == 0)
        assert np.allclose(model.beta[:, col], model.alpha[:, col] * labels)
        assert kkt.kkt_residual(X[rows], ker, C, labels[rows], np.ones(rows.size), model.b[col],
                                model.alpha[rows, col]) < 1e-10
    assert np.mean(model.predict(X) == y) > 0.9
    assert np.mean(model.predict(X, method="loss") == y) > 0.9


def test_multiclass_decision_function_and_bad_input():
    X, y = blobs(3, m=3)
    ker = RBF(gamma=0.3)
    model = fit_lssvm_multiclass(X, y, ker, 2.0, "ova")
    F = model.decision_function(X[:5])
    assert np.allclose(F, ker(X[:5], X) @ model.beta + model.b)
    codes = code_matrix(3, "ovo")
    m2 = fit_lssvm_multiclass(X, y, ker, 2.0, codes)
    assert np.array_equal(m2.predict(X, method="dag"), m2.predict(X)) or \
        np.mean(m2.predict(X, method="dag") == y) > 0.9
    with pytest.raises(ValueError, match="y_idx"):
        fit_lssvm_multiclass(X, y[:-1], ker, 1.0, "ova")
    with pytest.raises(TypeError, match="y_idx"):
        fit_lssvm_multiclass(X, y + 0.5, ker, 1.0, "ova")
    with pytest.raises(ValueError, match="codes"):
        fit_lssvm_multiclass(X, y, ker, 1.0, code_matrix(2, "ova"))
