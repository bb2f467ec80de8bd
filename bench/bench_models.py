#!/usr/bin/env python3
"""The models the comparisons run, built in PyTorch with random weights, and their export to ONNX.

    /usr/bin/python3 bench/bench_models.py OUT_DIR [--models NAME,NAME,...]

writes OUT_DIR/<name>.onnx (opset 13, eval mode, batch 1, random weights with a fixed
seed: nothing is downloaded) for issue 14's model set (ISSUE_14 below) or the models
named. compare_torch.py and compare_ort.py build their models here.

  mobilenet_v1        MobileNetV1 1.0 (Howard et al. 2017; not in torchvision), 224x224
  mobilenet_v2        torchvision MobileNetV2, 224x224
  mobilenet_v3_large  torchvision MobileNetV3-Large, 224x224
  efficientnet_b0     torchvision EfficientNet-B0, 224x224
  resnet18, resnet50  torchvision ResNet-18 / ResNet-50, 224x224
  squeezenet1_1       torchvision SqueezeNet 1.1, 224x224
  googlenet           torchvision GoogLeNet (no auxiliary heads), 224x224
  regnet_x_400mf      torchvision RegNetX-400MF, 224x224
  decoder             a linear projection, then three stride-2 4x4 ConvTranspose 8x8x256 -> 64x64x3
  lstm                models/lstm.json's LSTM: D 64, H 256, 32 steps, a linear head on the last state
  bilstm              a bidirectional LSTM, D 40, H 96, 20 steps, a linear head on every step
  gru                 a GRU, D 40, H 96, 20 steps, a linear head on every step

and a wider set beyond issue 14's (WIDER below: the models its work was not tuned on,
whose op patterns it did not cover), torchvision's at 224x224 but Inception V3 at 299x299:
  shufflenet_v2_x1_0, mnasnet1_0, mobilenet_v3_small, densenet121, resnet34,
  resnext50_32x4d, regnet_y_400mf, regnet_y_800mf, efficientnet_b1, efficientnet_v2_s,
  convnext_tiny, inception_v3, squeezenet1_0, alexnet, vgg11

and dense prediction (SEGMENTATION below: Resize, dilated windows, per-pixel outputs),
224x224 but the U-Net at 128x128, the upsampler at 64x64 and the style network at 256x256:
  fcn_resnet50, deeplabv3_mobilenet_v3_large, lraspp_mobilenet_v3_large (torchvision's,
  no auxiliary head; their "out"), unet (a 3-level U-Net, 32 to 256 channels, 2x2
  ConvTranspose up), upsampler (3x3 convs around a 2x bilinear and a 2x nearest Resize),
  style_transfer (Johnson et al.'s fast style transfer: reflection pads, instance norms)
"""
import argparse
import os
import sys
import warnings

import torch
import torchvision

OPSET = 13
ISSUE_14 = ["mobilenet_v1", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0", "resnet18", "resnet50",
            "squeezenet1_1", "googlenet", "regnet_x_400mf", "decoder", "bilstm", "gru"]
WIDER = ["shufflenet_v2_x1_0", "mnasnet1_0", "mobilenet_v3_small", "densenet121", "resnet34", "resnext50_32x4d",
         "regnet_y_400mf", "regnet_y_800mf", "efficientnet_b1", "efficientnet_v2_s", "convnext_tiny", "inception_v3",
         "squeezenet1_0", "alexnet", "vgg11"]
SEGMENTATION = ["fcn_resnet50", "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large", "unet", "upsampler",
                "style_transfer"]


def mobilenet_v1(width=1.0, classes=1000):
    """MobileNetV1 (Howard et al. 2017, Table 1): 3x3 conv then 13 depthwise-separable blocks."""
    def c(n):
        return int(n * width)

    def conv_bn(cin, cout, stride):
        return [torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False), torch.nn.BatchNorm2d(cout), torch.nn.ReLU6()]

    def separable(cin, cout, stride):
        return [torch.nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), torch.nn.BatchNorm2d(cin),
                torch.nn.ReLU6(), torch.nn.Conv2d(cin, cout, 1, bias=False), torch.nn.BatchNorm2d(cout),
                torch.nn.ReLU6()]

    plan = [(32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1), (256, 512, 2)]
    plan += [(512, 512, 1)] * 5 + [(512, 1024, 2), (1024, 1024, 1)]
    layers = conv_bn(3, c(32), 2)
    for cin, cout, stride in plan:
        layers += separable(c(cin), c(cout), stride)
    layers += [torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(c(1024), classes),
               torch.nn.Softmax(dim=1)]
    return torch.nn.Sequential(*layers)


class LstmClassifier(torch.nn.Module):
    """models/lstm.json: one LSTM layer over [T, N, D], a linear head on the last hidden state."""

    def __init__(self, input_size=64, hidden_size=256, classes=10):
        super().__init__()
        self.lstm = torch.nn.LSTM(input_size, hidden_size)
        self.fc = torch.nn.Linear(hidden_size, classes)

    def forward(self, x):
        _, (h, _) = self.lstm(x)
        return self.fc(h.reshape(h.shape[1], -1))


class RecurrentTagger(torch.nn.Module):
    """A recurrent layer (torch.nn.LSTM or GRU) over [T, N, D] and a linear head on every step."""

    def __init__(self, cell, input_size=40, hidden_size=96, classes=10, bidirectional=False):
        super().__init__()
        self.rnn = cell(input_size, hidden_size, bidirectional=bidirectional)
        self.head = torch.nn.Linear(hidden_size * (2 if bidirectional else 1), classes)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y)


class Decoder(torch.nn.Module):
    """models/deconv_decoder.json: latent -> 8x8x256 -> three stride-2 upsamplings -> 64x64x3."""

    def __init__(self, latent=100):
        super().__init__()
        self.project = torch.nn.Linear(latent, 256 * 8 * 8)
        self.up = torch.nn.ModuleList(torch.nn.ConvTranspose2d(cin, cout, 4, stride=2, padding=1)
                                      for cin, cout in ((256, 128), (128, 64), (64, 3)))

    def forward(self, z):
        x = torch.relu(self.project(z).reshape(-1, 256, 8, 8))
        x = torch.relu(self.up[0](x))
        x = torch.relu(self.up[1](x))
        return torch.tanh(self.up[2](x))


class SegmentationOutput(torch.nn.Module):
    """A torchvision segmentation model's "out" map (the models return a dict)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


class UNet(torch.nn.Module):
    """Ronneberger et al.'s U-Net, 3 levels: two 3x3 conv + BN + ReLU per level, 2x2 max
    pools down, 2x2 stride-2 ConvTranspose up, skip connections concatenated."""

    def __init__(self, width=32, classes=2):
        super().__init__()

        def block(cin, cout):
            return torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 3, padding=1), torch.nn.BatchNorm2d(cout),
                                       torch.nn.ReLU(), torch.nn.Conv2d(cout, cout, 3, padding=1),
                                       torch.nn.BatchNorm2d(cout), torch.nn.ReLU())

        c = width
        self.down = torch.nn.ModuleList([block(3, c), block(c, 2 * c), block(2 * c, 4 * c)])
        self.bottom = block(4 * c, 8 * c)
        self.up = torch.nn.ModuleList(torch.nn.ConvTranspose2d(2 * k, k, 2, stride=2) for k in (4 * c, 2 * c, c))
        self.merge = torch.nn.ModuleList([block(8 * c, 4 * c), block(4 * c, 2 * c), block(2 * c, c)])
        self.head = torch.nn.Conv2d(c, classes, 1)

    def forward(self, x):
        skips = []
        for down in self.down:
            x = down(x)
            skips.append(x)
            x = torch.nn.functional.max_pool2d(x, 2)
        x = self.bottom(x)
        for up, merge, skip in zip(self.up, self.merge, reversed(skips)):
            x = merge(torch.cat([up(x), skip], 1))
        return self.head(x)


class Upsampler(torch.nn.Module):
    """3x3 convolutions around a 2x bilinear and a 2x nearest upsampling: 64x64 -> 256x256."""

    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Conv2d(3, 64, 3, padding=1), torch.nn.Conv2d(64, 64, 3, padding=1)
        self.c = torch.nn.Conv2d(64, 3, 3, padding=1)

    def forward(self, x):
        x = torch.relu(self.a(x))
        x = torch.nn.functional.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
        x = torch.relu(self.b(x))
        x = torch.nn.functional.interpolate(x, scale_factor=2, mode="nearest")
        return self.c(x)


class StyleTransfer(torch.nn.Module):
    """Johnson et al.'s fast style transfer network, as pytorch/examples' TransformerNet:
    reflection-padded convolutions with instance normalisation, three down (9x9, two 3x3
    stride 2), five residual blocks at 128 channels, two nearest 2x upsamplings each
    before a 3x3 convolution, and a 9x9 one back to RGB."""

    def __init__(self):
        super().__init__()

        def conv(cin, cout, k, stride=1, norm=True, relu=True):
            layers = [torch.nn.ReflectionPad2d(k // 2), torch.nn.Conv2d(cin, cout, k, stride)]
            if norm:
                layers.append(torch.nn.InstanceNorm2d(cout, affine=True))
            if relu:
                layers.append(torch.nn.ReLU())
            return torch.nn.Sequential(*layers)

        self.down = torch.nn.Sequential(conv(3, 32, 9), conv(32, 64, 3, 2), conv(64, 128, 3, 2))
        self.res = torch.nn.ModuleList(
            torch.nn.Sequential(conv(128, 128, 3), conv(128, 128, 3, relu=False)) for _ in range(5))
        self.up = torch.nn.ModuleList([conv(128, 64, 3), conv(64, 32, 3)])
        self.out = conv(32, 3, 9, norm=False, relu=False)

    def forward(self, x):
        x = self.down(x)
        for block in self.res:
            x = x + block(x)
        for up in self.up:
            x = up(torch.nn.functional.interpolate(x, scale_factor=2, mode="nearest"))
        return self.out(x)


def _segmentation(name):
    model = getattr(torchvision.models.segmentation, name)
    return lambda: (SegmentationOutput(model(weights=None, weights_backbone=None, num_classes=21, aux_loss=False)),
                    torch.rand(1, 3, 224, 224))


def _vision(name, **kw):
    return lambda: (getattr(torchvision.models, name)(weights=None, **kw), torch.rand(1, 3, 224, 224))


# name -> a function building (model, example input); built on demand, as ResNet-50 and
# EfficientNet take seconds each.
BUILDERS = {
    "mobilenet_v1": lambda: (mobilenet_v1(), torch.rand(1, 3, 224, 224)),
    "mobilenet_v2": _vision("mobilenet_v2"),
    "mobilenet_v3_large": _vision("mobilenet_v3_large"),
    "efficientnet_b0": _vision("efficientnet_b0"),
    "resnet18": _vision("resnet18"),
    "resnet50": _vision("resnet50"),
    "squeezenet1_1": _vision("squeezenet1_1"),
    "googlenet": _vision("googlenet", aux_logits=False, init_weights=False),
    "regnet_x_400mf": _vision("regnet_x_400mf"),
    "decoder": lambda: (Decoder(), torch.rand(1, 100)),
    "lstm": lambda: (LstmClassifier(), torch.rand(32, 1, 64)),
    "bilstm": lambda: (RecurrentTagger(torch.nn.LSTM, bidirectional=True), torch.rand(20, 1, 40)),
    "gru": lambda: (RecurrentTagger(torch.nn.GRU), torch.rand(20, 1, 40)),
    **{name: _vision(name) for name in WIDER if name != "inception_v3"},
    "inception_v3": lambda: (torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=False),
                             torch.rand(1, 3, 299, 299)),
    "fcn_resnet50": _segmentation("fcn_resnet50"),
    "deeplabv3_mobilenet_v3_large": _segmentation("deeplabv3_mobilenet_v3_large"),
    "lraspp_mobilenet_v3_large": lambda: (SegmentationOutput(torchvision.models.segmentation.lraspp_mobilenet_v3_large(
        weights=None, weights_backbone=None)), torch.rand(1, 3, 224, 224)),
    "unet": lambda: (UNet(), torch.rand(1, 3, 128, 128)),
    "upsampler": lambda: (Upsampler(), torch.rand(1, 3, 64, 64)),
    "style_transfer": lambda: (StyleTransfer(), torch.rand(1, 3, 256, 256)),
}


def parse_names(text, default):
    """The comma-separated model names of a --models flag; exits naming the first unknown one."""
    names = text.split(",") if text else list(default)
    unknown = [n for n in names if n not in BUILDERS]
    if unknown:
        sys.exit(f"--models: unknown model {unknown[0]!r}; choose from {', '.join(BUILDERS)}")
    return names


def build(name):
    """(model in eval mode, example input) with the seed fixed per model, so a model's weights
    do not depend on which others were built before it."""
    torch.manual_seed(0)
    model, x = BUILDERS[name]()
    return model.eval(), x


def export(model, x, path):
    """The model as ONNX at OPSET, its input named "input" and its output "output"."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's tracing notes are not about the comparison
        torch.onnx.export(model, (x,), path, opset_version=OPSET, input_names=["input"], output_names=["output"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", help="folder to write <name>.onnx into (created if missing)")
    parser.add_argument("--models", help=f"comma-separated (default: {','.join(ISSUE_14)})")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name in parse_names(args.models, ISSUE_14):
        path = os.path.join(args.out_dir, name + ".onnx")
        export(*build(name), path)
        print(path)


if __name__ == "__main__":
    main()
