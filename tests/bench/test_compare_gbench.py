"""bench/compare_gbench.py: two stand-in benchmark binaries (scripts printing Google
Benchmark's JSON with fixed times), run alternately; per-case medians, ratios, the
geometric mean, and cases only one side has left out."""
import json
import os
import pathlib
import subprocess
import sys

SOURCE = pathlib.Path(os.environ.get("MINFER_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


def fake_benchmark(path, times):
    """A binary that prints `times` ({name: real_time}) and records the filter it got."""
    cases = [{"name": name, "real_time": t} for name, t in times.items()]
    path.write_text("#!/bin/sh\n"
                    f"echo \"$1\" >> {path}.calls\n"
                    f"cat <<'END'\n{json.dumps({'benchmarks': cases})}\nEND\n")
    path.chmod(0o755)
    return path


def test_medians_ratios_and_geometric_mean(tmp_path):
    before = fake_benchmark(tmp_path / "before", {"conv/a": 200.0, "conv/b": 100.0, "conv/old": 5.0})
    after = fake_benchmark(tmp_path / "after", {"conv/a": 100.0, "conv/b": 200.0, "conv/new": 5.0})
    out = subprocess.run([sys.executable, str(SOURCE / "bench" / "compare_gbench.py"), str(before), str(after),
                          "^conv/", "2"], capture_output=True, text=True, check=True).stdout
    assert "| conv/a | 200.0 | 100.0 | 0.500 |" in out
    assert "| conv/b | 100.0 | 200.0 | 2.000 |" in out
    assert "conv/old" not in out and "conv/new" not in out
    assert "geometric mean of after / before: 1.000" in out
    # Two rounds, each binary once per round, given the filter.
    for side in (before, after):
        assert pathlib.Path(f"{side}.calls").read_text().splitlines() == ["--benchmark_filter=^conv/"] * 2


def test_usage_without_arguments():
    done = subprocess.run([sys.executable, str(SOURCE / "bench" / "compare_gbench.py")], capture_output=True, text=True)
    assert done.returncode != 0 and "Usage" not in done.stdout and "BEFORE AFTER FILTER" in done.stderr
