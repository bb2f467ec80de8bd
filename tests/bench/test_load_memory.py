"""Loading an ONNX model holds each weight at most twice at once (the decoded tensor and a
kernel's packed copy), not also the file's bytes and the protobuf's: the peak RSS of
engine_bench on a model of one 64 MiB MatMul weight grows by less than 2.5x the weight over
that of a model of the same graph with a tiny weight (before the loader freed the file's
bytes and each initializer's raw data once decoded, it grew by about 4x)."""
import os
import pathlib
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SOURCE = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(SOURCE / "bench"))

import compare_common  # noqa: E402

ENGINE_BENCH = os.environ["MINFER_ENGINE_BENCH"]


def matmul_model(path, n):
    w = numpy_helper.from_array(np.full((n, n), 0.5, np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])], [w])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def peak_rss_bytes(path):
    _, kib = compare_common.run_child([ENGINE_BENCH, "--model", str(path), "--num_runs", "1", "--warmup_runs", "0",
                                       "--peak_gflops", "100", "--bandwidth_gbs", "50", "--format", "json"])
    return kib * 1024


def test_loading_holds_a_weight_at_most_twice(tmp_path):
    n = 4096
    weight_bytes = n * n * 4
    matmul_model(tmp_path / "small.onnx", 64)
    matmul_model(tmp_path / "big.onnx", n)
    growth = peak_rss_bytes(tmp_path / "big.onnx") - peak_rss_bytes(tmp_path / "small.onnx")
    assert growth < 2.5 * weight_bytes, f"peak RSS grew by {growth / weight_bytes:.2f}x the weight's bytes"
