#!/usr/bin/env python3
"""Hostile-input probes of engine_bench, engine_check and engine_convert beyond the
bad-input catalogue (tests/data/bad_models/catalogue.json). Each probe writes its inputs
into a fresh folder, runs one tool under `timeout 20` and checks the contract of a
refusal: exit 1 or 2, exactly one line on stderr starting '<tool>: ', nothing on stdout,
no file created or changed in the folder, no sanitizer report. A probe marked valid must
instead exit 0 (and engine_check cases carry their expected outputs, so PASS means the
values are right). Run with Debian's python3-onnx, after building the tools:

    /usr/bin/python3 scripts/red_team.py [BUILD_DIR] [-k SUBSTRING] [-v]

Prints one line per probe and a summary; exit status 1 if any probe broke the contract.
Defects it found are fixed and pinned in the catalogue; this script is how to look for
more."""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "models")
FAST = ["--peak_gflops", "100", "--bandwidth_gbs", "10", "--num_runs", "1", "--warmup_runs", "0"]


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "probe", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


def value(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def i64(name, vals, dims=None):
    return helper.make_tensor(name, TensorProto.INT64, [len(vals)] if dims is None else dims, vals)


def f32(name, dims, vals=None):
    n = int(np.prod(dims)) if dims else 1
    return helper.make_tensor(name, TensorProto.FLOAT, dims, [0.5] * n if vals is None else vals)


def one(op, inputs, attrs=None, x_shape=(1, 4), inits=(), extra_inputs=(), opset=13):
    """A model of one node 'n' reading graph input x (and initializers), writing y."""
    node = helper.make_node(op, inputs, ["y"], name="n", **(attrs or {}))
    return model([node], [value("x", list(x_shape))] + list(extra_inputs), [value("y", None)], inits, opset)


def netjson(text):
    return text.encode() if isinstance(text, str) else text


RELU_JSON = ('{"inputs": [{"name": "x", "shape": [1, 4]}], "outputs": ["y"], '
             '"nodes": [{"name": "relu", "op": "Relu", "inputs": ["x"], "outputs": ["y"]}]}')


def probes():
    """(name, files {relative path: bytes | None for a directory | ('link', target)},
    tool, args, valid). In args, {d} is the probe's folder."""
    P = []

    def bench(name, files, *args, valid=False, model_file=None):
        m = model_file or next(iter(files))
        P.append((name, files, "engine_bench", ["--model", "{d}/" + m, *FAST, *args], valid))

    def onnx_probe(name, data, *args, valid=False):
        bench(name, {"m.onnx": data}, *args, valid=valid)

    def json_probe(name, text, *args, valid=False):
        bench(name, {"m.json": netjson(text)}, *args, valid=valid)

    good = model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [value("x", [1, 4])], [value("y", None)])
    # --- protobuf level
    onnx_probe("pb_garbage_tag", b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")
    onnx_probe("pb_varint_overflow", b"\x08" + b"\xff" * 11)
    onnx_probe("pb_length_beyond_file", b"\x3a\xff\xff\xff\xff\x0f" + good)
    onnx_probe("pb_trailing_garbage", good + b"\x00\x00\x00")
    onnx_probe("pb_one_byte", b"\x3a")
    onnx_probe("pb_negative_ir", b"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01" + good[2:], valid=True)  # not newer
    m = onnx.load_from_string(good)
    m.graph.node[0].input[0] = "y"  # consumes its own output
    onnx_probe("self_loop", m.SerializeToString())
    m = onnx.load_from_string(good)
    m.graph.output.append(value("x", [1, 4]))
    onnx_probe("input_also_output", m.SerializeToString(), valid=True)
    m = onnx.load_from_string(good)
    m.graph.output.append(value("y", None))
    onnx_probe("output_listed_twice", m.SerializeToString(), valid=True)  # reported twice
    m = onnx.load_from_string(good)
    m.graph.initializer.append(f32("c", [2]))
    m.graph.output.append(value("c", [2]))
    onnx_probe("initializer_as_output", m.SerializeToString(), valid=True)
    m = onnx.load_from_string(good)
    m.graph.input.append(value("x", [1, 4]))
    onnx_probe("input_listed_twice", m.SerializeToString())
    m = onnx.load_from_string(good)
    m.graph.initializer.append(f32("x", [1, 4]))
    onnx_probe("initializer_shadows_input", m.SerializeToString(), valid=True)
    m = onnx.load_from_string(good)
    m.graph.node[0].output[0] = "x"
    m.graph.output[0].name = "x"
    onnx_probe("node_overwrites_input", m.SerializeToString())
    two = model([helper.make_node("Relu", ["b"], ["a"], name="r1"), helper.make_node("Relu", ["a"], ["b"], name="r2"),
                 helper.make_node("Add", ["x", "a"], ["y"], name="add")], [value("x", [4])], [value("y", None)])
    onnx_probe("two_node_cycle", two)
    # --- tensor data
    t = TensorProto(name="b", data_type=TensorProto.FLOAT, raw_data=b"\0" * 12)
    t.dims.extend([4])
    onnx_probe("raw_data_short", one("Add", ["x", "b"], x_shape=[4], inits=[t]))
    t = TensorProto(name="b", data_type=TensorProto.FLOAT, raw_data=b"\0" * 20)
    t.dims.extend([4])
    onnx_probe("raw_data_long", one("Add", ["x", "b"], x_shape=[4], inits=[t]))
    t = TensorProto(name="b", data_type=TensorProto.FLOAT)
    t.dims.extend([4, 0])
    onnx_probe("initializer_zero_dim", one("Add", ["x", "b"], x_shape=[4], inits=[t]))
    t = TensorProto(name="b", data_type=TensorProto.FLOAT)
    t.dims.extend([2**62, 2**62, 4])
    onnx_probe("initializer_dims_overflow", one("Add", ["x", "b"], x_shape=[4], inits=[t]))
    t = TensorProto(name="b", data_type=TensorProto.FLOAT, raw_data=b"\0" * 16)
    t.dims.extend([2**32, 2**32, 1])
    onnx_probe("initializer_dims_wrap_to_16", one("Add", ["x", "b"], x_shape=[4], inits=[t]))
    t = TensorProto(name="b", data_type=TensorProto.INT64, raw_data=b"\0" * 12)
    t.dims.extend([2])
    onnx_probe("int64_raw_odd", one("Reshape", ["x", "b"], inits=[t]))
    t = TensorProto(name="b", data_type=999)
    t.dims.extend([1])
    onnx_probe("unknown_data_type", one("Add", ["x", "b"], x_shape=[1], inits=[t]))
    t = TensorProto(name="b", data_type=TensorProto.FLOAT)
    t.dims.extend([1])
    t.float_data.extend([1.0])
    t.raw_data = b"\0\0\0\0"
    onnx_probe("both_raw_and_float_data", one("Add", ["x", "b"], x_shape=[1], inits=[t]))
    onnx_probe("nan_weights_check_numerics",
               one("Add", ["x", "b"], x_shape=[2], inits=[f32("b", [2], [1.0, float("nan")])]), "--check_numerics")
    onnx_probe("nan_weights_no_check", one("Add", ["x", "b"], x_shape=[2], inits=[f32("b", [2], [1.0, float("nan")])]),
               valid=True)
    onnx_probe("nan_alpha_check_numerics", one("LeakyRelu", ["x"], {"alpha": float("nan")}), "--check_numerics")
    onnx_probe("inf_alpha", one("LeakyRelu", ["x"], {"alpha": float("inf")}), valid=True)  # -inf where x < 0
    onnx_probe("nan_epsilon_bn",
               one("BatchNormalization", ["x", "s", "bb", "mu", "var"], {"epsilon": float("nan")}, x_shape=[1, 2, 2, 2],
                   inits=[f32("s", [2]), f32("bb", [2]), f32("mu", [2]), f32("var", [2])]), "--check_numerics")
    onnx_probe("negative_epsilon_bn",
               one("BatchNormalization", ["x", "s", "bb", "mu", "var"], {"epsilon": -1.0}, x_shape=[1, 2, 2, 2],
                   inits=[f32("s", [2]), f32("bb", [2]), f32("mu", [2]), f32("var", [2], [0.5, 0.5])]),
               "--check_numerics")
    onnx_probe("clip_nan_min", one("Clip", ["x"], {"min": float("nan")}, opset=6), "--check_numerics")
    # --- Conv family
    W = f32("W", [2, 3, 3, 3])

    def conv(name, attrs, x_shape=(1, 3, 8, 8), w=W, op="Conv", valid=False, extra=()):
        onnx_probe(name, one(op, ["x", "W", *extra], attrs, x_shape=x_shape, inits=[w]), valid=valid)

    conv("conv_group_0", {"group": 0})
    conv("conv_group_negative", {"group": -3})
    conv("conv_group_huge", {"group": 2**40})
    conv("conv_pads_negative", {"pads": [-1, -1, -1, -1]})
    conv("conv_pads_wrong_count", {"pads": [1, 1]})
    conv("conv_pads_huge", {"pads": [2**62, 0, 2**62, 0]})
    conv("conv_strides_negative", {"strides": [-1, 1]})
    conv("conv_dilation_negative", {"dilations": [-1, 1]})
    conv("conv_kernel_shape_mismatch", {"kernel_shape": [5, 5]})
    conv("conv_kernel_bigger_padded_ok", {"pads": [1, 1, 1, 1]}, x_shape=(1, 3, 1, 1), valid=True)
    conv("conv_auto_pad_bogus", {"auto_pad": "SAME_MIDDLE"})
    conv("conv_auto_pad_same_and_pads", {"auto_pad": "SAME_UPPER", "pads": [1, 1, 1, 1]}, valid=True)  # as onnxruntime
    conv("conv_1d_weights", {}, w=f32("W", [2, 3]))
    conv("conv_rank3_input", {}, x_shape=(3, 8, 8))
    conv("conv_bias_wrong_len", {}, extra=["B"])
    onnx_probe("conv_bias_wrong_len2", one("Conv", ["x", "W", "B"], {}, x_shape=(1, 3, 8, 8), inits=[W, f32("B", [3])]))
    conv("conv_weights_zero_out", {}, w=TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[0, 3, 3, 3]))
    conv("deconv_output_padding_eq_stride", {"strides": [2, 2], "output_padding": [2, 2]}, w=f32("W", [3, 2, 3, 3]),
         op="ConvTranspose")
    conv("deconv_output_padding_negative", {"output_padding": [-1, 0]}, w=f32("W", [3, 2, 3, 3]), op="ConvTranspose")
    conv("deconv_output_shape_negative", {"output_shape": [-5, 8]}, w=f32("W", [3, 2, 3, 3]), op="ConvTranspose")
    conv("deconv_output_shape_small", {"output_shape": [1, 1]}, w=f32("W", [3, 2, 3, 3]), op="ConvTranspose",
         valid=True)
    conv("deconv_pads_negative", {"pads": [-2, -2, -2, -2]}, w=f32("W", [3, 2, 3, 3]), op="ConvTranspose")
    conv("deconv_pads_eat_output", {"pads": [20, 20, 20, 20]}, w=f32("W", [3, 2, 3, 3]), op="ConvTranspose")
    conv("deconv_group_0", {"group": 0}, w=f32("W", [3, 2, 3, 3]), op="ConvTranspose")
    # --- pools
    for op in ("MaxPool", "AveragePool"):
        onnx_probe(op + "_kernel_0", one(op, ["x"], {"kernel_shape": [0, 2]}, x_shape=(1, 1, 4, 4)))
        onnx_probe(op + "_kernel_negative", one(op, ["x"], {"kernel_shape": [-2, 2]}, x_shape=(1, 1, 4, 4)))
        onnx_probe(op + "_no_kernel", one(op, ["x"], {}, x_shape=(1, 1, 4, 4)))
        onnx_probe(op + "_kernel_too_big", one(op, ["x"], {"kernel_shape": [9, 9]}, x_shape=(1, 1, 4, 4)))
        onnx_probe(op + "_kernel_huge", one(op, ["x"], {"kernel_shape": [2**40, 2]}, x_shape=(1, 1, 4, 4)))
        onnx_probe(op + "_pads_ge_kernel", one(op, ["x"], {"kernel_shape": [2, 2], "pads": [3, 3, 3, 3]},
                                               x_shape=(1, 1, 4, 4)))
        onnx_probe(op + "_rank2", one(op, ["x"], {"kernel_shape": [2]}, x_shape=(4, 4)))
    onnx_probe("maxpool_ceil_mode_2", one("MaxPool", ["x"], {"kernel_shape": [2, 2], "ceil_mode": 2},
                                          x_shape=(1, 1, 4, 4)), valid=True)  # a bool, as onnxruntime reads it
    onnx_probe("maxpool_storage_order_9", one("MaxPool", ["x"], {"kernel_shape": [2, 2], "storage_order": 9},
                                              x_shape=(1, 1, 4, 4)))
    onnx_probe("gap_rank1", one("GlobalAveragePool", ["x"], x_shape=[4]))
    # --- shape ops (constant shape inputs: checked at load)
    onnx_probe("reshape_two_minus_one", one("Reshape", ["x", "s"], inits=[i64("s", [-1, -1])]))
    onnx_probe("reshape_minus_two", one("Reshape", ["x", "s"], inits=[i64("s", [-2, 2])]))
    onnx_probe("reshape_wrong_count", one("Reshape", ["x", "s"], inits=[i64("s", [3, 3])]))
    onnx_probe("reshape_zero_allowzero", one("Reshape", ["x", "s"], {"allowzero": 1}, inits=[i64("s", [0, 4])]))
    onnx_probe("reshape_zero_copies_dim", one("Reshape", ["x", "s"], inits=[i64("s", [0, 4])]), valid=True)
    onnx_probe("reshape_zero_beyond_rank", one("Reshape", ["x", "s"], inits=[i64("s", [1, 1, 0, 4])]))
    onnx_probe("reshape_minus_one_with_zero_copy", one("Reshape", ["x", "s"], inits=[i64("s", [-1, 0])],
                                                          x_shape=[1, 4]), valid=True)
    onnx_probe("reshape_huge", one("Reshape", ["x", "s"], inits=[i64("s", [2**62, 2**62, -1])]))
    onnx_probe("reshape_shape_2d", one("Reshape", ["x", "s"], inits=[i64("s", [1, 4], dims=[1, 2])]), valid=True)
    onnx_probe("reshape_shape_float", one("Reshape", ["x", "s"], inits=[f32("s", [2], [1.0, 4.0])]), valid=True)
    onnx_probe("reshape_shape_fraction", one("Reshape", ["x", "s"], inits=[f32("s", [2], [1.5, 4.0])]))
    onnx_probe("gather_index_too_big", one("Gather", ["x", "i"], {"axis": 1}, inits=[i64("i", [4])]))
    onnx_probe("gather_index_below_minus_n", one("Gather", ["x", "i"], {"axis": 1}, inits=[i64("i", [-5])]))
    onnx_probe("gather_index_int64_min", one("Gather", ["x", "i"], {"axis": 1}, inits=[i64("i", [-2**63])]))
    onnx_probe("gather_axis_out_of_range", one("Gather", ["x", "i"], {"axis": 2}, inits=[i64("i", [0])]))
    onnx_probe("gather_axis_int64_min", one("Gather", ["x", "i"], {"axis": -2**63}, inits=[i64("i", [0])]))
    onnx_probe("gather_index_minus_n_ok", one("Gather", ["x", "i"], {"axis": 1}, inits=[i64("i", [-4])]), valid=True)
    onnx_probe("gather_float_indices", one("Gather", ["x", "i"], {"axis": 1}, inits=[f32("i", [1], [0.0])]))
    onnx_probe("slice_step_0", one("Slice", ["x", "s", "e", "a", "t"], inits=[i64("s", [0]), i64("e", [4]),
                                                                             i64("a", [1]), i64("t", [0])]))
    onnx_probe("slice_int64_min_end", one("Slice", ["x", "s", "e", "a", "t"],
                                          inits=[i64("s", [3]), i64("e", [-2**63]), i64("a", [1]), i64("t", [-1])]),
               valid=True)
    onnx_probe("slice_int64_max_start_neg_step",
               one("Slice", ["x", "s", "e", "a", "t"],
                   inits=[i64("s", [2**63 - 1]), i64("e", [-2**63]), i64("a", [1]), i64("t", [-2**63])]), valid=True)
    onnx_probe("slice_step_int64_min_pos",
               one("Slice", ["x", "s", "e", "a", "t"],
                   inits=[i64("s", [-2**63]), i64("e", [2**63 - 1]), i64("a", [1]), i64("t", [2**63 - 1])]),
               valid=True)
    onnx_probe("slice_axis_out_of_range", one("Slice", ["x", "s", "e", "a"],
                                              inits=[i64("s", [0]), i64("e", [1]), i64("a", [5])]))
    onnx_probe("slice_repeated_axis", one("Slice", ["x", "s", "e", "a"],
                                          inits=[i64("s", [0, 0]), i64("e", [1, 1]), i64("a", [1, -1])]))
    onnx_probe("slice_lengths_differ", one("Slice", ["x", "s", "e", "a"],
                                           inits=[i64("s", [0, 0]), i64("e", [1]), i64("a", [1])]))
    onnx_probe("slice_empty_result", one("Slice", ["x", "s", "e"], inits=[i64("s", [3]), i64("e", [1])]))
    onnx_probe("concat_axis_int64_min", one("Concat", ["x", "x"], {"axis": -2**63}))
    onnx_probe("concat_rank_mismatch", one("Concat", ["x", "z"], {"axis": 0}, extra_inputs=[value("z", [4])]))
    onnx_probe("concat_no_axis", one("Concat", ["x", "x"]))
    onnx_probe("transpose_not_perm", one("Transpose", ["x"], {"perm": [0, 0]}))
    onnx_probe("transpose_perm_out_of_range", one("Transpose", ["x"], {"perm": [0, 5]}))
    onnx_probe("transpose_perm_negative", one("Transpose", ["x"], {"perm": [-1, 0]}))
    onnx_probe("transpose_perm_short", one("Transpose", ["x"], {"perm": [0]}))
    onnx_probe("expand_incompatible", one("Expand", ["x", "s"], inits=[i64("s", [3, 3])]))
    onnx_probe("expand_negative", one("Expand", ["x", "s"], inits=[i64("s", [-1, 4])]))
    onnx_probe("expand_huge", one("Expand", ["x", "s"], inits=[i64("s", [2**40, 2**40, 4])]))
    onnx_probe("expand_zero", one("Expand", ["x", "s"], inits=[i64("s", [0, 4])]))
    rng = lambda s, l, d: [i64("s", [s], dims=[]), i64("l", [l], dims=[]), i64("d", [d], dims=[])]
    range_model = lambda a, b, c: model([helper.make_node("Range", ["s", "l", "d"], ["r"], name="range"),
                                         helper.make_node("Cast", ["r"], ["rf"], name="cast", to=TensorProto.FLOAT),
                                         helper.make_node("ReduceSum" if False else "Sum", ["rf"], ["y"], name="sum")],
                                        [value("x", [1])], [value("y", None)], rng(a, b, c))
    onnx_probe("range_delta_0", range_model(0, 10, 0))
    onnx_probe("range_huge_count", range_model(0, 2**62, 1))
    onnx_probe("range_overflow_count", range_model(-2**63, 2**63 - 1, 1))
    onnx_probe("range_empty", range_model(5, 0, 1), valid=True)
    onnx_probe("range_delta_int64_min", range_model(0, -10, -2**63))
    cos = lambda dims: model([helper.make_node("ConstantOfShape", ["s"], ["c"], name="fill"),
                              helper.make_node("Add", ["x", "c"], ["y"], name="add")], [value("x", [1])],
                             [value("y", None)], [i64("s", dims)])
    onnx_probe("constant_of_shape_negative", cos([-3]))
    onnx_probe("constant_of_shape_zero", cos([0]))
    onnx_probe("constant_of_shape_overflow", cos([2**62, 2**62]))
    onnx_probe("cast_to_string", one("Cast", ["x"], {"to": TensorProto.STRING}))
    onnx_probe("cast_to_999", one("Cast", ["x"], {"to": 999}))
    onnx_probe("cast_to_float16", one("Cast", ["x"], {"to": TensorProto.FLOAT16}))
    onnx_probe("cast_no_to", one("Cast", ["x"]))
    onnx_probe("softmax_axis_int64_min", one("Softmax", ["x"], {"axis": -2**63}))
    onnx_probe("logsoftmax_axis_big", one("LogSoftmax", ["x"], {"axis": 7}))
    onnx_probe("flatten_axis_big", one("Flatten", ["x"], {"axis": 3}))
    onnx_probe("flatten_axis_int64_min", one("Flatten", ["x"], {"axis": -2**63}))
    onnx_probe("squeeze_non_one", one("Squeeze", ["x", "a"], inits=[i64("a", [1])]))
    onnx_probe("squeeze_axis_out", one("Squeeze", ["x", "a"], inits=[i64("a", [9])]))
    onnx_probe("unsqueeze_repeat", one("Unsqueeze", ["x", "a"], inits=[i64("a", [0, 0])]))
    onnx_probe("unsqueeze_axis_out", one("Unsqueeze", ["x", "a"], inits=[i64("a", [9])]))
    onnx_probe("unsqueeze_int64_min", one("Unsqueeze", ["x", "a"], inits=[i64("a", [-2**63])]))
    onnx_probe("pad_huge", one("Pad", ["x", "p"], inits=[i64("p", [0, 2**40, 0, 2**40])]))
    onnx_probe("pad_negative_eats_all", one("Pad", ["x", "p"], inits=[i64("p", [0, -3, 0, -3])]))
    onnx_probe("pad_int64_min", one("Pad", ["x", "p"], inits=[i64("p", [0, -2**63, 0, 0])]))
    onnx_probe("pad_wrong_count", one("Pad", ["x", "p"], inits=[i64("p", [1, 1, 1])]))
    onnx_probe("pad_mode_bogus", one("Pad", ["x", "p"], {"mode": "wrap"}, inits=[i64("p", [0, 1, 0, 1])]))
    onnx_probe("pad_reflect_too_wide", one("Pad", ["x", "p"], {"mode": "reflect"}, inits=[i64("p", [0, 4, 0, 4])]))
    onnx_probe("pad_edge_negative_unsupported", one("Pad", ["x", "p"], {"mode": "edge"}, inits=[i64("p", [0, -1, 0, 2])]))
    onnx_probe("gemm_inner_mismatch", one("Gemm", ["x", "B"], inits=[f32("B", [3, 2])]))
    onnx_probe("gemm_rank3", one("Gemm", ["x", "B"], x_shape=[1, 1, 4], inits=[f32("B", [4, 2])]))
    onnx_probe("gemm_bias_unbroadcastable", one("Gemm", ["x", "B", "C"], inits=[f32("B", [4, 2]), f32("C", [3])]))
    onnx_probe("matmul_mismatch", one("MatMul", ["x", "B"], inits=[f32("B", [3, 2])]))
    onnx_probe("matmul_scalar", one("MatMul", ["x", "B"], inits=[f32("B", [])]))
    onnx_probe("bn_wrong_scale_len", one("BatchNormalization", ["x", "s", "b", "m", "v"], x_shape=[1, 2, 2, 2],
                                         inits=[f32("s", [3]), f32("b", [2]), f32("m", [2]), f32("v", [2])]))
    onnx_probe("prelu_slope_unbroadcastable", one("PRelu", ["x", "s"], inits=[f32("s", [3])]))
    onnx_probe("where_float_condition", one("Where", ["x", "x", "x"]))
    onnx_probe("sum_no_inputs", one("Sum", []))
    onnx_probe("hardsigmoid_nan_alpha", one("HardSigmoid", ["x"], {"alpha": float("nan")}), "--check_numerics")
    onnx_probe("selu_inf_gamma", one("Selu", ["x"], {"gamma": float("inf")}), valid=True)
    onnx_probe("dropout_ratio_2", one("Dropout", ["x"], {"ratio": 2.0}, opset=11), valid=True)
    # --- LSTM
    lstm = lambda name, W_, R_, B_=None, seq=None, attrs=None, valid=False: onnx_probe(
        name, model([helper.make_node("LSTM", ["x", "W", "R"] + (["B"] if B_ is not None else [""]) +
                                      (["sl"] if seq is not None else []), ["y"], name="lstm",
                                      **{"hidden_size": 2, **(attrs or {})})],
                    [value("x", [4, 2, 3])], [value("y", None)],
                    [W_, R_] + ([B_] if B_ is not None else []) +
                    ([helper.make_tensor("sl", TensorProto.INT32, [2], seq)] if seq is not None else [])), valid=valid)
    lstm("lstm_ok", f32("W", [1, 8, 3]), f32("R", [1, 8, 2]), valid=True)
    lstm("lstm_B_wrong", f32("W", [1, 8, 3]), f32("R", [1, 8, 2]), f32("B", [1, 8]))
    lstm("lstm_R_wrong", f32("W", [1, 8, 3]), f32("R", [1, 8, 3]))
    lstm("lstm_directions_mismatch", f32("W", [2, 8, 3]), f32("R", [2, 8, 2]))
    lstm("lstm_seq_zero", f32("W", [1, 8, 3]), f32("R", [1, 8, 2]), seq=[0, 4])
    lstm("lstm_seq_negative", f32("W", [1, 8, 3]), f32("R", [1, 8, 2]), seq=[-1, 4])
    lstm("lstm_hidden_zero", f32("W", [1, 0, 3]), f32("R", [1, 0, 0]), attrs={"hidden_size": 0})
    lstm("lstm_direction_bogus", f32("W", [1, 8, 3]), f32("R", [1, 8, 2]), attrs={"direction": "sideways"})
    lstm("lstm_clip_negative", f32("W", [1, 8, 3]), f32("R", [1, 8, 2]), attrs={"clip": -1.0})
    lstm("lstm_clip_nan", f32("W", [1, 8, 3]), f32("R", [1, 8, 2]), attrs={"clip": float("nan")})
    lstm("lstm_input_forget", f32("W", [1, 8, 3]), f32("R", [1, 8, 2]), attrs={"input_forget": 1}, valid=True)
    # --- net.json types
    base = '"inputs": [{"name": "x", "shape": [1, 4]}], "outputs": ["y"], '
    node = lambda attrs: base + '"nodes": [{"name": "n", "op": "LeakyRelu", "inputs": ["x"], "outputs": ["y"], ' \
        '"attrs": ' + attrs + '}]'
    json_probe("json_relu_ok", RELU_JSON, valid=True)
    json_probe("json_bom", b"\xef\xbb\xbf" + RELU_JSON.encode(), valid=True)
    json_probe("json_utf16", RELU_JSON.encode("utf-16"))
    json_probe("json_invalid_utf8_name", RELU_JSON.replace('"relu"', '"re\udcfflu"').encode("utf-8", "surrogateescape"))
    json_probe("json_nul_in_name", RELU_JSON.replace('"relu"', '"re\\u0000lu"'), valid=True)
    json_probe("json_top_array", "[1, 2]")
    json_probe("json_top_string", '"hello"')
    json_probe("json_empty_file", "")
    json_probe("json_shape_strings", RELU_JSON.replace("[1, 4]", '["1", "4"]'))
    json_probe("json_shape_floats", RELU_JSON.replace("[1, 4]", "[1.0, 4.5]"))
    json_probe("json_shape_float_integral", RELU_JSON.replace("[1, 4]", "[1.0, 4.0]"))
    json_probe("json_shape_1e400", RELU_JSON.replace("[1, 4]", "[1, 1e400]"))
    json_probe("json_shape_minus_zero", RELU_JSON.replace("[1, 4]", "[1, -0]"))
    json_probe("json_shape_bool", RELU_JSON.replace("[1, 4]", "[true, 4]"))
    json_probe("json_shape_null", RELU_JSON.replace("[1, 4]", "null"))
    json_probe("json_shape_empty", RELU_JSON.replace("[1, 4]", "[]"), valid=True)
    json_probe("json_shape_huge_int", RELU_JSON.replace("[1, 4]", "[1, 99999999999999999999999]"))
    json_probe("json_name_number", RELU_JSON.replace('"name": "x"', '"name": 7'))
    json_probe("json_name_empty", RELU_JSON.replace('"x"', '""'))
    json_probe("json_outputs_string", RELU_JSON.replace('["y"]}]}', '"y"}]}'))
    json_probe("json_outputs_number", RELU_JSON.replace('"outputs": ["y"], "nodes"', '"outputs": [5], "nodes"'))
    json_probe("json_op_null", RELU_JSON.replace('"Relu"', "null"))
    json_probe("json_nodes_object", '{' + base + '"nodes": {}}')
    json_probe("json_alpha_string", '{' + node('{"alpha": "0.1"}') + '}')
    json_probe("json_alpha_nan_literal", '{' + node('{"alpha": NaN}') + '}')
    json_probe("json_alpha_minus_zero", '{' + node('{"alpha": -0.0}') + '}', valid=True)
    json_probe("json_alpha_array", '{' + node('{"alpha": [0.1]}') + '}')
    json_probe("json_alpha_object", '{' + node('{"alpha": {}}') + '}')
    json_probe("json_version_string", '{"version": "1", ' + RELU_JSON[1:])
    json_probe("json_version_float", '{"version": 1.5, ' + RELU_JSON[1:])
    json_probe("json_version_huge", '{"version": 1e400, ' + RELU_JSON[1:])
    def with_b(b, top=""):  # y = x + b, b an initializer written as `b`
        return ('{' + base + top + '"initializers": {"b": ' + b + '}, "nodes": [{"name": "n", "op": "Add", '
                '"inputs": ["x", "b"], "outputs": ["y"]}]}')

    json_probe("json_offset_negative", with_b('{"shape": [4], "offset": -4}', '"weights_file": "w.bin", '))
    json_probe("json_offset_float", with_b('{"shape": [4], "offset": 0.5}', '"weights_file": "w.bin", '))
    json_probe("json_offset_no_weights_file", with_b('{"shape": [4], "offset": 0}'))
    json_probe("json_data_strings", with_b('{"shape": [4], "data": ["1", 2, 3, 4]}'))
    json_probe("json_data_nested", with_b('{"shape": [4], "data": [[1, 2], [3, 4]]}'))
    json_probe("json_init_bogus_random", with_b('{"shape": [4], "init": "gaussian"}'))
    json_probe("json_init_shape_zero", with_b('{"shape": [0], "data": []}'))
    json_probe("json_init_dtype_bogus", with_b('{"shape": [4], "type": "complex64", "data": [1, 2, 3, 4]}'))
    json_probe("json_input_is_initializer", '{' + base + '"initializers": {"x": {"shape": [1, 4], '
               '"data": [1, 2, 3, 4]}}, "nodes": [{"name": "n", "op": "Relu", "inputs": ["x"], "outputs": ["y"]}]}')
    json_probe("json_output_is_input", '{"inputs": [{"name": "x", "shape": [1, 4]}], "outputs": ["x"], "nodes": []}',
               valid=True)
    json_probe("json_self_loop", '{' + base + '"nodes": [{"name": "n", "op": "Add", "inputs": ["x", "y"], '
               '"outputs": ["y"]}]}')
    json_probe("json_output_twice", RELU_JSON.replace('"outputs": ["y"], "nodes"', '"outputs": ["y", "y"], "nodes"'),
               valid=True)
    json_probe("json_input_twice", RELU_JSON.replace('[{"name": "x", "shape": [1, 4]}]',
                                                     '[{"name": "x", "shape": [1, 4]}, {"name": "x", "shape": [1, 4]}]'))
    json_probe("json_node_writes_input", '{' + base + '"nodes": [{"name": "n", "op": "Relu", "inputs": ["x"], '
               '"outputs": ["x"]}]}'.replace('"outputs": ["y"]', '"outputs": ["x"]', 1))
    json_probe("json_weights_file_empty_name", with_b('{"shape": [4], "offset": 0}', '"weights_file": "", '))
    json_probe("json_weights_file_nul", with_b('{"shape": [4], "offset": 0}', '"weights_file": "w\\u0000.bin", '))
    # --- files next to the model
    bench("weights_file_fifo_free_dev_zero", {"m.json": netjson(with_b('{"shape": [4], "offset": 0}',
                                                                       '"weights_file": "z", ')),
                                              "z": ("link", "/dev/zero")})
    bench("model_is_dev_zero", {"m.onnx": ("link", "/dev/zero")})
    bench("model_is_dev_null", {"m.json": ("link", "/dev/null")})
    bench("model_dir_named_json", {"m.json": None})
    bench("model_symlink_loop", {"m.json": ("link", "m.json")})
    # --- flags
    small = os.path.join(MODELS, "small_cnn.json")
    digits = os.path.join(MODELS, "digits_cnn.json")

    def flags(name, *args, valid=False, files=None, tool="engine_bench"):
        P.append((name, files or {}, tool, list(args), valid))

    flags("num_runs_minus_1", "--model", small, *FAST, "--num_runs", "-1")
    flags("num_runs_1e12", "--model", small, *FAST, "--num_runs", "1e12")
    flags("num_runs_huge", "--model", small, *FAST, "--num_runs", "99999999999999999999")
    flags("num_runs_2e9", "--model", small, *FAST, "--num_runs", "2000000000")
    flags("warmup_runs_huge", "--model", small, *FAST, "--warmup_runs", "4000000000")
    flags("num_threads_100000", "--model", small, *FAST, "--num_threads", "100000")
    flags("num_threads_minus_1", "--model", small, *FAST, "--num_threads", "-1")
    flags("top_k_huge", "--model", digits, "--image", os.path.join(MODELS, "samples/digit_7.png"), *FAST,
          "--top_k", "1000000", valid=True)
    flags("input_shape_huge", "--model", small, *FAST, "--input_shape", "image:100000,3,100000,100000")
    flags("input_shape_negative", "--model", small, *FAST, "--input_shape", "image:1,3,-32,32")
    flags("input_shape_empty_dims", "--model", small, *FAST, "--input_shape", "image:")
    flags("input_shape_trailing_comma", "--model", small, *FAST, "--input_shape", "image:1,3,32,")
    flags("input_shape_twice", "--model", small, *FAST, "--input_shape", "image:1,3,32,32;image:1,3,16,16")
    flags("input_shape_wrong_rank", "--model", small, *FAST, "--input_shape", "image:1,3")
    flags("input_shape_rank_9", "--model", small, *FAST, "--input_shape", "image:1,1,1,1,1,1,1,1,1")
    flags("input_shape_small_spatial", "--model", small, *FAST, "--input_shape", "image:1,3,1,1")
    flags("input_shape_wrong_channels", "--model", small, *FAST, "--input_shape", "image:1,5,32,32")
    flags("max_memory_minus", "--model", small, *FAST, "--max_memory", "-5")
    flags("max_memory_float", "--model", small, *FAST, "--max_memory", "1.5G")
    flags("max_memory_huge_T", "--model", small, *FAST, "--max_memory", "99999999999T")
    flags("max_memory_empty", "--model", small, *FAST, "--max_memory", "")
    flags("max_memory_nan", "--model", small, *FAST, "--max_memory", "nan")
    flags("max_memory_inf", "--model", small, *FAST, "--max_memory", "inf")
    flags("peak_gflops_nan", "--model", small, "--peak_gflops", "nan", "--bandwidth_gbs", "10", "--num_runs", "1")
    flags("peak_gflops_inf", "--model", small, "--peak_gflops", "inf", "--bandwidth_gbs", "10", "--num_runs", "1")
    flags("bandwidth_zero", "--model", small, "--peak_gflops", "10", "--bandwidth_gbs", "0", "--num_runs", "1")
    flags("fma_units_0", "--model", small, *FAST, "--fma_units", "0")
    flags("mean_nan", "--model", digits, "--image", os.path.join(MODELS, "samples/digit_7.png"), *FAST,
          "--mean", "nan")
    flags("std_inf", "--model", digits, "--image", os.path.join(MODELS, "samples/digit_7.png"), *FAST, "--std", "inf")
    flags("std_nan", "--model", digits, "--image", os.path.join(MODELS, "samples/digit_7.png"), *FAST, "--std", "nan")
    flags("image_directory", "--model", digits, "--image", "{d}", *FAST)
    flags("image_empty", "--model", digits, "--image", "{d}/e.png", *FAST, files={"e.png": b""})
    flags("image_png_header_only", "--model", digits, "--image", "{d}/h.png", *FAST,
          files={"h.png": b"\x89PNG\r\n\x1a\n"})
    flags("image_jpeg_soi_only", "--model", digits, "--image", "{d}/h.jpg", *FAST, files={"h.jpg": b"\xff\xd8\xff"})
    flags("image_dev_zero", "--model", digits, "--image", "/dev/zero", *FAST)
    flags("image_fifo_free_dev_urandom", "--model", digits, "--image", "/dev/urandom", *FAST)
    flags("trace_into_dir", "--model", small, *FAST, "--trace", "{d}")
    flags("html_missing_dir", "--model", small, *FAST, "--html", "{d}/no/r.html")
    flags("output_is_model", "--model", "{d}/m.json", *FAST, "--output", "{d}/m.json", files={"m.json": netjson(RELU_JSON)})
    flags("trace_is_model", "--model", "{d}/m.json", *FAST, "--trace", "{d}/m.json", files={"m.json": netjson(RELU_JSON)})
    flags("output_and_html_same", "--model", small, *FAST, "--output", "{d}/r", "--html", "{d}/r")
    flags("compare_missing_b", "--compare", small, "{d}/nope.json", *FAST)
    flags("compare_bad_flag_side", "--model", small, "--compare", "--fold_bn 7", "--fold_bn 1", *FAST)
    flags("compare_nested", "--model", small, "--compare", "--compare a b", "--fold_bn 1", *FAST)
    # engine_convert
    files_relu = {"m.json": netjson(RELU_JSON)}
    flags("convert_onto_input", "{d}/m.json", "{d}/m.json", tool="engine_convert", files=files_relu)
    flags("convert_onto_input_via_dotdot", "{d}/m.json", "{d}/sub/../m.json", tool="engine_convert",
          files={"m.json": netjson(RELU_JSON), "sub": None})
    flags("convert_onto_input_symlink", "{d}/m.json", "{d}/l.json", tool="engine_convert",
          files={"m.json": netjson(RELU_JSON), "l.json": ("link", "m.json")})
    flags("convert_onto_weights", "{d}/m.json", "{d}/w.json", tool="engine_convert",
          files={"m.json": netjson(with_b('{"shape": [4], "offset": 0}', '"weights_file": "w.json", ')),
                 "w.json": b"\0" * 16})
    flags("convert_onto_directory", "{d}/m.json", "{d}", tool="engine_convert", files=files_relu)
    flags("convert_into_missing", "{d}/m.json", "{d}/no/such/out.onnx", tool="engine_convert", files=files_relu)
    flags("convert_onto_dev_null_dir", "{d}/m.json", "/dev/null/x.onnx", tool="engine_convert", files=files_relu)
    flags("convert_no_extension", "{d}/m.json", "{d}/out", tool="engine_convert", files=files_relu)
    flags("convert_ok", "{d}/m.json", "{d}/out.onnx", tool="engine_convert", files=files_relu, valid=True)
    flags("convert_extra_arg", "{d}/m.json", "{d}/out.onnx", "{d}/third", tool="engine_convert", files=files_relu)
    # engine_check
    def case_dir(prefix, n_in=1, n_out=1, xval=None, extra=None):
        x = np.array([[-1.0, 2.0, -3.0, 4.0]], dtype=np.float32) if xval is None else xval
        files = {prefix + "/model.onnx": good, prefix + "/test_data_set_0": None}
        for k in range(n_in):
            files[f"{prefix}/test_data_set_0/input_{k}.pb"] = numpy_helper.from_array(x).SerializeToString()
        for k in range(n_out):
            files[f"{prefix}/test_data_set_0/output_{k}.pb"] = numpy_helper.from_array(np.maximum(x, 0)).SerializeToString()
        files.update(extra or {})
        return files

    flags("check_ok", "{d}/c", tool="engine_check", files=case_dir("c"), valid=True)
    flags("check_no_outputs_pb", "{d}/c", tool="engine_check", valid="case", files=case_dir("c", n_out=0))
    flags("check_no_inputs_pb", "{d}/c", tool="engine_check", valid="case", files=case_dir("c", n_in=0))
    flags("check_extra_input_pb", "{d}/c", tool="engine_check", valid="case", files=case_dir("c", n_in=2))
    flags("check_extra_output_pb", "{d}/c", tool="engine_check", valid="case", files=case_dir("c", n_out=2))
    flags("check_input_wrong_shape", "{d}/c", tool="engine_check", valid=True,
          files=case_dir("c", xval=np.zeros((2, 3), dtype=np.float32)))
    flags("check_input_garbage", "{d}/c", tool="engine_check", valid="case",
          files=case_dir("c", extra={"c/test_data_set_0/input_0.pb": b"\xff" * 9}))
    flags("check_output_truncated", "{d}/c", tool="engine_check", valid="case",
          files=case_dir("c", extra={"c/test_data_set_0/output_0.pb": numpy_helper.from_array(
              np.zeros((1, 4), np.float32)).SerializeToString()[:-3]}))
    flags("check_input_gap", "{d}/c", tool="engine_check", valid=True,
          files=case_dir("c", extra={"c/test_data_set_0/input_5.pb": b""}))
    flags("check_no_data_sets", "{d}/c", tool="engine_check", valid=True,
          files={"c/model.onnx": good})
    flags("check_symlink_loop", "{d}", tool="engine_check", valid=True, files={**case_dir("c"), "loop": ("link", ".")})
    flags("check_dangling_link", "{d}", tool="engine_check", valid=True, files={**case_dir("c"), "dead": ("link", "nowhere")})
    flags("check_model_garbage", "{d}/c", tool="engine_check", valid="case",
          files=case_dir("c", extra={"c/model.onnx": b"\xff\xff\xff"}))
    flags("check_dir_is_file", "{d}/f", tool="engine_check", files={"f": b"x"})
    flags("check_data_set_is_file", "{d}/c", tool="engine_check", valid=True,
          files={"c/model.onnx": good, "c/test_data_set_0": b"x"})
    return P


def make(d, files):
    for rel, content in files.items():
        path = os.path.join(d, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if content is None:
            os.makedirs(path, exist_ok=True)
        elif isinstance(content, tuple):
            os.symlink(content[1], path)
        else:
            with open(path, "wb") as f:
                f.write(content)


def snapshot(d):
    state = {}
    for root, dirs, names in os.walk(d):
        for n in names + dirs:
            p = os.path.join(root, n)
            if os.path.islink(p):
                state[p] = ("link", os.readlink(p))
            elif os.path.isfile(p):
                st = os.stat(p)
                state[p] = (st.st_mtime_ns, hashlib.sha256(open(p, "rb").read()).hexdigest())
            else:
                state[p] = ("dir",)
    return state


def main():
    args = sys.argv[1:]
    verbose = "-v" in args
    key = args[args.index("-k") + 1] if "-k" in args else ""
    rest = [a for i, a in enumerate(args) if a not in ("-v", "-k") and (i == 0 or args[i - 1] != "-k")]
    build = rest[0] if rest else os.path.join(ROOT, "build")
    failures = 0
    total = 0
    for name, files, tool, argv, valid in probes():
        if key not in name:
            continue
        total += 1
        d = tempfile.mkdtemp(prefix="red_team_")
        try:
            make(d, files)
            before = snapshot(d)
            cmd = ["timeout", "20", os.path.join(build, "bench", tool)] + [a.replace("{d}", d) for a in argv]
            r = subprocess.run(cmd, capture_output=True)
            after = snapshot(d)
            err = r.stderr.decode(errors="replace")
            problems = []
            if r.returncode == 124:
                problems.append("hang")
            if "Sanitizer" in err or "runtime error" in err:
                problems.append("sanitizer")
            if r.returncode < 0 or r.returncode > 128:
                problems.append(f"signal/exit {r.returncode}")
            if valid == "case":  # engine_check reports a failing case on stdout, exit 1
                if r.returncode != 1 or err or not r.stdout.startswith(b"FAIL "):
                    problems.append(f"case not reported as FAIL (exit {r.returncode})")
            elif valid:
                if r.returncode != 0:
                    problems.append(f"valid input refused (exit {r.returncode})")
            else:
                if r.returncode not in (1, 2):
                    problems.append(f"exit {r.returncode}")
                if r.stdout:
                    problems.append("stdout not empty")
                if err.count("\n") != 1 or not err.startswith(tool + ": "):
                    problems.append("not one stderr line")
                if after != before:
                    changed = sorted(set(after) ^ set(before) | {p for p in after if before.get(p) != after[p]})
                    problems.append("files touched: " + ", ".join(os.path.relpath(p, d) for p in changed))
            status = "FAIL" if problems else "ok"
            failures += bool(problems)
            msg = err.strip().replace(d, "{d}").splitlines()
            line = msg[-1] if valid and msg else (msg[0] if msg else "")
            if problems or verbose:
                print(f"{status:4} {name}: {'; '.join(problems)} | {line[:400]}")
        finally:
            shutil.rmtree(d, ignore_errors=True)
    print(f"{total} probes, {total - failures} kept the contract, {failures} did not")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
