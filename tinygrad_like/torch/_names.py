"""The facade's supported and refused names, as docs/pytorch.md's table shows them (tests/test_torch_facade.py
checks that the page holds exactly what `names_table()` prints, so the table cannot go stale)."""
from __future__ import annotations

import importlib

from tinygrad_like.torch._refuse import REFUSED

MODULES = ("torch", "torch.autograd", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils",
           "torch.optim", "torch.optim.lr_scheduler", "torch.utils.data", "torch.cuda", "torch.backends")


def _module(name: str):
    return importlib.import_module("tinygrad_like." + name)


def supported_names() -> dict[str, list[str]]:
    """{"torch": [...], "torch.nn": [...], ...}: each facade module's public names, sorted (submodules left out)."""
    out = {}
    for name in MODULES:
        module = _module(name)
        public = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
        out[name] = sorted(n for n in public if f"{name}.{n}" not in MODULES and not _is_module(module, n))
    return out


def _is_module(module, name: str) -> bool:
    return type(getattr(module, name, None)).__name__ == "module"


def names_table() -> str:
    """docs/pytorch.md's markdown: one row per module with its supported names, then the refused names."""
    lines = ["| module | names |", "|---|---|"]
    for module, names in supported_names().items():
        lines.append(f"| `{module}` | " + ", ".join(f"`{n}`" for n in names) + " |")
    lines += ["", "Refused with a message that says why (any other missing name is refused too; whole kinds of "
              "names, such as devices, sparse and quantized tensors, the compiler and convolutions, by their kind: "
              "[torch_coverage.md](torch_coverage.md) lists every PyTorch name with its answer):", "",
              "| name | why |", "|---|---|"]
    lines += [f"| `{name}` | {why} |" for name, why in sorted(REFUSED.items())]
    return "\n".join(lines)
