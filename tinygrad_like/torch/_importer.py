"""Making `import torch` resolve to the facade: a meta path finder for `torch` and `torch.*`.

`install()` puts the finder first on sys.meta_path (and points any already imported `torch` modules at
the facade), so every later `import torch`, `import torch.nn as nn`, `from torch.nn import functional
as F` gets tinygrad_like.torch's module of the same path. `uninstall()` undoes it.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

from tinygrad_like.torch._refuse import refuse


class _Alias(importlib.abc.Loader):
    """Loads `torch.x` as the already imported facade module `tinygrad_like.torch.x`."""

    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class TorchFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        try:
            module = importlib.import_module("tinygrad_like." + fullname)
        except ModuleNotFoundError:
            raise refuse(fullname) from None
        return importlib.util.spec_from_loader(fullname, _Alias(module))


_finder = TorchFinder()
_replaced: dict = {}


def install() -> None:
    """From now on `import torch` (and torch.nn, torch.optim, ...) gives tinygrad_like.torch."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        if sys.modules[name].__name__.startswith("tinygrad_like."):
            continue
        _replaced[name] = sys.modules.pop(name)  # a real torch imported earlier: later imports get the facade


def uninstall() -> None:
    """Undo install(): `import torch` finds real PyTorch (if installed) again."""
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        if sys.modules[name].__name__.startswith("tinygrad_like."):
            del sys.modules[name]
    sys.modules.update(_replaced)
    _replaced.clear()
