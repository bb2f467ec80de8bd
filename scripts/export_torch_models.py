#!/usr/bin/env python3
"""Exports reference models from PyTorch as test cases in the ONNX backend-test layout.

    /usr/bin/python3 scripts/export_torch_models.py OUT_DIR

writes OUT_DIR/<case>/model.onnx and OUT_DIR/<case>/test_data_set_0/{input,output}_K.pb
(PyTorch's own outputs) for

  mobilenet_v2   torchvision MobileNetV2, 1x3x224x224
  resnet18       torchvision ResNet-18, 1x3x224x224
  lstm           torch.nn.LSTM (2 layers) with a linear head, 12 steps of batch 2
  lstm_last      torch.nn.LSTM (2 layers) with a linear head on h_n[-1], 9 steps of batch 2
  gru            torch.nn.GRU (2 layers, bidirectional) with a linear head on y[-1], 10 steps of batch 3
  tiny_decoder   Conv2d then ConvTranspose2d, 1x3x32x32
  conv1d_net     Conv1d, BatchNorm1d, ReLU, MaxPool1d, AdaptiveAvgPool1d and a linear
                 head over 2x4x64 (audio and time series)
  norm_net       Conv2d with InstanceNorm2d (affine and not), GroupNorm, LocalResponseNorm
                 (exported as one LRN node) and InstanceNorm1d, 1x3x32x32
  transformer    torch.nn.TransformerEncoderLayer (d_model 32, 4 heads, feed-forward 64,
                 batch_first), batch 2 of 10 tokens
  indexing       a linear layer, then advanced indexing y[rows, cols], index_put, scatter
                 and scatter_add and F.dropout(p=0.0) over 2x6x8, exported at opset 16
                 (ScatterND, ScatterElements with and without reduction add, Dropout with
                 its mask output)

and, at 64x64 (AlexNet at 224x224, the least its classifier's 6x6 pooling exports at),
the torchvision classifiers of TORCHVISION below, each with its output scaled to a largest
magnitude of 1 (a Mul by a constant after the model: with random weights some logits are
~1e-14, which any absolute tolerance would pass unchecked);

and OUT_DIR/expected_costs.json: each model's MACs and parameters counted here with
forward hooks (Conv and ConvTranspose in 1-D and 2-D, Linear, LSTM, GRU, MultiheadAttention,
Swin's window attention), independently of the engine.
`engine_check OUT_DIR` runs the cases; tests/torch_models/check_costs.py compares costs.

Weights are random (weights=None: nothing is downloaded) with a fixed seed. The models
are exported in eval mode with training=TrainingMode.PRESERVE, which keeps
BatchNormalization as its own node instead of folding it into the convolutions.
"""
import argparse
import json
import os

import numpy as np
import torch
import torchvision
from onnx import numpy_helper

OPSET = 13  # the opset net.json follows
OPSETS = {"indexing": 16}  # cases exported at another opset: scatter_add's reduction is opset 16's


class LstmWithHead(torch.nn.Module):
    """A sequence model: a 2-layer LSTM over [T, N, D] and a linear head on every step."""

    def __init__(self, input_size=16, hidden_size=32, classes=10):
        super().__init__()
        self.lstm = torch.nn.LSTM(input_size, hidden_size, num_layers=2)
        self.head = torch.nn.Linear(hidden_size, classes)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y)


class LstmLastState(torch.nn.Module):
    """A 2-layer LSTM over [T, N, D] and a linear head on the last layer's final state h_n[-1]."""

    def __init__(self, input_size=12, hidden_size=20, classes=5):
        super().__init__()
        self.lstm = torch.nn.LSTM(input_size, hidden_size, num_layers=2)
        self.head = torch.nn.Linear(hidden_size, classes)

    def forward(self, x):
        _, (h, _) = self.lstm(x)
        return self.head(h[-1])


class GruClassifier(torch.nn.Module):
    """A 2-layer bidirectional GRU over [T, N, D] and a linear head on the last step y[-1]."""

    def __init__(self, input_size=16, hidden_size=24, classes=6):
        super().__init__()
        self.gru = torch.nn.GRU(input_size, hidden_size, num_layers=2, bidirectional=True)
        self.head = torch.nn.Linear(2 * hidden_size, classes)

    def forward(self, x):
        y, _ = self.gru(x)
        return self.head(y[-1])


class TinyDecoder(torch.nn.Module):
    """Downsamples with a strided convolution and upsamples with a transposed one."""

    def __init__(self):
        super().__init__()
        self.down = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.up = torch.nn.ConvTranspose2d(8, 3, 4, stride=2, padding=1)

    def forward(self, x):
        return torch.sigmoid(self.up(torch.relu(self.down(x))))


class OnnxLrn(torch.autograd.Function):
    """F.local_response_norm, exported as ONNX's LRN node."""

    @staticmethod
    def forward(ctx, x, size, alpha, beta, k):
        return torch.nn.functional.local_response_norm(x, size, alpha, beta, k)

    @staticmethod
    def symbolic(g, x, size, alpha, beta, k):
        return g.op("LRN", x, size_i=size, alpha_f=alpha, beta_f=beta, bias_f=k)


class LocalResponseNormAsLrn(torch.nn.LocalResponseNorm):
    """nn.LocalResponseNorm exported as one LRN node. torch 1.13 writes the module as its
    decomposition (Mul, a 5-D Pad, a 3-D AveragePool, an If, Mul, Add, Pow, Div), which
    the engine does not load (If). Odd sizes only: for an even size PyTorch's window
    starts a channel before ONNX's."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        assert size % 2 == 1, "PyTorch's and ONNX's LRN windows differ for an even size"
        super().__init__(size, alpha, beta, k)

    def forward(self, x):
        return OnnxLrn.apply(x, self.size, self.alpha, self.beta, self.k)


class NormNet(torch.nn.Module):
    """Convolutions with normalisations between them on [N, 3, H, W]: InstanceNorm2d with
    and without its affine, GroupNorm (Reshape, InstanceNormalization, Reshape, Mul, Add),
    LocalResponseNorm and InstanceNorm1d. The affine parameters are random: their
    defaults, ones and zeros, would hide a scale and shift swapped or dropped."""

    def __init__(self, classes=5):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.norm1 = torch.nn.InstanceNorm2d(16, affine=True)
        self.conv2 = torch.nn.Conv2d(16, 16, 3, stride=2, padding=1)
        self.group_norm = torch.nn.GroupNorm(4, 16)
        # alpha 0.5, not the default 1e-4, so that the window's sum of squares shows.
        self.lrn = LocalResponseNormAsLrn(5, alpha=0.5, beta=0.75, k=1.0)
        self.conv3 = torch.nn.Conv2d(16, 8, 3, padding=1)
        self.norm3 = torch.nn.InstanceNorm2d(8)
        self.norm1d = torch.nn.InstanceNorm1d(8, affine=True)
        self.head = torch.nn.Linear(8, classes)
        for norm in (self.norm1, self.group_norm, self.norm1d):
            torch.nn.init.uniform_(norm.weight, 0.5, 1.5)
            torch.nn.init.uniform_(norm.bias, -0.5, 0.5)

    def forward(self, x):
        x = torch.relu(self.norm1(self.conv1(x)))
        x = self.lrn(self.group_norm(self.conv2(x)))
        x = torch.relu(self.norm3(self.conv3(x)))
        x = self.norm1d(torch.flatten(x, 2))  # [N, 8, H*W]
        # Logits at every position: a mean over H*W here would be norm1d's bias alone.
        return self.head(x.transpose(1, 2))


def norm_net_case():
    """(NormNet, input) from their own seed, leaving the global generator as it was: the
    cases built after it keep their weights."""
    with torch.random.fork_rng():
        torch.manual_seed(1)
        return NormNet(), torch.rand(1, 3, 32, 32)


class Conv1dNet(torch.nn.Module):
    """A 1-D convolutional classifier over [N, C, L] signals."""

    def __init__(self, channels=4, classes=5):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv1d(channels, 16, 5, padding=2), torch.nn.BatchNorm1d(16), torch.nn.ReLU(),
            torch.nn.MaxPool1d(2),
            torch.nn.Conv1d(16, 32, 3, stride=2, padding=1), torch.nn.BatchNorm1d(32), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool1d(1))
        self.head = torch.nn.Linear(32, classes)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


class IndexingNet(torch.nn.Module):
    """Indexing as PyTorch exports it: y[rows, cols] (Gathers of the flattened tensor),
    index_put (ScatterND), scatter and scatter_add (ScatterElements; with reduction add
    from opset 16), and F.dropout(p=0.0), a training-mode Dropout whose ratio 0 drops
    nothing, exported with its mask output (as Swin-T's attention is)."""

    def __init__(self, features=8):
        super().__init__()
        self.linear = torch.nn.Linear(features, features)
        self.register_buffer("rows", torch.tensor([0, 1, 1, 0]))
        self.register_buffer("cols", torch.tensor([5, 4, 2, 3]))
        # index_put's -1 stays -1 in ScatterND; y[rows, cols] takes no negative index, which
        # torch 1.13 exports as a flat row * 6 + col: the wrong element.
        self.register_buffer("put_cols", torch.tensor([-1, 2]))
        # Along dim 1 (of 6), with repeats that scatter_add sums; a permutation along dim 2.
        self.register_buffer("index", torch.tensor([0, 2, 2, 5, 1, 1, 0, 3]).repeat(2, 6, 1))
        self.register_buffer("perm", torch.tensor([3, 0, 7, 1, 6, 2, 5, 4]).repeat(2, 6, 1))

    def forward(self, x):
        y = torch.nn.functional.dropout(self.linear(x), p=0.0)
        picked = y[self.rows, self.cols]
        z = y.index_put((self.rows[:2], self.put_cols), picked[2:] * 2.0)
        s = torch.zeros_like(y).scatter_add(1, self.index, y)
        return z + s + y.scatter(2, self.perm, y * 0.5) + picked.sum(0)


class EinsumAttention(torch.nn.Module):
    """Self-attention on [N, T, E] written with torch.einsum, exported as Einsum nodes: the
    scores "bhid,bhjd->bhij" and the weighted values "bhij,bhjd->bhid"."""

    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.out = torch.nn.Linear(dim, dim)

    def forward(self, x):
        n, t, e = x.shape
        q, k, v = self.qkv(x).reshape(n, t, 3, self.heads, e // self.heads).permute(2, 0, 3, 1, 4)
        a = torch.einsum("bhid,bhjd->bhij", q, k).mul(q.shape[-1] ** -0.5).softmax(-1)
        return self.out(torch.einsum("bhij,bhjd->bhid", a, v).transpose(1, 2).reshape(n, t, e))


# torchvision classifiers that export at opset 13, by constructor; VGG is left out only for
# its size (507 MiB of weights at the 224x224 its classifier needs). ShuffleNetV2's x.chunk
# exports as Slices of run-time data, its channel shuffle as Reshape/Transpose/Reshape.
# Swin-T's shifted windows build their attention mask with ScatterND and Not (folded at
# load) and its attention runs F.dropout(p=0.0): Dropout in training mode with its mask.
TORCHVISION = ["mobilenet_v3_small", "mobilenet_v3_large", "squeezenet1_1", "efficientnet_b0", "googlenet",
               "densenet121", "mnasnet0_5", "regnet_x_400mf", "regnet_y_400mf", "resnet50", "alexnet",
               "shufflenet_v2_x0_5", "swin_t"]


class UnitScale(torch.nn.Module):
    """model(x) * scale, scale fixed so that the output's largest magnitude on `x` is 1."""

    def __init__(self, model, x):
        super().__init__()
        self.model = model.eval()
        with torch.no_grad():
            self.scale = float(1.0 / model(x).abs().max())

    def forward(self, x):
        return self.model(x) * self.scale


def torchvision_case(name):
    """(model, input) of one TORCHVISION entry, random weights with the seed fixed per model."""
    torch.manual_seed(0)
    extra = {"aux_logits": False, "init_weights": False} if name == "googlenet" else {}
    model = getattr(torchvision.models, name)(weights=None, **extra)
    size = 224 if name == "alexnet" else 64
    x = torch.rand(1, 3, size, size)
    return UnitScale(model, x), x


def count_costs(model, x):
    """MACs by the engine's cost conventions, counted with forward hooks."""
    macs = 0
    conv_method_extra = []

    def conv(m, inputs, out):
        # 1-D and 2-D alike: kernel taps K (Kh*Kw or K) and spatial sizes (H*W or L).
        nonlocal macs
        k = int(np.prod(m.kernel_size))
        n, cin = inputs[0].shape[:2]
        cout = out.shape[1]
        spatial_in, spatial_out = int(np.prod(inputs[0].shape[2:])), int(np.prod(out.shape[2:]))
        if isinstance(m, (torch.nn.ConvTranspose1d, torch.nn.ConvTranspose2d)):
            # col2im method: one GEMM over the input; conv method: a convolution over the
            # zero-filled output-sized map. Which one runs is the engine's choice.
            macs += n * k * cin * (cout // m.groups) * spatial_in
            conv_method_extra.append(n * k * (cin // m.groups) * cout * spatial_out
                                     - n * k * cin * (cout // m.groups) * spatial_in)
        else:
            macs += n * k * (cin // m.groups) * cout * spatial_out

    def linear(m, inputs, out):
        nonlocal macs
        macs += out.numel() // m.out_features * m.in_features * m.out_features

    def recurrent(m, inputs, out):
        # Per step, batch row, layer and direction: gates*H*(D+H), D being the layer's
        # input (the previous layer's H per direction); LSTM 4 gates, GRU 3.
        nonlocal macs
        gates = 4 if isinstance(m, torch.nn.LSTM) else 3
        dirs = 2 if m.bidirectional else 1
        steps, batch = inputs[0].shape[0], inputs[0].shape[1]
        for layer in range(m.num_layers):
            d = m.input_size if layer == 0 else dirs * m.hidden_size
            macs += steps * batch * dirs * gates * m.hidden_size * (d + m.hidden_size)

    def attention(m, inputs, out):
        # Self-attention on [N, T, E] (batch_first): the q, k, v projections (3 E x E per
        # token), the two batched products per head, Q K^T ([T, d] x [d, T]) and A V
        # ([T, T] x [T, d]), each T*T*d MACs for d = E / heads, as MatMul counts them, and
        # the output projection (its Linear's hook never fires: the functional form
        # reads out_proj's weight directly).
        nonlocal macs
        n, t, e = inputs[0].shape
        macs += n * t * 3 * e * e + 2 * n * m.num_heads * t * t * (e // m.num_heads) + n * t * e * e

    def einsum_attention(m, inputs, out):
        # The two einsums per head, T*T*d MACs each (its Linears' hooks count the rest).
        nonlocal macs
        n, t, e = inputs[0].shape
        macs += 2 * n * m.heads * t * t * (e // m.heads)

    def window_attention(m, inputs, out):
        # torchvision's Swin attention calls F.linear and matmul itself, so no Linear hook
        # fires: its qkv and output projections (4 C x C per token) and the two products
        # per head (Q K^T and A V, N*N*d each: N*N*C for all heads) on each window of N
        # tokens, the map [B, H, W, C] padded to whole windows.
        nonlocal macs
        b, h, w, c = inputs[0].shape
        wh, ww = m.window_size
        windows = b * -(-h // wh) * -(-w // ww)
        n = wh * ww
        macs += windows * n * 4 * c * c + 2 * windows * n * n * c

    hooks = []
    for module in model.modules():
        if isinstance(module, (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.ConvTranspose1d, torch.nn.ConvTranspose2d)):
            hooks.append(module.register_forward_hook(conv))
        elif isinstance(module, torch.nn.Linear):
            hooks.append(module.register_forward_hook(linear))
        elif isinstance(module, (torch.nn.LSTM, torch.nn.GRU)):
            hooks.append(module.register_forward_hook(recurrent))
        elif isinstance(module, torch.nn.MultiheadAttention):
            assert module.batch_first and module._qkv_same_embed_dim
            hooks.append(module.register_forward_hook(attention))
        elif isinstance(module, EinsumAttention):
            hooks.append(module.register_forward_hook(einsum_attention))
        elif isinstance(module, torchvision.models.swin_transformer.ShiftedWindowAttention):
            hooks.append(module.register_forward_hook(window_attention))
    # With gradients on: without them, an eval-mode TransformerEncoderLayer takes its fused
    # fast path, which calls none of its modules and so fires no hook.
    with torch.enable_grad():
        model(x)
    for h in hooks:
        h.remove()
    # Parameters as the engine counts them: every initializer a node reads, so
    # BatchNormalization's running mean and variance too.
    params = sum(p.numel() for p in model.parameters())
    params += sum(b.numel() for name, b in model.named_buffers() if not name.endswith("num_batches_tracked"))
    costs = {"macs": int(macs), "params": int(params)}
    if conv_method_extra:
        costs["macs_with_convtranspose_as_conv"] = int(macs + sum(conv_method_extra))
    return costs


def export_case(out_dir, name, model, x, opset=OPSET):
    case = os.path.join(out_dir, name)
    data = os.path.join(case, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    model.eval()
    with torch.no_grad():
        y = model(x)
    torch.onnx.export(model, (x,), os.path.join(case, "model.onnx"), opset_version=opset,
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False,
                      input_names=["input"], output_names=["output"])
    for stem, tensor, tensor_name in (("input_0", x, "input"), ("output_0", y, "output")):
        proto = numpy_helper.from_array(tensor.numpy().astype(np.float32), tensor_name)
        with open(os.path.join(data, stem + ".pb"), "wb") as f:
            f.write(proto.SerializeToString())
    return count_costs(model, x)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    args = parser.parse_args()
    torch.manual_seed(0)
    image = torch.rand(1, 3, 224, 224)
    cases = {
        "mobilenet_v2": (torchvision.models.mobilenet_v2(weights=None), image),
        "resnet18": (torchvision.models.resnet18(weights=None), image),
        "lstm": (LstmWithHead(), torch.rand(12, 2, 16)),
        "lstm_last": (LstmLastState(), torch.rand(9, 2, 12)),
        "gru": (GruClassifier(), torch.rand(10, 3, 16)),
        "tiny_decoder": (TinyDecoder(), torch.rand(1, 3, 32, 32)),
        "conv1d_net": (Conv1dNet(), torch.rand(2, 4, 64)),
        "norm_net": norm_net_case(),
        "transformer": (torch.nn.TransformerEncoderLayer(32, 4, 64, batch_first=True), torch.rand(2, 10, 32)),
        "indexing": (IndexingNet(), torch.rand(2, 6, 8)),
        "einsum_attention": (EinsumAttention(), torch.rand(2, 10, 32)),
    }
    cases.update({name: torchvision_case(name) for name in TORCHVISION})
    costs = {}
    for name, (model, x) in cases.items():
        costs[name] = export_case(args.out_dir, name, model, x, OPSETS.get(name, OPSET))
        print(f"{name}: {costs[name]['macs']:,} MACs, {costs[name]['params']:,} parameters")
    with open(os.path.join(args.out_dir, "expected_costs.json"), "w") as f:
        json.dump(costs, f, indent=1)


if __name__ == "__main__":
    main()
