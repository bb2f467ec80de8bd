"""Paths and helpers the Python tests share. ctest sets the environment (tests/CMakeLists.txt);
run by hand, the defaults are this checkout and its build/ folder."""
import json
import os
import pathlib
import subprocess

SOURCE = pathlib.Path(os.environ.get("MINFER_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
MODELS = SOURCE / "models"
BAD_MODELS = SOURCE / "tests" / "data" / "bad_models"
ENGINE_BENCH = pathlib.Path(os.environ.get("MINFER_ENGINE_BENCH", SOURCE / "build" / "bench" / "engine_bench"))
TORCH_MODELS = pathlib.Path(os.environ.get("MINFER_TORCH_MODELS", SOURCE / "build" / "torch_models"))

# Roofs given, not measured: the machine figures are then the same in every process.
MACHINE_FLAGS = ["--peak_gflops", "100", "--bandwidth_gbs", "10"]
MACHINE = {"peak_gflops": 100, "bandwidth_gbs": 10}

# Report and comparison keys whose values are measured times or derive from them.
TIMED_KEYS = {"latency_ms", "time_ms", "start_ms", "percent", "cdf_percent", "gflops_per_s", "gbytes_per_s",
              "flops_per_s", "roofline_fraction", "time_ms_after", "ms", "ms_ratio", "latency_ms_unprofiled",
              "init_ms", "time_percent", "depthwise_ms", "pointwise_ms",
              "stability", "noise"}  # the load average and the spread of the runs, and what follows from them
# The comparison's rows of measured figures.
TIMED_METRICS = {"latency_median_ms", "latency_mean_ms", "latency_min_ms", "gflops_per_s", "roofline_fraction"}


def without_times(document):
    """The document with every TIMED_KEYS entry removed, at any depth, and every op_types list in a fixed
    order (by type; in the document it is by time)."""
    if isinstance(document, dict):
        kept = {k: without_times(v) for k, v in document.items() if k not in TIMED_KEYS}
        if isinstance(kept.get("op_types"), list):
            kept["op_types"].sort(key=lambda row: row["type"])
        return kept
    if isinstance(document, list):
        return [without_times(v) for v in document]
    return document


def comparison_without_times(document):
    """A comparison without its measured figures (without_times and the timed metrics)."""
    document = without_times(document)
    document["metrics"] = [m for m in document["metrics"] if m["key"] not in TIMED_METRICS]
    return document


def engine_bench(*args):
    """Runs engine_bench; returns (exit status, stdout, stderr)."""
    r = subprocess.run([str(ENGINE_BENCH), *map(str, args)], capture_output=True, text=True, timeout=600)
    return r.returncode, r.stdout, r.stderr


def engine_bench_json(*args):
    status, out, err = engine_bench(*args, "--format", "json", *MACHINE_FLAGS)
    assert status == 0, err
    return json.loads(out)
