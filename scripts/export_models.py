#!/usr/bin/python3
"""Exports the reference model set to ONNX with random weights, calibrated so that they are useful
as references, plus one input and torch's output per model.

    /usr/bin/python3 scripts/export_models.py --out DIR [--models resnet18,vit_b_16] [--opset 17]
    /usr/bin/python3 scripts/export_models.py --out tests/data/models --models tiny_cnn,tiny_transformer

Writes DIR/<model>/model.onnx, input.npy and output.npy, and for the models whose export bakes the batch
into their graph (BATCH_IN_GRAPH) also model_batched.onnx, the same graph with a symbolic batch
(dimension 0 of input and output, 'batch': give it with vkfuse's --batch or --shape). Needs Debian's python3-torch and
python3-torchvision (run with /usr/bin/python3: another python3 earlier on PATH does not see them).

Why calibrate: with torchvision's default random init many models are useless as references. Biases
and norm affine parameters start constant (0 or 1), BatchNorm running statistics are 0/1 so the
norms are identities, googlenet's output is its last bias whatever the input, efficientnet's and
mobilenet's outputs are ~1e-9, convnext's layer scales (1e-6) mute its residual blocks and vit_b_16's
zero-initialized head outputs exactly 0. So every constant-valued parameter is re-drawn, BatchNorm
statistics are recomputed from random images, and each exported model is checked: its output must
depend on the input and on an inner block. Comparisons against torch are by error relative to the
output's largest magnitude, never by a bare absolute tolerance.
"""
import argparse
import inspect
import os
import sys

import numpy as np

MODELS = [
    "resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1", "efficientnet_b0",
    "shufflenet_v2_x1_0", "googlenet", "densenet121", "regnet_y_400mf", "convnext_tiny", "vgg11", "vit_b_16",
]
# TorchScript export traces these models' Reshape and Expand targets with the batch of the example input
# (shufflenet's channel shuffle reshapes to [1, 2, C/2, H, W], vit_b_16's patch embedding to [1, 768, 196]),
# so model.onnx runs at batch 1 only; model_batched.onnx keeps the batch symbolic instead.
BATCH_IN_GRAPH = ["shufflenet_v2_x1_0", "vit_b_16"]
# Small models committed under tests/data/models for CI: the same layers as the big set, in KB.
TINY_MODELS = ["tiny_cnn", "tiny_transformer"]
# Models with an image output (the per-frame benchmark's image-output case, bench/frame_session.sh):
# torchvision's segmentation models return {"out": scores}; the export returns the scores alone.
SEGMENTATION_MODELS = ["lraspp_mobilenet_v3_large"]
SEED = 20261122


def tiny_cnn():
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(c)
            self.dw = nn.Conv2d(c, c, 3, padding=1, groups=c)
            self.conv2 = nn.Conv2d(c, c, 1)
            self.act = nn.Hardswish()

        def forward(self, x):
            y = self.act(self.bn1(self.conv1(x)))
            return x + self.conv2(self.dw(y)).relu()

    return nn.Sequential(
        nn.Conv2d(3, 13, 3, stride=2, padding=1), nn.BatchNorm2d(13), nn.ReLU6(),
        Block(13), nn.MaxPool2d(3, stride=2, padding=1), Block(13), nn.AvgPool2d(2, ceil_mode=True),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(13, 10), nn.Softmax(dim=1))


def tiny_transformer():
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, dim=24, heads=3, patch=8):
            super().__init__()
            self.patch = nn.Conv2d(3, dim, patch, stride=patch)
            self.cls = nn.Parameter(torch.zeros(1, 1, dim))
            self.pos = nn.Parameter(torch.zeros(1, 17, dim))
            self.block = nn.TransformerEncoderLayer(dim, heads, dim * 2, dropout=0.0, activation="gelu",
                                                    batch_first=True, norm_first=True)
            self.norm = nn.LayerNorm(dim)
            self.head = nn.Linear(dim, 7)

        def forward(self, x):
            x = self.patch(x).flatten(2).transpose(1, 2)
            x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
            x = self.norm(self.block(x))
            return self.head(x[:, 0])

    return Model()


INPUT_SHAPES = {"tiny_cnn": (1, 3, 32, 32), "tiny_transformer": (1, 3, 32, 32), "lraspp_mobilenet_v3_large": (1, 3, 512, 512)}


def segmentation(name):
    import torch.nn as nn
    import torchvision

    class Scores(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None, num_classes=21)

        def forward(self, x):
            return self.net(x)["out"]

    return Scores()


def build(name):
    if name in TINY_MODELS:
        return globals()[name]()
    if name in SEGMENTATION_MODELS:
        return segmentation(name)
    import torchvision
    kwargs = {"weights": None}
    if name == "googlenet":
        kwargs.update(aux_logits=False, init_weights=True, transform_input=False)
    return getattr(torchvision.models, name)(**kwargs)


def redraw_constant_parameters(model, generator):
    """Every parameter whose elements are all equal (biases, norm scales and shifts, layer scales,
    zero-initialized heads and embeddings) gets random values of a sensible scale."""
    import torch
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.numel() > 1 and float(p.max() - p.min()) != 0.0:
                continue
            if p.dim() >= 2:  # a zero-initialized weight matrix (vit's head): fan-in scaled normal
                fan_in = p[0].numel()
                p.copy_(torch.randn(p.shape, generator=generator) / fan_in ** 0.5)
            elif "weight" in name.split(".")[-1] or "gamma" in name or "scale" in name:
                p.copy_(torch.empty(p.shape).uniform_(0.5, 1.5, generator=generator))
            else:
                p.copy_(torch.randn(p.shape, generator=generator) * 0.1)


def input_shape(name):
    return INPUT_SHAPES.get(name, (1, 3, 224, 224))


def recompute_batchnorm_statistics(model, generator, shape, batches=4):
    import torch
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the calibration batches
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn((8,) + tuple(shape[1:]), generator=generator))
    model.eval()


def check_sensitivity(name, model, x, generator):
    """The output must depend on the input and on an inner block's parameters."""
    import torch
    with torch.no_grad():
        y = model(x)
        scale = float(y.abs().max())
        if not np.isfinite(scale) or scale < 1e-4:
            sys.exit(f"{name}: degenerate output (max |y| = {scale})")
        y2 = model(torch.randn(x.shape, generator=generator))
        if float((y - y2).abs().max()) < 1e-3 * scale:
            sys.exit(f"{name}: the output does not depend on the input")
        params = [p for p in model.parameters() if p.dim() >= 2]
        inner = params[len(params) // 2]
        saved = inner.clone()
        inner.add_(torch.randn(inner.shape, generator=generator) * saved.std())
        y3 = model(x)
        inner.copy_(saved)
        if float((y - y3).abs().max()) < 1e-4 * scale:
            sys.exit(f"{name}: the output does not depend on its inner blocks")


def export(name, out_dir, opset):
    import torch
    torch.manual_seed(SEED)
    generator = torch.Generator().manual_seed(SEED)
    model = build(name).eval()
    redraw_constant_parameters(model, generator)
    recompute_batchnorm_statistics(model, generator, input_shape(name))
    x = torch.randn(input_shape(name), generator=generator)
    check_sensitivity(name, model, x, generator)
    with torch.no_grad():
        y = model(x)
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    kwargs = dict(opset_version=opset, input_names=["input"], output_names=["output"], do_constant_folding=True)
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    torch.onnx.export(model, (x,), os.path.join(folder, "model.onnx"), **kwargs)
    if name in BATCH_IN_GRAPH:
        torch.onnx.export(model, (x,), os.path.join(folder, "model_batched.onnx"),
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}, **kwargs)
    np.save(os.path.join(folder, "input.npy"), x.numpy())
    np.save(os.path.join(folder, "output.npy"), y.numpy())
    print(f"{name}: exported, output {tuple(y.shape)}, max |y| = {float(y.abs().max()):.4g}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--opset", type=int, default=17)
    args = parser.parse_args()
    for name in args.models.split(","):
        known = MODELS + TINY_MODELS + SEGMENTATION_MODELS
        if name not in known:
            sys.exit(f"unknown model '{name}'; known: {', '.join(known)}")
        folder = os.path.join(args.out, name)
        if os.path.exists(os.path.join(folder, "output.npy")) and (
                name not in BATCH_IN_GRAPH or os.path.exists(os.path.join(folder, "model_batched.onnx"))):
            print(f"{name}: already exported")
            continue
        export(name, args.out, args.opset)


if __name__ == "__main__":
    main()
