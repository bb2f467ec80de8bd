"""bench/op_minima.py: each op's fastest run folded over rounds, the per-model sums and
speed-up, the ops that moved; and the script end to end on a bundled model with the
built engine_bench as both sides."""
import os
import pathlib
import subprocess
import sys

SOURCE = pathlib.Path(os.environ.get("MINFER_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(SOURCE / "bench"))

import op_minima  # noqa: E402


def report(*ops):
    return {"ops": [{"name": name, "time_ms": {"min": ms, "median": ms * 2}} for name, ms in ops]}


def test_fold_keeps_each_ops_fastest_run():
    best = op_minima.fold({}, op_minima.op_minima(report(("conv", 2.0), ("relu", 0.5))))
    best = op_minima.fold(best, op_minima.op_minima(report(("conv", 1.5), ("relu", 0.7), ("add", 0.1))))
    assert best == {"conv": 1.5, "relu": 0.5, "add": 0.1}


def test_model_row_sums_and_divides():
    row = op_minima.model_row("/x/resnet18.onnx", {"a": 3.0, "b": 1.0}, {"a": 1.5, "b": 0.5})
    assert row == "| resnet18 | 4.00 | 2.00 | 2.00x |"


def test_changed_ops_only_past_the_fraction_and_in_order():
    before = {"a": 1.0, "b": 1.0, "c": 2.0, "gone": 1.0}
    after = {"a": 1.05, "b": 0.8, "c": 2.5}
    assert op_minima.changed_ops(before, after, 0.1) == [("b", 1.0, 0.8, 0.8), ("c", 2.0, 2.5, 1.25)]


def test_end_to_end_on_a_bundled_model():
    engine_bench = os.environ["MINFER_ENGINE_BENCH"]
    done = subprocess.run([sys.executable, str(SOURCE / "bench" / "op_minima.py"), engine_bench, engine_bench,
                           str(SOURCE / "models" / "small_cnn.json"), "--rounds", "1", "--runs", "2"],
                          capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    row = next(line for line in lines if line.startswith("| small_cnn |"))
    before, after = (float(cell) for cell in row.split("|")[2:4])
    assert before > 0 and after > 0
    assert "| model | before, ms | after, ms | speed-up |" in lines
