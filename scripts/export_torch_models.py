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

and, at 64x64 (AlexNet at 224x224, the least its classifier's 6x6 pooling exports at),
the torchvision classifiers of TORCHVISION below, each with its output scaled to a largest
magnitude of 1 (a Mul by a constant after the model: with random weights some logits are
~1e-14, which any absolute tolerance would pass unchecked);

and OUT_DIR/expected_costs.json: each model's MACs and parameters counted here with
forward hooks (Conv and ConvTranspose in 1-D and 2-D, Linear, LSTM, GRU), independently of the engine.
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


# torchvision classifiers that export at opset 13, by constructor; VGG is left out only for
# its size (507 MiB of weights at the 224x224 its classifier needs). ShuffleNetV2's x.chunk
# exports as Slices of run-time data, its channel shuffle as Reshape/Transpose/Reshape.
TORCHVISION = ["mobilenet_v3_small", "mobilenet_v3_large", "squeezenet1_1", "efficientnet_b0", "googlenet",
               "densenet121", "mnasnet0_5", "regnet_x_400mf", "regnet_y_400mf", "resnet50", "alexnet",
               "shufflenet_v2_x0_5"]


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

    hooks = []
    for module in model.modules():
        if isinstance(module, (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.ConvTranspose1d, torch.nn.ConvTranspose2d)):
            hooks.append(module.register_forward_hook(conv))
        elif isinstance(module, torch.nn.Linear):
            hooks.append(module.register_forward_hook(linear))
        elif isinstance(module, (torch.nn.LSTM, torch.nn.GRU)):
            hooks.append(module.register_forward_hook(recurrent))
    with torch.no_grad():
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


def export_case(out_dir, name, model, x):
    case = os.path.join(out_dir, name)
    data = os.path.join(case, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    model.eval()
    with torch.no_grad():
        y = model(x)
    torch.onnx.export(model, (x,), os.path.join(case, "model.onnx"), opset_version=OPSET,
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
    }
    cases.update({name: torchvision_case(name) for name in TORCHVISION})
    costs = {}
    for name, (model, x) in cases.items():
        costs[name] = export_case(args.out_dir, name, model, x)
        print(f"{name}: {costs[name]['macs']:,} MACs, {costs[name]['params']:,} parameters")
    with open(os.path.join(args.out_dir, "expected_costs.json"), "w") as f:
        json.dump(costs, f, indent=1)


if __name__ == "__main__":
    main()
