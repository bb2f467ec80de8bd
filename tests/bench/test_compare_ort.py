"""bench/compare_ort.py and bench/compare_common.py on canned data and tiny models: parsing
run_ort.js's report, medians and ratios, the table, the output check, the inputs both sides
get and a child's peak RSS; and bench/ort/run_ort.js itself on a two-op ONNX model, and
bench/ort/without_avx512.py's copy of onnxruntime-node, when node and onnxruntime-node are
installed (bench/ort/setup.sh), skipped otherwise."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

SOURCE = pathlib.Path(os.environ.get("MINFER_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(SOURCE / "bench"))

import compare_common  # noqa: E402
import compare_ort  # noqa: E402

RUN_ORT = SOURCE / "bench" / "ort" / "run_ort.js"
HAVE_ORT = shutil.which("node") and (SOURCE / "bench" / "ort" / "node_modules" / "onnxruntime-node").is_dir()
needs_ort = pytest.mark.skipif(not HAVE_ORT, reason="node or onnxruntime-node missing: run bench/ort/setup.sh")


def test_parse_ort_report_takes_the_median_of_the_runs():
    ms, report = compare_ort.parse_ort_report('{"run_ms": [5.0, 1.0, 3.0, 100.0], "outputs": []}')
    assert ms == 4.0
    assert report["run_ms"][3] == 100.0
    with pytest.raises(ValueError, match="no timed runs"):
        compare_ort.parse_ort_report('{"run_ms": []}')


def test_summarize_takes_medians_over_rounds_and_the_largest_rss():
    rounds = {"minfer": [(2.0, 30 * 1024), (4.0, 31 * 1024), (3.0, 29 * 1024)],
              "ort": [(6.0, 90 * 1024), (5.0, 92 * 1024), (100.0, 91 * 1024)]}
    row = compare_ort.summarize("m", 2, rounds)
    assert row == {"model": "m", "threads": 2, "minfer_ms": 3.0, "minfer_rss_mib": 31.0, "ort_ms": 6.0,
                   "ort_rss_mib": 92.0, "ratio": 0.5}


def test_format_table_gives_one_row_per_model_and_thread_count():
    row = compare_ort.summarize("resnet18", 1, {"minfer": [(10.0, 2048)], "ort": [(8.0, 4096)]})
    row["max_abs_diff"], row["max_abs_output"] = 1.5e-6, 12.0
    table = compare_ort.format_table([row, {"model": "gru", "threads": 1, "note": "refused: op type 'GRU'"}])
    lines = table.splitlines()
    assert lines[0].startswith("| model | threads | minfer, ms | ONNX Runtime, ms | minfer / ORT |")
    assert lines[2] == "| resnet18 | 1 | 10.000 | 8.000 | **1.250** | 1.5e-06 (12) | 2 | 4 |"
    assert lines[3] == "| gru | 1 | refused: op type 'GRU' | | | | | |"
    assert all(line.count("|") == lines[0].count("|") for line in lines)


def test_max_abs_diff_and_disagreement():
    ours = {"y": np.array([[1.0, -2.0]], np.float32), "z": np.zeros(3, np.float32)}
    theirs = {"y": np.array([[1.5, -2.25]], np.float32), "z": np.array([0, 0, -4], np.float32)}
    assert compare_ort.max_abs_diff(ours, theirs) == (4.0, 4.0)
    assert compare_ort.disagreement(1e-6, 10.0) is None
    assert compare_ort.disagreement(0.0, 0.0) is None
    assert compare_ort.disagreement(1e-13, 1e-9) is None
    assert compare_ort.disagreement(1e-10, 1e-9) == "outputs differ: max abs diff 1e-10, largest |ORT output| 1e-09"
    assert compare_ort.disagreement(0.5, 10.0) == "outputs differ: max abs diff 0.5, largest |ORT output| 10"
    with pytest.raises(ValueError, match=r"output 'y': minfer shape \[1, 2\], ONNX Runtime \[2\]"):
        compare_ort.max_abs_diff({"y": ours["y"]}, {"y": np.zeros(2, np.float32)})
    with pytest.raises(ValueError, match="outputs differ"):
        compare_ort.max_abs_diff(ours, {"y": theirs["y"]})


def test_speedups_are_each_engines_one_thread_median_over_its_own():
    rows = {1: compare_ort.summarize("r", 1, {"minfer": [(10.0, 1)], "ort": [(12.0, 1)]}),
            2: compare_ort.summarize("r", 2, {"minfer": [(5.0, 1)], "ort": [(8.0, 1)]}),
            4: compare_ort.summarize("r", 4, {"minfer": [(4.0, 1)], "ort": [(3.0, 1)]})}
    speedups = compare_ort.speedup_rows("r", rows)
    assert speedups == [{"model": "r", "threads": 2, "minfer": 2.0, "ort": 1.5},
                        {"model": "r", "threads": 4, "minfer": 2.5, "ort": 4.0}]
    assert compare_ort.speedup_rows("r", {2: rows[2]}) == []  # no one-thread row to compare with
    assert compare_ort.format_speedups(speedups).splitlines()[2] == "| r | 2 | **2.00x** | 1.50x |"


def test_alternate_reverses_the_order_every_other_round():
    calls = []
    figures = compare_common.alternate(3, {"a": lambda: calls.append("a") or len(calls),
                                           "b": lambda: calls.append("b") or len(calls)})
    assert calls == ["a", "b", "b", "a", "a", "b"]
    assert figures == {"a": [1, 4, 5], "b": [2, 3, 6]}


def tiny_model(path):
    """y = x * w + b over x [batch, 4] with a symbolic batch; w is also listed as a graph input
    (older exporters do that with initializers), which is not one to feed."""
    w = numpy_helper.from_array(np.array([1, -2, 0.5, 4], np.float32), "w")
    b = numpy_helper.from_array(np.array([0.25], np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "w"], ["t"]), helper.make_node("Add", ["t", "b"], ["y"])], "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])], [w, b])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return lambda x: x * np.array([1, -2, 0.5, 4], np.float32) + np.float32(0.25)


def test_inputs_are_the_model_inputs_seeded_and_written_for_node(tmp_path):
    tiny_model(tmp_path / "tiny.onnx")
    specs = compare_ort.input_specs(str(tmp_path / "tiny.onnx"))
    assert specs == [("x", [1, 4])]
    feeds, manifest = compare_ort.write_inputs(specs, str(tmp_path / "in"))
    again, _ = compare_ort.write_inputs(specs, str(tmp_path / "again"))
    np.testing.assert_array_equal(feeds["x"], again["x"])
    assert feeds["x"].dtype == np.float32 and np.all((feeds["x"] >= 0) & (feeds["x"] < 1))
    assert json.loads(pathlib.Path(manifest).read_text()) == [{"name": "x", "dims": [1, 4], "file": "input_0.f32"}]
    np.testing.assert_array_equal(np.fromfile(tmp_path / "in" / "input_0.f32", np.float32), feeds["x"].ravel())


def test_run_child_reports_the_childs_own_peak_rss_and_its_first_error_line():
    big = "b = bytearray(200 << 20); print('done')"
    small = "print('done')"
    out, rss_big = compare_common.run_child([sys.executable, "-c", big])
    assert out == "done\n"
    _, rss_small = compare_common.run_child([sys.executable, "-c", small])
    assert rss_big - rss_small > 190 * 1024  # KiB
    with pytest.raises(compare_common.ChildError, match="^first$"):
        compare_common.run_child([sys.executable, "-c", "import sys; sys.stderr.write('\\nfirst\\nsecond\\n'); "
                                  "sys.exit(3)"])


def test_run_child_pins_the_child_to_the_cpus_given():
    show = "import os; print(sorted(os.sched_getaffinity(0)))"
    cpu = max(os.sched_getaffinity(0))
    out, _ = compare_common.run_child([sys.executable, "-c", show], cpus=str(cpu))
    assert out == f"[{cpu}]\n"
    out, _ = compare_common.run_child([sys.executable, "-c", show])
    assert out == f"{sorted(os.sched_getaffinity(0))}\n"


@needs_ort
def test_run_ort_runs_the_model_and_writes_its_outputs(tmp_path):
    reference = tiny_model(tmp_path / "tiny.onnx")
    feeds, manifest = compare_ort.write_inputs([("x", [3, 4])], str(tmp_path / "in"))
    out = subprocess.run(["node", str(RUN_ORT), "--model", str(tmp_path / "tiny.onnx"), "--inputs", manifest,
                          "--threads", "2", "--runs", "4", "--warmup", "1", "--outputs", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    ms, report = compare_ort.parse_ort_report(out)
    assert len(report["run_ms"]) == 4 and ms > 0
    assert report["threads"] == 2 and report["warmup"] == 1 and report["spinning"] == 0
    outputs = compare_ort.read_ort_outputs(report)
    assert list(outputs) == ["y"]
    np.testing.assert_allclose(outputs["y"], reference(feeds["x"]), rtol=1e-6)


@needs_ort
@pytest.mark.parametrize("args, message", [
    (["--threads", "0"], "--threads '0': expected a whole number >= 1"),
    (["--spinning", "2"], "--spinning '2': expected 0 or 1"),
    (["--bogus", "1"], "unknown argument '--bogus'"),
    (["--inputs", "missing.json"], "no such file"),
])
def test_run_ort_bad_arguments_are_one_line_and_no_output(tmp_path, args, message):
    tiny_model(tmp_path / "tiny.onnx")
    _, manifest = compare_ort.write_inputs([("x", [1, 4])], str(tmp_path / "in"))
    cmd = ["node", str(RUN_ORT), "--model", str(tmp_path / "tiny.onnx"), "--inputs", manifest] + args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 1
    assert r.stdout == ""
    assert len(r.stderr.splitlines()) == 1 and message in r.stderr, r.stderr


@needs_ort
def test_without_avx512_copy_reads_xcr0_as_7_and_runs_the_same(tmp_path):
    sys.path.insert(0, str(SOURCE / "bench" / "ort"))
    import without_avx512
    lib = pathlib.Path("node_modules", "onnxruntime-node", "bin", "napi-v6", "linux", "x64", "libonnxruntime.so.1")
    original = SOURCE / "bench" / "ort" / lib
    before = original.read_bytes()
    script = [sys.executable, str(SOURCE / "bench" / "ort" / "without_avx512.py"), str(tmp_path / "ort")]
    r = subprocess.run(script, capture_output=True, text=True, timeout=300, check=True)
    offsets = without_avx512.xgetbv_offsets(str(original))
    assert offsets and f"with {len(offsets)} xgetbv reading XCR0 = 7" in r.stdout
    copy = (tmp_path / "ort" / lib).read_bytes()
    assert original.read_bytes() == before and len(copy) == len(before)
    expected = bytearray(before)
    for offset in offsets:
        assert before[offset:offset + 3] == b"\x0f\x01\xd0"
        expected[offset:offset + 3] = b"\xb0\x07\x90"  # mov al, 7; nop
    assert copy == bytes(expected)
    assert not (tmp_path / "ort" / "node_modules" / "onnxruntime-node" / "bin" / "napi-v6" / "win32").exists()

    reference = tiny_model(tmp_path / "tiny.onnx")
    feeds, manifest = compare_ort.write_inputs([("x", [3, 4])], str(tmp_path / "in"))
    out = subprocess.run(["node", str(tmp_path / "ort" / "run_ort.js"), "--model", str(tmp_path / "tiny.onnx"),
                          "--inputs", manifest, "--runs", "1", "--outputs", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    _, report = compare_ort.parse_ort_report(out)
    np.testing.assert_allclose(compare_ort.read_ort_outputs(report)["y"], reference(feeds["x"]), rtol=1e-6)
    again = subprocess.run(script, capture_output=True, text=True, timeout=60)
    assert again.returncode != 0 and "already exists" in again.stderr


def test_op_times_table_sorts_by_time_with_shares():
    import ort_op_times
    text = ort_op_times.table("engine", {"Add": 1.0, "Conv/pointwise": 3.0})
    assert text.splitlines() == ["engine: 4.000 ms", "| op type | ms | % |", "| --- | ---: | ---: |",
                                 "| Conv/pointwise | 3.000 | 75.0 |", "| Add | 1.000 | 25.0 |"]


@needs_ort
def test_op_times_reads_onnx_runtimes_profile_by_op_type(tmp_path):
    import ort_op_times
    tiny_model(tmp_path / "tiny.onnx")
    totals = ort_op_times.ort_by_type(ort_op_times.ort_nodes(str(tmp_path / "tiny.onnx"), 1, 5, str(tmp_path)))
    assert set(totals) <= {"Mul", "Add"} and totals and all(ms > 0 for ms in totals.values())


def test_op_times_pairs_convolutions_by_output_and_macs():
    import ort_op_times
    # ORT's profile: a 1x1 Conv with an NCHWc output [1, 2 blocks, 7, 7, 16] and a 3x3 one of
    # the same output shape, times in ms per run.
    nodes = {"pw": ("Conv", [[1, 16, 7, 7], [32, 16, 1, 1]], [[1, 2, 7, 7, 16]], [0.5, 0.25, 0.3]),
             "k3": ("FusedConv", [[1, 16, 7, 7], [32, 16, 3, 3]], [[1, 32, 7, 7]], [2.0]),
             "add": ("Add", [[1, 32, 7, 7], [1, 32, 7, 7]], [[1, 32, 7, 7]], [0.1])}
    conv = lambda name, macs, ms: {"name": name, "type": "Conv", "kind": "", "details": {"kernel": "k"},
                                   "output_shape": [1, 32, 7, 7], "macs": macs, "time_ms": {"median": ms}}
    report = {"ops": [conv("ours3x3", 32 * 49 * 16 * 9, 3.0), conv("ours1x1", 32 * 49 * 16, 0.6),
                      conv("unpaired", 7, 1.0), {"name": "r", "type": "Relu"}]}
    rows = ort_op_times.conv_rows(nodes, report).splitlines()[2:]
    assert len(rows) == 3
    assert rows[0].startswith("| ours3x3 |") and rows[0].endswith("| 3.000 | 2.000 | 1.50 |")
    assert rows[1].startswith("| ours1x1 |") and rows[1].endswith("| 0.600 | 0.300 | 2.00 |")  # the median run
    assert rows[2].endswith("| 1.000 | unpaired | - |")
