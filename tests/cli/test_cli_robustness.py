"""Issue 27, items 9-11 at the command line: the model file keeps the CLI's preprocessing (so
``predict`` on raw rows equals what ``fit`` saw), non-regular paths are refused, sizes that
cannot fit in memory are refused with a message, and error messages name real flags."""

from __future__ import annotations

import os
import re
import threading

import numpy as np
import pytest

from primaldual.cli import main
from primaldual.persistence import load


@pytest.fixture(scope="module")
def bc_csv(tmp_path_factory):
    """150 rows of breast cancer, raw features (scales 1e-3 .. 1e3), label in the last column."""
    from sklearn.datasets import load_breast_cancer

    d = load_breast_cancer()
    rng = np.random.default_rng(0)
    idx = rng.choice(d.data.shape[0], 150, replace=False)
    path = tmp_path_factory.mktemp("bc") / "bc.csv"
    np.savetxt(path, np.column_stack([d.data[idx], np.where(d.target[idx] > 0, 1, -1)]),
               delimiter=",")
    return path


def test_cli_fit_save_then_predict_on_raw_csv_equals_training_accuracy(tmp_path, bc_csv,
                                                                         capsys):
    model = tmp_path / "bc.npz"
    assert main(["fit", "csvc", "--data", str(bc_csv), "--save", str(model)]) == 0
    out = capsys.readouterr().out
    train_acc = float(re.search(r"training accuracy: ([0-9.]+)", out).group(1))
    assert main(["predict", str(model), str(bc_csv)]) == 0
    cap = capsys.readouterr()
    pred = np.array([float(v) for v in cap.out.split()])
    pred_acc = float(re.search(r"accuracy against the last column: ([0-9.]+)",
                               cap.err).group(1))
    assert pred_acc == train_acc
    # independently: the model applied to the rows standardised with numpy
    data = np.loadtxt(bc_csv, delimiter=",")
    X, y = data[:, :-1], data[:, -1]
    sd = X.std(axis=0)
    sd[sd == 0] = 1.0
    m = load(model)
    np.testing.assert_array_equal(pred, m.predict((X - X.mean(axis=0)) / sd))
    assert np.mean(pred == y) == pytest.approx(train_acc, abs=5e-5)
    assert train_acc > 0.9  # not the "-1 everywhere" of the forgotten scaler (0.37)
    np.testing.assert_allclose(m.preprocessing_["mean"], X.mean(axis=0), rtol=1e-12)


def test_cli_model_without_standardisation_has_no_preprocessing(tmp_path, capsys):
    model = tmp_path / "r.npz"
    assert main(["fit", "csvc", "--data", "ripley", "--save", str(model)]) == 0
    capsys.readouterr()
    assert load(model).preprocessing_ is None


def test_cli_regression_target_message_names_a_real_command(tmp_path, capsys):
    rng = np.random.default_rng(0)
    path = tmp_path / "reg.csv"
    X = rng.normal(size=(30, 2))
    np.savetxt(path, np.column_stack([X, X[:, 0] + 0.1 * rng.normal(size=30)]), delimiter=",")
    assert main(["fit", "csvc", "--data", str(path)]) == 2
    err = capsys.readouterr().err
    assert "--method" not in err and "primaldual fit EpsilonSVR" in err


def test_cli_check_refuses_n_that_cannot_fit_in_memory(capsys):
    assert main(["check", "csvc", "--n", "100000000"]) == 2
    err = capsys.readouterr().err
    assert "argument --n" in err and "GiB" in err and "internal error" not in err


def test_cli_generator_refuses_n_samples_that_cannot_fit(capsys):
    assert main(["fit", "csvc", "--data", "classification", "--n-samples",
                 "2000000000"]) == 2
    err = capsys.readouterr().err
    assert "argument --n-samples" in err and "GiB" in err


def test_cli_check_memory_guard_reads_the_process_limit(monkeypatch, capsys):
    # a process limit (ulimit -v) of 64 MiB: n = 3000 needs 3 x 72 MB of n x n blocks
    import primaldual.validation as V

    monkeypatch.setattr(V, "_rlimit_available", lambda: 64 * 2**20)
    assert main(["check", "csvc", "--n", "3000"]) == 2
    assert "argument --n" in capsys.readouterr().err


def test_cli_refuses_a_directory_as_csv(tmp_path, capsys):
    d = tmp_path / "dir.csv"
    d.mkdir()
    assert main(["fit", "csvc", "--data", str(d)]) == 2
    assert "not a regular file" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_cli_refuses_named_pipes_for_model_and_csv(tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    saved = tmp_path / "m.npz"
    assert main(["fit", "csvc", "--data", "ripley", "--save", str(saved)]) == 0
    capsys.readouterr()
    res: dict = {}
    t = threading.Thread(target=lambda: res.setdefault(
        "codes", [main(["predict", str(fifo), str(fifo)]),
                  main(["predict", str(saved), str(fifo)]),
                  main(["fit", "csvc", "--data", str(fifo) + ".csv"])]), daemon=True)
    os.mkfifo(str(fifo) + ".csv")
    t.start()
    t.join(20)
    assert not t.is_alive(), "the CLI blocked on a named pipe"
    assert res["codes"] == [2, 2, 2]
    err = capsys.readouterr().err
    assert "internal error" not in err and err.count("not a regular file") + err.count(
        "named pipe") >= 3
