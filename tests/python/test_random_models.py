"""Models built at random from torch.nn layers, exported to ONNX and run at one and two
threads (and with each choice of algorithm the machine could make) against PyTorch's own
output: the layers (convolutions of every window, stride,
dilation, group and padding mode, transposed ones, pools, activations, normalisations,
upsamplings, element-wise tails) and the blocks of real networks (residual, inverted
residual with squeeze-and-excitation, depthwise-separable, concatenated branches) at
channel counts that take the blocked layouts and the fusions. Each seed is one model.

Left out, where PyTorch 1.13's exporter writes a model that means something else in ONNX
(ONNX Runtime agrees with the engine on each): circular padding (its Slice reads the
wrong columns), AvgPool2d(ceil_mode=True) with padding (one more row in the ONNX file's
own shapes) and nearest upsampling by a fraction (PyTorch's source index is
floor(o * in / out), ONNX's floor(o / scale))."""
import random
import warnings

import numpy as np
import pytest

import minfer

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional


def pick(*options):
    return random.choice(options)


class Lambda(nn.Module):
    def __init__(self, f, name):
        super().__init__()
        self.f, self.name = f, name

    def forward(self, x):
        return self.f(x)

    def extra_repr(self):
        return self.name


def batch_norm(c):
    m = nn.BatchNorm2d(c, eps=pick(1e-5, 1e-3))
    m.running_mean.uniform_(-0.5, 0.5)
    m.running_var.uniform_(0.5, 2)
    m.weight.data.uniform_(0.5, 1.5)
    m.bias.data.uniform_(-0.3, 0.3)
    return m


def activation():
    return pick(nn.ReLU(), nn.ReLU6(), nn.LeakyReLU(0.1), nn.ELU(), nn.GELU(), nn.SiLU(), nn.Sigmoid(), nn.Tanh(),
                nn.Hardswish(), nn.Hardsigmoid(), nn.Softplus(), nn.Mish(), nn.PReLU(), nn.Identity())


class SqueezeExcite(nn.Module):
    def __init__(self, c):
        super().__init__()
        r = max(1, c // 4)
        self.reduce, self.expand, self.gate = nn.Conv2d(c, r, 1), nn.Conv2d(r, c, 1), pick(nn.Sigmoid(), nn.Hardsigmoid())

    def forward(self, x):
        return x * self.gate(self.expand(F.relu(self.reduce(F.adaptive_avg_pool2d(x, 1)))))


def layer(c):
    """One torch.nn layer on c channels (the small-channel half of the models)."""
    kind = pick("conv", "conv", "deconv", "pool", "act", "norm", "tail", "up")
    if kind == "conv":
        k, s, d = pick(1, 2, 3, 5, 7), pick(1, 1, 2, 3), pick(1, 1, 2, 3)
        g = pick(1, 1, c, *[x for x in (2, 4) if c % x == 0])
        co = c * pick(1, 2) if g > 1 else pick(c, 4, 8, 16)
        pad = pick(0, 1, k // 2)  # not "same": torch 1.13 does not export it
        mode = pick("zeros", "zeros", "reflect", "replicate")
        return nn.Conv2d(c, co, k, s, pad, d, g, bias=pick(True, False), padding_mode=mode)
    if kind == "deconv":
        k, s, d = pick(1, 2, 3, 4, 5), pick(1, 2, 3), pick(1, 1, 2)
        g = pick(1, 1, c)
        co = c if g > 1 else pick(c, 4, 8)
        return nn.ConvTranspose2d(c, co, k, s, random.randint(0, d * (k - 1) // 2),
                                  output_padding=random.randint(0, max(0, min(s, d) - 1)), groups=g, dilation=d)
    if kind == "pool":
        k, s = pick(2, 3, 5), pick(None, 1, 2, 3)
        p = random.randint(0, k // 2)
        return pick(nn.MaxPool2d(k, s, p, dilation=pick(1, 2), ceil_mode=pick(False, True)),
                    nn.AvgPool2d(k, s, p, count_include_pad=pick(True, False)),
                    nn.AvgPool2d(k, s, 0, ceil_mode=True), nn.AdaptiveAvgPool2d(1), nn.AdaptiveMaxPool2d(1))
    if kind == "act":
        return pick(activation(), nn.Softmax(dim=1), nn.LogSoftmax(dim=1), nn.Hardtanh(-0.5, 0.7), nn.CELU(0.5),
                    nn.SELU(), nn.Softsign(), nn.Tanhshrink(), nn.LogSigmoid())
    if kind == "norm":
        return pick(batch_norm(c), nn.GroupNorm(pick(*[g for g in (1, 2, c) if c % g == 0]), c),
                    nn.InstanceNorm2d(c, affine=pick(True, False)), nn.PReLU(c))
    if kind == "tail":
        mode = pick("constant", "reflect", "replicate")
        return pick(Lambda(lambda x: x * torch.sigmoid(x), "swish"),
                    Lambda(lambda x: x - x.amax(dim=1, keepdim=True), "amax"),
                    Lambda(lambda x: torch.clamp(x, -0.3, 0.4), "clamp"),
                    Lambda(lambda x: x.abs().sqrt() + 1, "sqrt"),
                    Lambda(lambda x: F.normalize(x, dim=1), "normalize"),
                    Lambda(lambda x: torch.cat([x, -x], 1)[:, ::2], "cat_slice"),
                    Lambda(lambda x: torch.where(x > 0, x, x * 0.3), "where"),
                    Lambda(lambda x: F.pad(x, [1, 2, 2, 1], mode=mode), "pad_" + mode),
                    Lambda(lambda x: torch.cumsum(x, dim=-1) / x.shape[-1], "cumsum"),
                    Lambda(lambda x: x.roll(1, -1).flip(-2), "roll_flip"))
    mode = pick("nearest", "bilinear", "bicubic")
    corners = {} if mode == "nearest" else {"align_corners": pick(True, False)}
    scale = pick(2, 3) if mode == "nearest" else pick(2, 1.5, 0.6)
    return nn.Upsample(scale_factor=scale, mode=mode, **corners)


class Block(nn.Module):
    """One block of a real network on c channels (the blocked-layout half of the models)."""

    def __init__(self, c):
        super().__init__()
        self.kind = pick("conv", "separable", "inverted", "residual", "concat", "se", "deconv", "up", "dilated")
        k, s, co = pick(1, 3, 3, 5, 7), pick(1, 1, 2), pick(c, 16, 24, 32, 48, 64)
        if self.kind == "conv":
            self.body = nn.Sequential(nn.Conv2d(c, co, k, s, k // 2, bias=pick(True, False)), batch_norm(co), activation())
        elif self.kind == "separable":
            self.body = nn.Sequential(nn.Conv2d(c, c, k, s, k // 2, groups=c, bias=False), batch_norm(c), activation(),
                                      nn.Conv2d(c, co, 1, bias=False), batch_norm(co), activation())
        elif self.kind == "inverted":
            e = c * pick(2, 4, 6)
            self.body = nn.Sequential(nn.Conv2d(c, e, 1, bias=False), batch_norm(e), activation(),
                                      nn.Conv2d(e, e, k, s, k // 2, groups=e, bias=False), batch_norm(e), activation(),
                                      *([SqueezeExcite(e)] if pick(0, 1) else []), nn.Conv2d(e, co, 1, bias=False),
                                      batch_norm(co))
            self.residual = s == 1 and co == c
        elif self.kind == "residual":
            self.body = nn.Sequential(nn.Conv2d(c, c, 3, 1, 1, bias=False), batch_norm(c), activation(),
                                      nn.Conv2d(c, c, 3, 1, 1, bias=False), batch_norm(c))
            self.after = pick(nn.ReLU(), nn.Identity())
        elif self.kind == "concat":
            self.branches = nn.ModuleList([nn.Sequential(nn.Conv2d(c, pick(8, 16, 32), 1), activation()),
                                           nn.Sequential(nn.Conv2d(c, pick(8, 16, 24), 3, 1, 1), activation()),
                                           nn.Sequential(nn.MaxPool2d(3, 1, 1), nn.Conv2d(c, 8, 1))])
        elif self.kind == "se":
            self.body = SqueezeExcite(c)
        elif self.kind == "deconv":
            k, s = pick(2, 3, 4), pick(1, 2, 2)
            g = pick(1, 1, *[g for g in (2, 4) if c % g == 0 and co % g == 0])
            self.body = nn.Sequential(nn.ConvTranspose2d(c, co, k, s, random.randint(0, (k - 1) // 2), groups=g),
                                      batch_norm(co), activation())
        elif self.kind == "up":
            mode = pick("nearest", "bilinear")
            corners = {} if mode == "nearest" else {"align_corners": pick(True, False)}
            self.body = nn.Sequential(nn.Upsample(scale_factor=2, mode=mode, **corners), nn.Conv2d(c, co, 3, 1, 1),
                                      activation())
        else:
            d = pick(2, 3, 6)
            self.body = nn.Sequential(nn.Conv2d(c, c, 3, 1, d, dilation=d, groups=pick(1, c)), batch_norm(c),
                                      activation())

    def forward(self, x):
        if self.kind == "inverted" and self.residual:
            return self.body(x) + x
        if self.kind == "residual":
            return self.after(self.body(x) + x)
        if self.kind == "concat":
            return torch.cat([b(x) for b in self.branches], 1)
        return self.body(x)

    def extra_repr(self):
        return self.kind


def random_model(seed):
    """(model in eval mode, input): layers on 1-8 channels for even seeds, blocks on 3-32 for odd."""
    random.seed(seed)
    torch.manual_seed(seed)
    small = seed % 2 == 0
    c = pick(1, 3, 4, 8) if small else pick(3, 16, 32)
    h = pick(6, 9, 16, 21, 28) if small else pick(8, 14, 17, 28, 32)
    x = torch.rand(pick(1, 1, 2), c, h, pick(h, h + 3)) * 2 - 1
    parts = []
    for _ in range(random.randint(2, 6)):
        part = layer(c) if small else Block(c)
        try:
            with torch.no_grad():
                y = nn.Sequential(*parts, part).eval()(x)
        except (RuntimeError, ValueError):  # a window larger than its input, an InstanceNorm of one pixel
            continue
        if y.numel() == 0 or min(y.shape[2:]) < 1 or y.numel() > 2_000_000:
            continue
        parts.append(part)
        c = y.shape[1]
    if pick(0, 1):
        parts += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, 10)]
    return nn.Sequential(*parts).eval(), x


@pytest.mark.parametrize("seed", range(160))
def test_random_model_matches_pytorch(seed, tmp_path):
    model, x = random_model(seed)
    with torch.no_grad():
        expected = model(x).numpy()
    path = tmp_path / "model.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, x, path, opset_version=pick(12, 13, 17), input_names=["input"],
                          output_names=["output"])
    scale = max(1.0, float(np.abs(expected).max()))
    # Then with the kernel choices that depend on the machine (Winograd by cache sizes, a
    # ConvTranspose's method by its shape) made each way, as another CPU may make them.
    for threads, options in ((1, {}), (2, {}), (2, {"conv_algorithm": "winograd", "deconv_method": "conv"}),
                             (2, {"conv_algorithm": "direct", "deconv_method": "col2im"})):
        y = minfer.load(path, num_threads=threads, **options).run(x.numpy())["output"]
        assert y.shape == expected.shape, model
        np.testing.assert_allclose(y, expected, rtol=0, atol=2e-4 * scale,
                                   err_msg=f"{threads} threads, {options}: {model}")
