"""Real PyTorch's side of ding4j's checkpoint interop test (run by PyTorchInteropTest with /usr/bin/python3).

  torch_interop.py check FILE   torch.load a ding4j checkpoint, load its model and optimizer into torch.nn /
                                torch.optim objects, print a JSON description of everything loaded
  torch_interop.py write FILE   save a DI-engine-style checkpoint (model, target_model, optimizer, last_iter,
                                last_step) with torch.save, print a JSON description of it
"""
import copy
import json
import sys

import torch
import torch.nn as nn


def describe(value):
    if isinstance(value, torch.Tensor):
        flat = value.detach().reshape(-1)
        return {
            "dtype": str(value.dtype).replace("torch.", ""),
            "shape": list(value.shape),
            "sum": flat.double().sum().item(),
            "first": flat[0].item() if flat.numel() > 0 else None,
        }
    if isinstance(value, dict):
        return {str(k): describe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [describe(v) for v in value]
    return value


class QNet(nn.Module):
    """DI-engine's naming: encoder.0 / encoder.2 Linear layers and a head."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.head = nn.Linear(32, 2)

    def forward(self, x):
        return self.head(self.encoder(x))


def check(path):
    ckpt = torch.load(path)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    model.load_state_dict(ckpt["model"])  # strict: names and shapes must match nn.Sequential's
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0)
    optimizer.load_state_dict(ckpt["optimizer"])
    loaded = {
        "lr": optimizer.param_groups[0]["lr"],
        "betas": list(optimizer.param_groups[0]["betas"]),
        "exp_avg_sum_param0": optimizer.state[model[0].weight]["exp_avg"].double().sum().item(),
        "step_param0": float(optimizer.state[model[0].weight]["step"]),
    }
    print(json.dumps({"checkpoint": describe(ckpt), "loaded": loaded}))


def write(path):
    torch.manual_seed(0)
    model = QNet()
    target_model = copy.deepcopy(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(3):
        x = torch.randn(8, 4)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    ckpt = {
        "model": model.state_dict(),
        "target_model": target_model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "last_iter": 3,
        "last_step": 24,
    }
    torch.save(ckpt, path)
    print(json.dumps(describe(ckpt)))


def views(path):
    # One storage, rebuilt by every key as a tensor object of its own (the same view): a hostile file's shape.
    storage = torch.arange(1, 100001, dtype=torch.float32)
    views = {"k%d" % i: storage[:] for i in range(20000)}
    # Other views of the same storage, each to be described as itself: an offset, a shorter shape, a stride.
    views.update({"offset": storage[1:], "short": storage[:10], "stride": storage[::2]})
    torch.save(views, path)
    print(json.dumps({k: float(views[k].double().sum()) for k in ["k0", "offset", "short", "stride"]}))


if __name__ == "__main__":
    {"check": check, "write": write, "views": views}[sys.argv[1]](sys.argv[2])
