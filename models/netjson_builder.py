"""A small helper for writing net.json models (see docs/model-format.md).

Used by make_models.py; it only assembles JSON, with no dependency beyond the
standard library, so models can be regenerated anywhere.
"""
import json
import os
import random
import struct


class NetBuilder:
    def __init__(self, name, doc=None):
        self.name = name
        self.doc = doc
        self.inputs = []
        self.outputs = []
        self.initializers = {}
        self.nodes = []
        self.weights = bytearray()
        self.rng = random.Random(name)
        self.preprocess = None  # {"mean": [...], "std": [...]}: how an image becomes the input
        self.labels = None      # name of a file beside the model with one class label per line

    def input(self, name, shape):
        self.inputs.append({"name": name, "shape": list(shape)})
        return name

    def init(self, name, shape, kind="random", **extra):
        self.initializers[name] = {"shape": list(shape), "init": kind, **extra}
        return name

    def data(self, name, shape, values):
        self.initializers[name] = {"shape": list(shape), "data": [round(v, 5) for v in values]}
        return name

    def stored(self, name, shape, values):
        """An initializer whose data lives in the weights file at an offset."""
        self.initializers[name] = {"shape": list(shape), "offset": len(self.weights)}
        self.weights += struct.pack("<%df" % len(values), *values)
        return name

    def node(self, op, name, inputs, attrs=None, outputs=None):
        outputs = outputs or [name]
        n = {"name": name, "op": op, "inputs": list(inputs), "outputs": outputs}
        if attrs:
            n["attrs"] = attrs
        self.nodes.append(n)
        return outputs[0]

    # Layers built from nodes -------------------------------------------------
    def conv(self, name, x, cin, cout, k, stride=1, group=1, bias=True, pad=None):
        pad = k // 2 if pad is None else pad
        ins = [x, self.init(name + ".W", [cout, cin // group, k, k])]
        if bias:
            ins.append(self.init(name + ".B", [cout], "zeros"))
        return self.node("Conv", name, ins, {"kernel_shape": [k, k], "strides": [stride, stride],
                                             "pads": [pad] * 4, "group": group})

    def conv_transpose(self, name, x, cin, cout, k, stride, pad, bias=True):
        """ConvTranspose with weights [cin, cout, k, k]; the engine's default method."""
        ins = [x, self.init(name + ".W", [cin, cout, k, k])]
        if bias:
            ins.append(self.init(name + ".B", [cout], "zeros"))
        return self.node("ConvTranspose", name, ins, {"kernel_shape": [k, k], "strides": [stride, stride],
                                                      "pads": [pad] * 4})

    def batch_norm(self, name, x, channels):
        """BatchNormalization with plausible trained statistics (variance > 0), stored in the
        weights file so the JSON stays readable."""
        r = self.rng
        ins = [x,
               self.stored(name + ".scale", [channels], [r.uniform(0.5, 1.5) for _ in range(channels)]),
               self.stored(name + ".B", [channels], [r.uniform(-0.2, 0.2) for _ in range(channels)]),
               self.stored(name + ".mean", [channels], [r.uniform(-0.2, 0.2) for _ in range(channels)]),
               self.stored(name + ".var", [channels], [r.uniform(0.5, 1.5) for _ in range(channels)])]
        return self.node("BatchNormalization", name, ins, {"epsilon": 1e-5})

    def relu6(self, name, x):
        return self.node("Clip", name, [x], {"min": 0.0, "max": 6.0})

    def write(self, json_path):
        """Writes the JSON and, when any initializer is stored, <name>.bin beside it."""
        weights_name = os.path.splitext(os.path.basename(json_path))[0] + ".bin"
        doc = {"format": "net.json", "version": 1, "name": self.name}
        if self.doc:
            doc["doc"] = self.doc
        doc.update({"inputs": self.inputs, "outputs": self.outputs})
        if self.preprocess:
            doc["preprocess"] = self.preprocess
        if self.labels:
            doc["labels"] = self.labels
        if self.weights:
            doc["weights_file"] = weights_name
            with open(os.path.join(os.path.dirname(json_path), weights_name), "wb") as f:
                f.write(self.weights)
        doc["initializers"] = self.initializers
        doc["nodes"] = self.nodes
        with open(json_path, "w") as f:
            f.write(_dump(doc) + "\n")


def _dump(doc):
    """JSON with one initializer or node per line: diffable, and small even with inline data."""
    def one_line(v):
        return json.dumps(v, separators=(", ", ": "))

    parts = []
    for key, value in doc.items():
        if key == "initializers":
            body = ",\n".join("    %s: %s" % (json.dumps(k), one_line(v)) for k, v in value.items())
            parts.append('  "initializers": {\n%s\n  }' % body)
        elif key in ("nodes", "inputs"):
            body = ",\n".join("    " + one_line(v) for v in value)
            parts.append('  %s: [\n%s\n  ]' % (json.dumps(key), body))
        else:
            parts.append("  %s: %s" % (json.dumps(key), one_line(value)))
    return "{\n" + ",\n".join(parts) + "\n}"
