"""minfer.load and Model.run: outputs against PyTorch's, the load keywords, feeds, threads."""
import inspect
import threading

import numpy as np
import pytest

import minfer
from python_test_util import MODELS, TORCH_MODELS

TORCH_CASES = ["mobilenet_v2", "resnet18", "lstm", "tiny_decoder"]


def read_tensor(path):
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper

    proto = onnx.TensorProto()
    proto.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(proto)


@pytest.mark.parametrize("case", TORCH_CASES)
def test_outputs_match_pytorch(case):
    # scripts/export_torch_models.py (the ctest fixture torch_models_export) wrote each
    # model with PyTorch's own output for its input; engine_check's tolerances.
    folder = TORCH_MODELS / case
    x = read_tensor(folder / "test_data_set_0" / "input_0.pb")
    expected = read_tensor(folder / "test_data_set_0" / "output_0.pb")
    model = minfer.load(folder / "model.onnx")
    assert model.inputs == {"input": x.shape}
    assert model.outputs == {"output": expected.shape}
    y = model.run({"input": x})
    assert list(y) == ["output"]
    assert y["output"].dtype == np.float32 and y["output"].flags.c_contiguous
    np.testing.assert_allclose(y["output"], expected, rtol=1e-3, atol=1e-5)


def test_blocked_layout_keyword_keeps_the_outputs():
    # ResNet-18 runs its convolutions in NCHWc regions on AVX2 and AVX-512 (Reorder steps
    # at their edges); blocked_layout=False keeps every tensor NCHW. Same outputs.
    folder = TORCH_MODELS / "resnet18"
    x = read_tensor(folder / "test_data_set_0" / "input_0.pb")
    plain = minfer.load(folder / "model.onnx", blocked_layout=False)
    regions = minfer.load(folder / "model.onnx")
    assert not any(op["type"] == "Reorder" for op in plain.profile(runs=1, warmup=0).ops)
    np.testing.assert_allclose(regions.run({"input": x})["output"], plain.run({"input": x})["output"], rtol=1e-4,
                               atol=1e-5)


def test_conv_algorithm_keyword_chooses_winograd_or_direct_sums():
    # ResNet-18's 3x3 stride-1 layers run by Winograd on AVX2 and AVX-512 (conv_algorithm
    # "auto"); "direct" never. The MACs are the convolution's either way, the outputs
    # within rounding of each other and of PyTorch's.
    folder = TORCH_MODELS / "resnet18"
    x = read_tensor(folder / "test_data_set_0" / "input_0.pb")
    expected = read_tensor(folder / "test_data_set_0" / "output_0.pb")
    runs = {}
    for algorithm in ("auto", "direct", "winograd"):
        model = minfer.load(folder / "model.onnx", conv_algorithm=algorithm)
        profile = model.profile(runs=1, warmup=0)
        kernels = {op["details"].get("kernel") for op in profile.ops if op["type"] == "Conv"}
        runs[algorithm] = (profile.totals["macs"], kernels, model.run({"input": x})["output"])
    simd = minfer.load(folder / "model.onnx").profile(runs=1, warmup=0).json["kernel_isa"] != "scalar"
    assert ("blocked_winograd" in runs["auto"][1]) == simd
    assert "blocked_winograd" not in runs["direct"][1]
    assert runs["auto"][0] == runs["direct"][0] == runs["winograd"][0]
    for _, _, y in runs.values():
        np.testing.assert_allclose(y, expected, rtol=1e-3, atol=1e-5)
    with pytest.raises(minfer.ModelError, match=r"^conv_algorithm 'fft': must be one of auto, direct, winograd$"):
        minfer.load(folder / "model.onnx", conv_algorithm="fft")


def test_inputs_and_outputs_are_named_with_their_shapes():
    model = minfer.load(MODELS / "small_cnn.json")
    assert model.inputs == {"image": (1, 3, 32, 32)}
    assert model.outputs == {"prob": (1, 10)}
    batch = minfer.load(MODELS / "small_cnn.json", input_shapes={"image": [4, 3, 32, 32]})
    assert batch.inputs == {"image": (4, 3, 32, 32)}
    assert batch.outputs == {"prob": (4, 10)}


def test_any_numeric_array_gives_the_float32_result():
    model = minfer.load(MODELS / "small_cnn.json")
    x = np.random.default_rng(0).random((1, 3, 32, 32), dtype=np.float32)
    expected = model.run({"image": x})["prob"]
    fortran = np.asfortranarray(x)
    strided = np.repeat(x, 2, axis=3)[..., ::2]
    for feed in (x.astype(np.float64), fortran, strided, x.tolist()):
        np.testing.assert_array_equal(model.run({"image": feed})["prob"], expected)
    np.testing.assert_array_equal(model.run(x)["prob"], expected)  # one input: the array alone
    # Each row of a softmax classifier sums to 1: the output is computed, not left as zeros.
    assert expected.sum() == pytest.approx(1, abs=1e-5)


def test_wrong_feeds_are_refused_naming_the_input():
    model = minfer.load(MODELS / "small_cnn.json")
    source = str(MODELS / "small_cnn.json")
    x = np.zeros((1, 3, 32, 32), np.float32)
    cases = [
        ({"image": np.zeros((3, 32, 32), np.float32)},
         f"{source}: input 'image' has shape 3x32x32, the model takes 1x3x32x32"),
        ({"image": x.astype(np.complex64)}, "input 'image': values of dtype complex64 are not real numbers"),
        ({"image": np.array(["a"])}, "input 'image': values of dtype <U1 are not real numbers"),
        ({}, f"{source}: input 'image' is not given"),
        ({"image": x, "extra": x}, f"{source}: 'extra' is not a graph input"),
    ]
    for feeds, message in cases:
        with pytest.raises(minfer.ModelError) as error:
            model.run(feeds)
        assert str(error.value) == message
    assert issubclass(minfer.ModelError, ValueError)


def test_two_threads_at_once_give_the_sequential_results():
    # Each thread runs its own input over and over; a session shared between them would
    # mix the two inputs' activations.
    model = minfer.load(MODELS / "mobilenet_v2_1_0.json")
    rng = np.random.default_rng(1)
    inputs = [rng.random((1, 3, 224, 224), dtype=np.float32) for _ in range(2)]
    expected = [model.run(x)["prob"] for x in inputs]
    assert not np.array_equal(expected[0], expected[1])
    start = threading.Barrier(2)
    results = [[], []]

    def work(k):
        start.wait()
        for _ in range(6):
            results[k].append(model.run(inputs[k])["prob"])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(2):
        assert len(results[k]) == 6
        for y in results[k]:
            np.testing.assert_array_equal(y, expected[k])


def test_load_takes_every_run_wide_choice_of_engine_bench():
    keywords = inspect.signature(minfer.load).parameters
    for name, values in minfer._minfer.attribute_choices():
        assert name in keywords, f"load() lacks the keyword of --{name}"


def test_load_keywords_change_what_runs():
    # README: the decoder's MACs by each ConvTranspose method.
    decoder = MODELS / "deconv_decoder.json"
    assert minfer.load(decoder, deconv_method="col2im").profile(runs=1, warmup=0).totals["macs"] == 71_892_992
    assert minfer.load(decoder, deconv_method="conv").profile(runs=1, warmup=0).totals["macs"] == 282_656_768
    lstm = minfer.load(MODELS / "lstm.json", lstm_plan="fused").profile(runs=1, warmup=0)
    assert {op["kind"] for op in lstm.ops if op["type"] == "LSTM"} == {"fused"}
    kept = minfer.load(MODELS / "mobilenet_v1.json", fold_bn=False).profile(runs=1, warmup=0)
    folded = minfer.load(MODELS / "mobilenet_v1.json").profile(runs=1, warmup=0)
    assert sum(op["type"] == "BatchNormalization" for op in kept.ops) == 27
    assert sum(op["type"] == "BatchNormalization" for op in folded.ops) == 0
    with pytest.raises(minfer.ModelError, match=r"^deconv_method 'fft': must be one of col2im, conv$"):
        minfer.load(decoder, deconv_method="fft")
    with pytest.raises(minfer.ModelError, match=r"^max_memory '12X': expected a positive number of bytes"):
        minfer.load(decoder, max_memory="12X")
    with pytest.raises(minfer.ModelError, match=r"^num_threads must be at least 1, got 0$"):
        minfer.load(decoder, num_threads=0)


def conv_pool_model(path):
    """An ONNX file of x [batch, 3, h, w] (dynamic batch and size) -> 1x1 Conv to 4 channels
    -> Relu -> GlobalAveragePool -> Flatten [batch, 4], and its weights [4, 3]."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    w = np.random.default_rng(3).standard_normal((4, 3, 1, 1)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["g"]), helper.make_node("Flatten", ["g"], ["y"])]
    graph = helper.make_graph(nodes, "dynamic", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                               ["batch", 3, "h", "w"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
                              [numpy_helper.from_array(w, "w")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return w[:, :, 0, 0]


def test_dynamic_dimensions_compile_for_the_shapes_each_run_feeds(tmp_path):
    path = tmp_path / "dynamic.onnx"
    w = conv_pool_model(path)
    model = minfer.load(path)
    assert model.inputs == {"x": (None, 3, None, None)}
    with pytest.raises(minfer.ModelError, match=r"input 'x' has dynamic dimensions; run the model once, or load it "
                                                r"with input_shapes="):
        model.outputs
    rng = np.random.default_rng(4)
    for shape in [(1, 3, 5, 7), (2, 3, 4, 4), (1, 3, 5, 7)]:
        x = rng.standard_normal(shape).astype(np.float32)
        expected = np.maximum(np.einsum("oc,nchw->nohw", w, x), 0).mean(axis=(2, 3))
        y = model.run(x)["y"]
        np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)
        assert model.outputs == {"y": (shape[0], 4)}
    # Profiled at the last run's shapes: 1 x 5 x 7 pixels x 3 x 4 MACs.
    assert model.profile(runs=1, warmup=0).totals["macs"] == 35 * 12
    with pytest.raises(minfer.ModelError) as error:
        model.run(np.zeros((1, 4, 5, 5), np.float32))
    assert str(error.value) == f"{path}: input 'x' has shape 1x4x5x5, the model takes ?x3x?x?"
    fixed = minfer.load(path, input_shapes={"x": (2, 3, 8, 8)})
    assert fixed.inputs == {"x": (2, 3, 8, 8)} and fixed.outputs == {"y": (2, 4)}


def test_int64_inputs_take_integer_arrays_and_outputs_keep_their_type(tmp_path):
    # Token ids into an embedding table (Gather), as an nn.Embedding exports, and outputs
    # of the other element types: ArgMax's int64 and Greater's bool.
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    table = np.random.default_rng(5).standard_normal((6, 4)).astype(np.float32)
    nodes = [helper.make_node("Gather", ["table", "ids"], ["emb"]),
             helper.make_node("ArgMax", ["emb"], ["best"], axis=-1, keepdims=0),
             helper.make_node("Greater", ["emb", "zero"], ["positive"])]
    graph = helper.make_graph(nodes, "embedding", [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 3])],
                              [helper.make_tensor_value_info("emb", TensorProto.FLOAT, [2, 3, 4]),
                               helper.make_tensor_value_info("best", TensorProto.INT64, [2, 3]),
                               helper.make_tensor_value_info("positive", TensorProto.BOOL, [2, 3, 4])],
                              [numpy_helper.from_array(table, "table"),
                               numpy_helper.from_array(np.zeros((), np.float32), "zero")])
    path = tmp_path / "embedding.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    model = minfer.load(path)
    ids = np.array([[5, 0, 2], [1, 1, 4]])
    for feed in (ids, ids.astype(np.int32), ids.astype(np.uint8).T.copy().T):
        y = model.run({"ids": feed})
        assert y["emb"].dtype == np.float32 and y["best"].dtype == np.int64 and y["positive"].dtype == np.bool_
        np.testing.assert_array_equal(y["emb"], table[ids])
        np.testing.assert_array_equal(y["best"], table[ids].argmax(-1))
        np.testing.assert_array_equal(y["positive"], table[ids] > 0)
    with pytest.raises(minfer.ModelError) as error:
        model.run({"ids": ids.astype(np.float32)})  # 1.5 would become 1
    assert str(error.value) == f"{path}: input 'ids' is int64; an array of float32 is not converted to it"
    with pytest.raises(minfer.ModelError) as error:
        model.run({"ids": ids + 6})
    assert str(error.value) == f"{path}: node 'Gather_0' (Gather): index 11 is out of range for axis of size 6"
    # Profiled on engine_bench's reproducible inputs: ids of 0 (random integers could index
    # past the table). Parameters: the table and Greater's zero.
    assert model.profile(runs=1, warmup=0).totals["params"] == 6 * 4 + 1
