"""Every bundled model gives the outputs and the costs recorded before the op/kernel
refactor (issue 13): tests/data/recorded_models.json holds, per model, each op's MACs,
FLOPs, parameters and bytes moved after the default passes, and per instruction set, for
each output on fixed inputs, a SHA-256 of all its bytes, up to 256 evenly spaced values,
the sum and the sum of magnitudes.

Costs must be equal, but for the Reorders the layout pass places, which differ between
instruction sets (tests/engine/test_blocked_layout.cc checks them): left out. Outputs must
be bit-identical on a CPU with the recording's cache sizes (the GEMM's blocking follows
them, and with it the order of the sums); elsewhere the sampled values within 1e-4 of the
output's largest magnitude and the sum within 1e-4 of the sum of magnitudes.

    PYTHONPATH=build/python python3 tests/python/test_recorded_models.py --record FILE
re-records (only ever before a change meant to keep behaviour).
"""
import hashlib
import json
import math
import os
import pathlib
import sys

import numpy as np
import pytest

import minfer

SOURCE = pathlib.Path(os.environ.get("MINFER_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
RECORDING = SOURCE / "tests" / "data" / "recorded_models.json"
MODELS = sorted([*(SOURCE / "models").glob("*.json"), *(SOURCE / "models" / "seed").glob("*.json")])
COST_FIELDS = ("macs", "flops", "params", "bytes_read", "bytes_written")


def cache_sizes():
    """The CPU's cache sizes as sysfs lists them (what the GEMM's blocking reads)."""
    root = pathlib.Path("/sys/devices/system/cpu/cpu0/cache")
    return sorted(f"L{(d / 'level').read_text().strip()} {(d / 'type').read_text().strip()} "
                  f"{(d / 'size').read_text().strip()}" for d in root.glob("index*"))


def fixed_inputs(model):
    """Values in [0, 1) from a formula, the same on every machine."""
    feeds = {}
    for name, shape in model.inputs.items():
        n = math.prod(shape)
        i = np.arange(n, dtype=np.float64)
        feeds[name] = (0.5 + 0.5 * np.sin(0.37 * i + 0.11)).astype(np.float32).reshape(shape)
    return feeds


def observe(path):
    model = minfer.load(str(path))
    outputs = model.run(fixed_inputs(model))
    report = model.profile(runs=1, warmup=0, peak_gflops=100, bandwidth_gbs=10)
    ops = [{"name": op["name"], **{f: op[f] for f in COST_FIELDS}} for op in report.json["ops"]
           if op["type"] != "Reorder"]
    return outputs, ops, report.json["kernel_isa"]


def summary(value):
    flat = np.ascontiguousarray(value, dtype=np.float32).ravel()
    picks = np.unique(np.linspace(0, flat.size - 1, min(flat.size, 256)).round().astype(np.int64))
    return {"sha256": hashlib.sha256(flat.tobytes()).hexdigest(), "size": int(flat.size), "picks": picks.tolist(), "values": flat[picks].tolist(),
            "sum": float(flat.astype(np.float64).sum()), "abs_sum": float(np.abs(flat.astype(np.float64)).sum())}


def relative(path):
    return str(pathlib.Path(path).relative_to(SOURCE))


def record(target):
    recording = json.loads(pathlib.Path(target).read_text()) if pathlib.Path(target).exists() else {}
    for path in MODELS:
        outputs, ops, isa = observe(path)
        entry = recording.setdefault(relative(path), {"ops": ops, "outputs": {}})
        if entry["ops"] != ops:
            sys.exit(f"{path}: the costs differ between instruction sets")
        entry["outputs"][isa] = {name: summary(value) for name, value in outputs.items()}
    recording["cache_sizes"] = cache_sizes()
    pathlib.Path(target).write_text(json.dumps(recording, indent=1) + "\n")


@pytest.mark.parametrize("path", MODELS, ids=[relative(p) for p in MODELS])
def test_outputs_and_costs_are_as_recorded(path):
    recording = json.loads(RECORDING.read_text())
    entry = recording[relative(path)]
    outputs, ops, isa = observe(path)
    assert ops == entry["ops"]
    recorded = entry["outputs"][isa]
    assert set(outputs) == set(recorded)
    same_caches = recording["cache_sizes"] == cache_sizes()
    for name, value in outputs.items():
        want, got = recorded[name], summary(value)
        assert got["size"] == want["size"]
        difference = np.max(np.abs(np.asarray(got["values"]) - np.asarray(want["values"])))
        if same_caches:
            assert got["sha256"] == want["sha256"], \
                f"{name}: not bit-identical on {isa} (sampled values differ by up to {difference})"
        assert difference <= 1e-4 * max(np.max(np.abs(want["values"])), 1e-30), f"{name}: differs on {isa}"
        assert abs(got["sum"] - want["sum"]) <= 1e-4 * want["abs_sum"], f"{name}: sum differs on {isa}"


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "--record":
        sys.exit(__doc__)
    record(sys.argv[2])
