#!/usr/bin/env python3
"""Regenerates the bundled net.json models: python3 models/make_models.py

Weights are random ("init": "random") unless a model is trained for real; the
costs, not the accuracy, are what these models are for.
"""
import os
import random

from netjson_builder import NetBuilder

HERE = os.path.dirname(os.path.abspath(__file__))


def small_cnn():
    """The spec's tiny CNN: two conv/relu/pool stages and a classifier.

    Exercises all three initializer forms: conv weights in small_cnn.bin (offset),
    biases inline (data), the classifier random (init)."""
    b = NetBuilder("small_cnn", doc="Two conv stages and a linear classifier on 32x32 RGB.")
    rng = random.Random(7)
    x = b.input("image", [1, 3, 32, 32])
    x = b.node("Conv", "conv1", [x, b.stored("conv1.W", [8, 3, 3, 3], [rng.uniform(-0.3, 0.3) for _ in range(8 * 27)]),
                                 b.data("conv1.B", [8], [rng.uniform(-0.1, 0.1) for _ in range(8)])],
               {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]})
    x = b.node("Relu", "relu1", [x])
    x = b.node("MaxPool", "pool1", [x], {"kernel_shape": [2, 2], "strides": [2, 2]})
    x = b.node("Conv", "conv2", [x, b.stored("conv2.W", [16, 8, 3, 3], [rng.uniform(-0.2, 0.2) for _ in range(16 * 72)]),
                                 b.data("conv2.B", [16], [rng.uniform(-0.1, 0.1) for _ in range(16)])],
               {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]})
    x = b.node("Relu", "relu2", [x])
    x = b.node("MaxPool", "pool2", [x], {"kernel_shape": [2, 2], "strides": [2, 2]})
    x = b.node("Flatten", "flat", [x], {"axis": 1})
    x = b.node("Gemm", "fc", [x, b.init("fc.W", [10, 1024], seed=7), b.init("fc.B", [10], "zeros")], {"transB": 1})
    b.outputs.append(b.node("Softmax", "prob", [x], {"axis": 1}))
    b.write(os.path.join(HERE, "small_cnn.json"))


def mobilenet_v1(alpha=1.0, resolution=224):
    """MobileNet V1 (Howard et al. 2017): conv, 13 depthwise-separable blocks, classifier.

    Each conv is followed by BatchNormalization and ReLU6, as trained; 568,740,352 MACs at 1.0/224."""
    b = NetBuilder("mobilenet_v1", doc="MobileNet V1 1.0/224 with random weights and BatchNormalization.")
    ch = lambda c: int(c * alpha)
    x = b.input("input", [1, 3, resolution, resolution])

    def conv_bn(name, x, cin, cout, k, stride, group=1):
        x = b.conv(name, x, cin, cout, k, stride, group, bias=False)
        x = b.batch_norm(name + "_bn", x, cout)
        return b.relu6(name + "_relu", x)

    x = conv_bn("conv1", x, 3, ch(32), 3, 2)
    blocks = [(32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1), (256, 512, 2)] + \
             [(512, 512, 1)] * 5 + [(512, 1024, 2), (1024, 1024, 1)]
    for i, (cin, cout, stride) in enumerate(blocks, 1):
        x = conv_bn(f"block{i}_dw", x, ch(cin), ch(cin), 3, stride, group=ch(cin))
        x = conv_bn(f"block{i}_pw", x, ch(cin), ch(cout), 1, 1)
    x = b.node("GlobalAveragePool", "pool", [x])
    x = b.node("Flatten", "flatten", [x], {"axis": 1})
    x = b.node("Gemm", "fc", [x, b.init("fc.W", [1000, ch(1024)]), b.init("fc.B", [1000], "zeros")], {"transB": 1})
    b.outputs.append(b.node("Softmax", "prob", [x], {"axis": 1}))
    b.write(os.path.join(HERE, "mobilenet_v1.json"))


def make_divisible(v, divisor=8):
    """Channel rounding of the MobileNetV2 reference code (and torchvision)."""
    n = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return n + divisor if n < 0.9 * v else n


def mobilenet_v2(width=1.0, resolution=224):
    """MobileNet V2 (Sandler et al. 2018) as torchvision builds it: inverted residual blocks
    (1x1 expansion, 3x3 depthwise, linear 1x1 projection), residual Adds where shapes allow.

    300,774,272 MACs at 1.0/224 and 582,195,824 at 1.4 (the paper: 300 M and 585 M)."""
    tag = str(width).replace(".", "_")
    b = NetBuilder("mobilenet_v2_" + tag, doc="MobileNet V2 %s/224 with random weights and BatchNormalization." % width)
    x = b.input("input", [1, 3, resolution, resolution])

    def conv_bn(name, x, cin, cout, k, stride, group=1, relu6=True):
        x = b.conv(name, x, cin, cout, k, stride, group, bias=False)
        x = b.batch_norm(name + "_bn", x, cout)
        return b.relu6(name + "_relu", x) if relu6 else x

    cin = make_divisible(32 * width)
    x = conv_bn("conv1", x, 3, cin, 3, 2)
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                (6, 320, 1, 1)]
    block = 0
    for t, c, n, s in settings:
        cout = make_divisible(c * width)
        for i in range(n):
            block += 1
            stride = s if i == 0 else 1
            hidden = int(round(cin * t))
            name = "block%d" % block
            y = x
            if t != 1:
                y = conv_bn(name + "_expand", y, cin, hidden, 1, 1)
            y = conv_bn(name + "_dw", y, hidden, hidden, 3, stride, group=hidden)
            y = conv_bn(name + "_project", y, hidden, cout, 1, 1, relu6=False)
            x = b.node("Add", name + "_add", [x, y]) if stride == 1 and cin == cout else y
            cin = cout
    last = make_divisible(1280 * max(1.0, width))
    x = conv_bn("conv_last", x, cin, last, 1, 1)
    x = b.node("GlobalAveragePool", "pool", [x])
    x = b.node("Flatten", "flatten", [x], {"axis": 1})
    x = b.node("Gemm", "fc", [x, b.init("fc.W", [1000, last]), b.init("fc.B", [1000], "zeros")], {"transB": 1})
    b.outputs.append(b.node("Softmax", "prob", [x], {"axis": 1}))
    b.write(os.path.join(HERE, "mobilenet_v2_%s.json" % tag))


def lstm(seq=32, batch=1, input_size=64, hidden=256, classes=10):
    """An LSTM over a sequence, then a linear classifier on its last hidden state.

    The seed's LSTM shapes (D=64, H=256) over 32 steps: 32 x 4*256*(64+256) = 10,485,760
    MACs, plus 2,560 for the head. Y is omitted (""): only Y_h is used."""
    b = NetBuilder("lstm", doc="LSTM (D=64, H=256, 32 steps, batch 1) with a linear head on the last hidden state; "
                               "random weights.")
    x = b.input("sequence", [seq, batch, input_size])
    b.node("LSTM", "lstm", [x, b.init("lstm.W", [1, 4 * hidden, input_size]), b.init("lstm.R", [1, 4 * hidden, hidden]),
                            b.init("lstm.B", [1, 8 * hidden])],
           {"hidden_size": hidden}, outputs=["", "lstm.Y_h"])
    h = b.node("Reshape", "last_hidden", ["lstm.Y_h", b.data("last_hidden.shape", [2], [batch, hidden])])
    x = b.node("Gemm", "fc", [h, b.init("fc.W", [classes, hidden]), b.init("fc.B", [classes], "zeros")], {"transB": 1},
               outputs=["logits"])
    b.outputs.append(x)
    b.write(os.path.join(HERE, "lstm.json"))


def deconv_decoder():
    """A DCGAN-style generator: a 100-d latent through a linear layer to 256x8x8, then
    three stride-2 ConvTranspose upsamplings (kernel 4, pad 1) to a 3x64x64 image.

    71,892,992 MACs with the col2im method, 282,656,768 with the conv method."""
    b = NetBuilder("deconv_decoder", doc="Latent [1,100] -> linear -> 256x8x8 -> three stride-2 ConvTranspose "
                                         "upsamplings -> 3x64x64 image in (-1, 1); random weights.")
    x = b.input("latent", [1, 100])
    x = b.node("Gemm", "project", [x, b.init("project.W", [256 * 8 * 8, 100]), b.init("project.B", [256 * 8 * 8],
                                                                                      "zeros")], {"transB": 1})
    x = b.node("Reshape", "to_map", [x, b.data("to_map.shape", [4], [1, 256, 8, 8])])
    x = b.node("Relu", "relu0", [x])
    for i, (cin, cout) in enumerate([(256, 128), (128, 64), (64, 3)], 1):
        x = b.conv_transpose(f"up{i}", x, cin, cout, 4, 2, 1)
        x = b.node("Relu" if i < 3 else "Tanh", f"relu{i}" if i < 3 else "image", [x])
    b.outputs.append(x)
    b.write(os.path.join(HERE, "deconv_decoder.json"))


def densenet_transition():
    """DenseNet-121's first transition (Huang et al. 2017): BatchNormalization, ReLU, a 1x1
    convolution halving 256 channels, a 2x2 average pool of stride 2, on 56x56. The engine
    pools first (pool_before_pointwise): 102,760,448 MACs as written, 25,690,112 run."""
    b = NetBuilder("densenet_transition", doc="DenseNet-121's first transition on 56x56x256: BN, ReLU, 1x1 conv "
                                             "256->128, 2x2 average pool; random weights.")
    x = b.input("input", [1, 256, 56, 56])
    x = b.batch_norm("norm", x, 256)
    x = b.node("Relu", "relu", [x])
    x = b.conv("conv", x, 256, 128, 1, bias=False)
    b.outputs.append(b.node("AveragePool", "pool", [x], {"kernel_shape": [2, 2], "strides": [2, 2]}))
    b.write(os.path.join(HERE, "densenet_transition.json"))


def seed_examples():
    """One small net per worked example in the notes the project grew from (docs/cost-model.md's worked examples), for
    checking that engine_bench reports exactly the notes' numbers. No biases: the
    notes' formulas leave them out."""
    def write(b):
        b.write(os.path.join(HERE, "seed", b.name + ".json"))

    b = NetBuilder("depthwise_separable", doc="Seed 003: 3x3 depthwise on 112x112x64 (7,225,344 MACs), then "
                                             "1x1 pointwise 64->128 (102,760,448); the regular 3x3 conv it "
                                             "replaces costs 924,844,032, 8.4x more.")
    x = b.input("input", [1, 64, 112, 112])
    x = b.conv("dw", x, 64, 64, 3, group=64, bias=False)
    x = b.batch_norm("dw_bn", x, 64)
    x = b.node("Relu", "dw_relu", [x])
    b.outputs.append(b.conv("pw", x, 64, 128, 1, bias=False))
    write(b)

    b = NetBuilder("regular_conv_3x3", doc="Seed 003: 3x3 conv, 64->128 on 112x112, same padding: 924,844,032 MACs.")
    b.outputs.append(b.conv("conv", b.input("input", [1, 64, 112, 112]), 64, 128, 3, bias=False))
    write(b)

    b = NetBuilder("mobilenet_v2_expansion_block",
                   doc="Seed 003: MobileNetV2 block on 112x112x64, expansion 6, 3x3 depthwise stride 1, 128 out: "
                       "(3*3 + 128 + 64) * 384 * 112 * 112 = 968,196,096 MACs.")
    x = b.input("input", [1, 64, 112, 112])
    x = b.conv("expand", x, 64, 384, 1, bias=False)
    x = b.relu6("expand_relu", b.batch_norm("expand_bn", x, 384))
    x = b.conv("dw", x, 384, 384, 3, group=384, bias=False)
    x = b.relu6("dw_relu", b.batch_norm("dw_bn", x, 384))
    x = b.conv("project", x, 384, 128, 1, bias=False)
    b.outputs.append(b.batch_norm("project_bn", x, 128))
    write(b)

    b = NetBuilder("max_pool_2x2", doc="Seed 003: 2x2 max-pool, stride 2, on 112x112x128: 1,605,632 FLOPs.")
    x = b.input("input", [1, 128, 112, 112])
    b.outputs.append(b.node("MaxPool", "pool", [x], {"kernel_shape": [2, 2], "strides": [2, 2]}))
    write(b)

    b = NetBuilder("matmul", doc="Seed 000: [1,M] x [M,N] is 2*M*N FLOPs; with seed 003's fully-connected example "
                                 "M=300, N=100: 30,000 MACs, 60,000 FLOPs.")
    x = b.input("input", [1, 300])
    b.outputs.append(b.node("MatMul", "fc", [x, b.init("fc.W", [300, 100])]))
    write(b)


if __name__ == "__main__":
    small_cnn()
    mobilenet_v1()
    mobilenet_v2(1.0)
    mobilenet_v2(1.4)
    lstm()
    deconv_decoder()
    densenet_transition()
    seed_examples()
