#!/usr/bin/env python3
"""Writes the small bad ONNX files and images of the bad-input catalogue, and the net.json
files too large to write by hand (catalogue.json lists each with the error the engine
must give). Run with Debian's python3-onnx:

    /usr/bin/python3 tests/data/bad_models/make_bad_inputs.py

The files are committed; this script documents how each was made."""
import os
import struct
import zlib

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))


def model(nodes, inputs, outputs, initializers=(), opset=13, **graph_kwargs):
    graph = helper.make_graph(nodes, "bad", inputs, outputs, initializer=list(initializers), **graph_kwargs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)] if opset else [])
    m.ir_version = 8
    return m


def value(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def save(name, m):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(m.SerializeToString())


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def relu_model():
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [value("x", [1, 4])], [value("y", None)])


def main():
    good = relu_model().SerializeToString()
    write("onnx_truncated.onnx", good[: len(good) // 2])
    write("onnx_corrupt.onnx", bytes(range(256)) * 4)
    write("onnx_empty.onnx", b"")

    # An initializer of a type the engine does not read (complex64) and one of strings.
    w = TensorProto()
    w.name, w.data_type = "w", TensorProto.COMPLEX64
    w.dims.extend([2])
    w.float_data.extend([1, 0, 2, 0])
    save("onnx_complex_initializer.onnx",
         model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [value("x", [2])], [value("y", None)], [w]))
    s = helper.make_tensor("s", TensorProto.STRING, [1], [b"text"])
    save("onnx_string_initializer.onnx",
         model([helper.make_node("Add", ["x", "s"], ["y"], name="add")], [value("x", [1])], [value("y", None)], [s]))
    save("onnx_int32_input.onnx",
         model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [value("x", [1, 4], TensorProto.INT32)],
               [value("y", None)]))
    save("onnx_float64_input.onnx",
         model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [value("x", [1, 4], TensorProto.DOUBLE)],
               [value("y", None)]))

    # Bad attributes: stride 0, an attribute of the wrong type, kernel larger than the
    # padded input, group not dividing the channels, an axis out of range.
    conv_w = helper.make_tensor("W", TensorProto.FLOAT, [2, 3, 3, 3], [0.1] * 54)
    def conv(name, w=conv_w, x_shape=(1, 3, 8, 8), **attrs):
        save(name, model([helper.make_node("Conv", ["x", "W"], ["y"], name="conv", **attrs)],
                         [value("x", list(x_shape))], [value("y", None)], [w]))
    conv("onnx_stride_zero.onnx", strides=[0, 1])
    conv("onnx_float_group.onnx", group=1.5)
    conv("onnx_kernel_larger_than_input.onnx", x_shape=(1, 3, 2, 2))
    conv("onnx_group_not_dividing.onnx", group=2)
    save("onnx_softmax_bad_axis.onnx",
         model([helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=3)], [value("x", [2, 5])],
               [value("y", None)]))
    save("onnx_unknown_op.onnx",
         model([helper.make_node("Frobnicate", ["x"], ["y"], name="frob")], [value("x", [4])], [value("y", None)]))
    save("onnx_custom_domain.onnx",
         model([helper.make_node("Relu", ["x"], ["y"], name="relu", domain="com.example")], [value("x", [4])],
               [value("y", None)]))
    save("onnx_no_opset.onnx",
         model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [value("x", [4])], [value("y", None)], opset=0))
    save("onnx_dangling_input.onnx",
         model([helper.make_node("Add", ["x", "ghost"], ["y"], name="add")], [value("x", [4])], [value("y", None)]))
    save("onnx_doubly_produced.onnx",
         model([helper.make_node("Relu", ["x"], ["y"], name="relu"),
                helper.make_node("Sigmoid", ["x"], ["y"], name="sigmoid")], [value("x", [4])], [value("y", None)]))
    save("onnx_undefined_output.onnx",
         model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [value("x", [4])], [value("nowhere", None)]))
    save("onnx_dynamic_input.onnx",
         model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [value("x", ["N", 4])], [value("y", None)]))
    save("onnx_shape_mismatch.onnx",
         model([helper.make_node("Add", ["x", "z"], ["y"], name="add")], [value("x", [1, 4]), value("z", [1, 3])],
               [value("y", None)]))

    # Initializer data that does not match its shape.
    short = helper.make_tensor("b", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
    short.dims[0] = 4
    save("onnx_initializer_too_short.onnx",
         model([helper.make_node("Add", ["x", "b"], ["y"], name="add")], [value("x", [4])], [value("y", None)],
               [short]))
    raw = TensorProto()
    raw.name, raw.data_type, raw.raw_data = "b", TensorProto.FLOAT, b"\0" * 6
    raw.dims.extend([2])
    save("onnx_raw_data_odd_length.onnx",
         model([helper.make_node("Add", ["x", "b"], ["y"], name="add")], [value("x", [2])], [value("y", None)], [raw]))
    negative = TensorProto()
    negative.name, negative.data_type = "b", TensorProto.FLOAT
    negative.dims.extend([-3])
    save("onnx_negative_dimension.onnx",
         model([helper.make_node("Add", ["x", "b"], ["y"], name="add")], [value("x", [3])], [value("y", None)],
               [negative]))
    # 10^12 elements claimed with no data: refused before anything is allocated.
    huge = TensorProto()
    huge.name, huge.data_type = "b", TensorProto.FLOAT
    huge.dims.extend([1000000, 1000000])
    save("onnx_huge_initializer.onnx",
         model([helper.make_node("Add", ["x", "b"], ["y"], name="add")], [value("x", [1])], [value("y", None)],
               [huge]))
    # External data: a missing file, a file shorter than the tensor, locations that leave
    # the model's folder (by "..", as an absolute path, through a symbolic link) or name no
    # regular file (refused before anything is read), and offsets that are no offsets (not
    # a number, past 64 bits).
    link = os.path.join(HERE, "link_to_outside")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink("../../../models/digits_labels.txt", link)
    cases = [(name, 8, [("location", location)])
             for name, location in [("onnx_external_missing.onnx", "no_such_data.bin"),
                                    ("onnx_external_too_short.onnx", "four_floats.bin"),
                                    ("onnx_external_outside_folder.onnx", "../../etc/passwd"),
                                    ("onnx_external_absolute.onnx", "/etc/passwd"),
                                    ("onnx_external_link_outside.onnx", "link_to_outside"),
                                    ("onnx_external_directory.onnx", ".")]]
    cases += [("onnx_external_offset_not_a_number.onnx", 4, [("location", "four_floats.bin"), ("offset", "xyz")]),
              ("onnx_external_offset_beyond_64_bits.onnx", 4,
               [("location", "four_floats.bin"), ("offset", "100000000000000000000000")])]
    for name, size, entries in cases:
        ext = TensorProto()
        ext.name, ext.data_type = "b", TensorProto.FLOAT
        ext.dims.extend([size])
        ext.data_location = TensorProto.EXTERNAL
        for key, text in entries:
            entry = ext.external_data.add()
            entry.key, entry.value = key, text
        save(name, model([helper.make_node("Add", ["x", "b"], ["y"], name="add")], [value("x", [size])],
                         [value("y", None)], [ext]))

    # Versions newer than the engine knows (it reads up to IR version 13, opset 27).
    save("onnx_newer_opset.onnx",
         model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [value("x", [4])], [value("y", None)],
               opset=28))
    newer_ir = relu_model()
    newer_ir.ir_version = 14
    save("onnx_newer_ir_version.onnx", newer_ir)
    # A graph with no outputs, and node names holding a newline and a terminal escape.
    save("onnx_no_outputs.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [value("x", [4])], []))
    save("onnx_control_characters_in_names.onnx",
         model([helper.make_node("Frob\tnicate", ["x"], ["y"], name="frob\nonnx: fake line\x1b[2J")],
               [value("x", [4])], [value("y", None)]))

    # Load-time folding asked to build 10^12 elements, and an out-of-range Gather.
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [1000000, 1000000])
    save("onnx_fold_huge_constant.onnx",
         model([helper.make_node("ConstantOfShape", ["shape"], ["big"], name="fill"),
                helper.make_node("Add", ["x", "big"], ["y"], name="add")], [value("x", [1])], [value("y", None)],
               [shape]))
    data = helper.make_tensor("data", TensorProto.INT64, [3], [1, 2, 3])
    index = helper.make_tensor("index", TensorProto.INT64, [1], [5])
    save("onnx_fold_gather_out_of_range.onnx",
         model([helper.make_node("Gather", ["data", "index"], ["picked"], name="gather"),
                helper.make_node("Reshape", ["x", "picked"], ["y"], name="reshape")], [value("x", [2])],
               [value("y", None)], [data, index]))
    # A model's own graph input would need terabytes once compiled.
    save("onnx_huge_input.onnx",
         model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [value("x", [1000000, 1000000])],
               [value("y", None)]))
    # A constant that is infinite: --check_numerics names it.
    inf = helper.make_tensor("b", TensorProto.FLOAT, [2], [1.0, float("inf")])
    save("onnx_infinite_initializer.onnx",
         model([helper.make_node("Add", ["x", "b"], ["y"], name="add")], [value("x", [2])], [value("y", None)], [inf]))
    # A NaN parameter (ONNX floats can hold one; net.json cannot), and an initializer
    # holding its values twice, in raw_data and in float_data.
    save("onnx_nan_attribute.onnx",
         model([helper.make_node("LeakyRelu", ["x"], ["y"], name="leaky", alpha=float("nan"))], [value("x", [4])],
               [value("y", None)]))
    both = helper.make_tensor("b", TensorProto.FLOAT, [1], [1.0])
    both.raw_data = struct.pack("<f", 2.0)
    save("onnx_raw_and_typed_data.onnx",
         model([helper.make_node("Add", ["x", "b"], ["y"], name="add")], [value("x", [1])], [value("y", None)],
               [both]))
    # A sequence input.
    seq = helper.make_tensor_sequence_value_info("x", TensorProto.FLOAT, [4])
    save("onnx_sequence_input.onnx",
         model([helper.make_node("Identity", ["x"], ["y"], name="identity")], [seq], [value("y", None)]))

    # A net.json cut off mid-document.
    with open(os.path.join(HERE, "../../../models/small_cnn.json"), "rb") as f:
        write("truncated_json.json", f.read()[:400])
    # A 'version' nested 100,000 levels deep: the message once dumped it, overflowing the stack.
    write("deep_nesting.json",
          b'{"inputs": [{"name": "x", "shape": [1, 4]}], "outputs": ["y"], "version": ' + b"[" * 100000 +
          b"]" * 100000 + b', "nodes": [{"name": "relu", "op": "Relu", "inputs": ["x"], "outputs": ["y"]}]}\n')

    images()


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def images():
    with open(os.path.join(HERE, "../../../models/samples/digit_7.png"), "rb") as f:
        digit = f.read()
    write("image_truncated.png", digit[:100])
    write("image_corrupt.jpg", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(range(7, 250, 3)) * 3)
    write("image_text.png", b"hello, I am not an image\n")
    # A valid header claiming 30000 x 30000 pixels (within stb's own limit of 2^30), and no pixel data.
    header = struct.pack(">IIBBBBB", 30000, 30000, 8, 0, 0, 0, 0)
    write("image_huge.png", b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) + png_chunk(b"IEND", b""))
    # 100000 x 100000 RGB: past stb's own limit (it then reports "unknown image type").
    header = struct.pack(">IIBBBBB", 100000, 100000, 8, 2, 0, 0, 0)
    write("image_too_large.png", b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) + png_chunk(b"IEND", b""))
    # image_jpeg_huffman_overflow.jpg and onnx_node_without_outputs.onnx are not made
    # here: they are fuzz_image's and fuzz_onnx's findings, kept as found (a JPEG DHT
    # segment whose code counts add up to more than 256; a BatchNormalization node that
    # lists no outputs).
    # A BMP whose header says 0 pixels wide.
    info = struct.pack("<IiiHHIIiiII", 40, 0, 8, 1, 24, 0, 0, 2835, 2835, 0, 0)
    write("image_zero_width.bmp", b"BM" + struct.pack("<IHHI", 14 + 40, 0, 0, 14 + 40) + info)


if __name__ == "__main__":
    main()
