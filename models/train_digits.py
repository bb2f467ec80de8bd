#!/usr/bin/env python3
"""Trains the bundled digits classifier and exports it: /usr/bin/python3 models/train_digits.py

A small CNN trained for real, on CPU in well under a minute, on the handwritten digits
that ship with scikit-learn (load_digits: 1,797 8x8 images of 0-9, 17 grey levels).
Writes, beside this script:
  digits_cnn.json, digits_cnn.bin   the model (net.json) and its weights
  digits_labels.txt                  one label per class
  samples/digit_<k>.png              the first held-out image of each class, 8x8 grayscale
  samples/expected.json              PyTorch's output for each sample, the engine's reference
and prints the held-out accuracy (stated in models/README.md).

The images are upscaled from 8x8 to 16x16 by bilinear interpolation, which is what the
engine's image input does when enlarging (a triangle filter), so a sample PNG read by
the engine gives the network the input it was trained on.
"""
import json
import os
import struct
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from netjson_builder import NetBuilder

HERE = os.path.dirname(os.path.abspath(__file__))
SIZE = 16  # the network's input is SIZE x SIZE
SEED = 0


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * (SIZE // 4) ** 2, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))  # logits; the exported model adds Softmax


def upscale(images_01):
    """[N, 8, 8] values in [0, 1] -> [N, 1, SIZE, SIZE], bilinear with half-pixel centres."""
    x = torch.tensor(images_01, dtype=torch.float32).unsqueeze(1)
    return F.interpolate(x, size=(SIZE, SIZE), mode="bilinear", align_corners=False)


def shifted(x, generator):
    """Random shifts of up to one pixel each way: a little robustness to placement."""
    dy, dx = torch.randint(-1, 2, (2,), generator=generator).tolist()
    return torch.roll(x, shifts=(dy, dx), dims=(2, 3))


def write_png_gray(path, pixels):
    """An 8-bit grayscale PNG from a 2-D uint8 array (no imaging library needed)."""
    h, w = pixels.shape
    raw = b"".join(b"\x00" + bytes(row) for row in pixels.astype(np.uint8))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    digits = load_digits()
    images = digits.images / 16.0  # grey levels 0..16 -> [0, 1]
    train_idx, test_idx = train_test_split(np.arange(len(images)), test_size=0.25, random_state=SEED,
                                           stratify=digits.target)
    x_train, x_test = upscale(images[train_idx]), upscale(images[test_idx])
    y_train = torch.tensor(digits.target[train_idx])
    y_test = torch.tensor(digits.target[test_idx])
    mean, std = float(x_train.mean()), float(x_train.std())
    norm = lambda x: (x - mean) / std

    model = DigitsCNN()
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
    generator = torch.Generator().manual_seed(SEED)
    for epoch in range(40):
        model.train()
        order = torch.randperm(len(x_train), generator=generator)
        for start in range(0, len(order), 64):
            batch = order[start:start + 64]
            loss = F.cross_entropy(model(norm(shifted(x_train[batch], generator))), y_train[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    model.eval()
    with torch.no_grad():
        predicted = model(norm(x_test)).argmax(1)
    accuracy = float((predicted == y_test).float().mean())
    print(f"held-out accuracy: {accuracy * 100:.2f}% ({int((predicted == y_test).sum())}/{len(y_test)}), "
          f"{len(x_train)} training images, preprocess mean {mean:.4f} std {std:.4f}")

    export(model, mean, std, accuracy, len(y_test))
    write_samples(model, images[test_idx], digits.target[test_idx], norm)


def export(model, mean, std, accuracy, n_test):
    b = NetBuilder("digits_cnn", doc=f"Handwritten digits (scikit-learn load_digits, 8x8 upscaled to {SIZE}x{SIZE}); "
                                     f"{accuracy * 100:.2f}% on {n_test} held-out digits. "
                                     "Trained by models/train_digits.py.")
    b.preprocess = {"mean": [round(mean, 6)], "std": [round(std, 6)]}
    b.labels = "digits_labels.txt"
    w = lambda t: t.detach().numpy().astype(np.float32).ravel().tolist()
    x = b.input("image", [1, 1, SIZE, SIZE])
    for name, conv in (("conv1", model.conv1), ("conv2", model.conv2)):
        x = b.node("Conv", name, [x, b.stored(name + ".W", list(conv.weight.shape), w(conv.weight)),
                                  b.stored(name + ".B", list(conv.bias.shape), w(conv.bias))],
                   {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]})
        x = b.node("Relu", name + "_relu", [x])
        x = b.node("MaxPool", name + "_pool", [x], {"kernel_shape": [2, 2], "strides": [2, 2]})
    x = b.node("Flatten", "flatten", [x], {"axis": 1})
    x = b.node("Gemm", "fc", [x, b.stored("fc.W", list(model.fc.weight.shape), w(model.fc.weight)),
                              b.stored("fc.B", list(model.fc.bias.shape), w(model.fc.bias))], {"transB": 1})
    b.outputs.append(b.node("Softmax", "prob", [x], {"axis": 1}))
    b.write(os.path.join(HERE, "digits_cnn.json"), "digits_cnn.bin")
    with open(os.path.join(HERE, "digits_labels.txt"), "w") as f:
        f.write("".join(f"{k}\n" for k in range(10)))


def write_samples(model, test_images, test_targets, norm):
    """The first held-out image of each class as a PNG, and PyTorch's output for it
    computed from the PNG's own pixels (what the engine will read)."""
    os.makedirs(os.path.join(HERE, "samples"), exist_ok=True)
    expected = {}
    for k in range(10):
        i = int(np.flatnonzero(test_targets == k)[0])
        pixels = np.round(test_images[i] * 255).astype(np.uint8)
        name = f"digit_{k}.png"
        write_png_gray(os.path.join(HERE, "samples", name), pixels)
        with torch.no_grad():
            prob = F.softmax(model(norm(upscale(pixels[None] / 255.0))), dim=1)[0]
        expected[name] = {"class": k, "prob": [round(float(p), 7) for p in prob]}
        print(f"{name}: predicted {int(prob.argmax())} ({float(prob.max()):.4f})")
    with open(os.path.join(HERE, "samples", "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
