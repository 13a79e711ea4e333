"""Containers: `Sequential`, `ModuleList` and `ModuleDict`, layers that hold layers, and `ParameterList`
and `ParameterDict`, which hold parameters the same way.

Each child is an attribute named by its index (`"0"`, `"1"`, ...) or its key, so parameter names,
state dicts and the boxes of `draw_graph` read as PyTorch's do: `net.0.weight`, `blocks.1.sa.heads.0.key`.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Iterator

import numpy as np

from nn.module import Module
from tinygrad_like import Tensor


def _check_module(container: str, where, module) -> Module:
    if not isinstance(module, Module):
        raise TypeError(f"{container}: entry {where!r} must be a Module, got {type(module).__name__}")
    return module


class _Indexed(Module):
    """Children stored as attributes "0", "1", ...; indexing, len and iteration as for a list."""

    def _items(self) -> list[Module]:
        return [module for _, module in self.named_children()]

    def __len__(self) -> int:
        return len(self._items())

    def __iter__(self) -> Iterator[Module]:
        return iter(self._items())

    def __getitem__(self, index):
        items = self._items()
        if isinstance(index, slice):
            return type(self)(*items[index]) if isinstance(self, Sequential) else ModuleList(items[index])
        if not -len(items) <= index < len(items):
            raise IndexError(f"{type(self).__name__}: index {index} is out of range for {len(items)} layers")
        return items[index]

    def _add(self, module: Module) -> None:
        setattr(self, str(len(self)), _check_module(type(self).__name__, len(self), module))


class Sequential(_Indexed):
    """Sequential(a, b, c)(x) = c(b(a(x))); also Sequential(OrderedDict(name=layer, ...)) for named layers."""

    def __init__(self, *modules):
        if len(modules) == 1 and isinstance(modules[0], (dict, OrderedDict)):
            for name, module in modules[0].items():
                setattr(self, str(name), _check_module("Sequential", name, module))
            return
        for module in modules:
            self._add(module)

    def append(self, module: Module) -> "Sequential":
        self._add(module)
        return self

    def forward(self, x):
        for module in self._items():
            x = module(x)
        return x


class ModuleList(_Indexed):
    """A list of layers whose parameters the model sees (a plain Python list works too here, named
    `attr.i`; ModuleList is what PyTorch code writes). It has no forward: call its entries."""

    def __init__(self, modules=()):
        for module in modules:
            self._add(module)

    def append(self, module: Module) -> "ModuleList":
        self._add(module)
        return self

    def extend(self, modules) -> "ModuleList":
        for module in modules:
            self._add(module)
        return self


class _Keyed(Module):
    """What ModuleDict and ParameterDict share: their entries in the order they came (`_keys`), each an
    attribute of the same name (so the state_dict names it), read with a dict's methods. A subclass
    says what it holds (`noun`) and how an entry is checked on the way in (`__setitem__`)."""

    noun = "entry"

    def __getitem__(self, key: str):
        if key not in self._keys:
            raise KeyError(f"{type(self).__name__}: no {self.noun} named {key!r}; it holds {self._keys}")
        return getattr(self, key)

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._keys))

    def keys(self) -> list[str]:
        return list(self._keys)

    def values(self) -> list:
        return [getattr(self, key) for key in self._keys]

    def items(self) -> list[tuple[str, object]]:
        return [(key, getattr(self, key)) for key in self._keys]


class ModuleDict(_Keyed):
    """A named bag of sub-layers, e.g. nanoGPT's `transformer` holding wte, wpe, h and ln_f.
    ModuleDict(dict(wte=..., h=...)) as in PyTorch, or ModuleDict(wte=..., h=...); an entry may also
    be a list of layers (named `h.0`, `h.1`, ...)."""

    noun = "layer"

    def __init__(self, modules: dict | None = None, **named):
        object.__setattr__(self, "_keys", [])
        for name, module in {**(modules or {}), **named}.items():
            self[name] = module

    def __setitem__(self, key: str, module) -> None:
        for part in (module if isinstance(module, (list, tuple)) else [module]):
            _check_module("ModuleDict", key, part)
        if key not in self._keys:
            self._keys.append(key)
        setattr(self, key, module)


def _as_parameter(container: str, where, value):
    """value as a parameter: a leaf tensor that requires grad stays itself; another tensor or an array becomes
    a new leaf that requires grad (sharing a tensor's array), as PyTorch wraps it in a Parameter."""
    if isinstance(value, Tensor):
        if value.requires_grad and value._ctx is None:
            return value
        return Tensor(value._data, requires_grad=True)
    if isinstance(value, np.ndarray):
        return Tensor(value, requires_grad=True)
    raise TypeError(f"{container}: entry {where!r} must be a Tensor, got {type(value).__name__}")


class ParameterList(Module):
    """A list of parameters the model sees, named "0", "1", ... (`weights.0`): for a variable number of
    weights. Indexing, len, iteration, append and extend as for a list."""

    def __init__(self, values=()):
        object.__setattr__(self, "_count", 0)
        self.extend(values)

    def append(self, value) -> "ParameterList":
        setattr(self, str(self._count), _as_parameter("ParameterList", self._count, value))
        object.__setattr__(self, "_count", self._count + 1)
        return self

    def extend(self, values) -> "ParameterList":
        for value in values:
            self.append(value)
        return self

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Tensor]:
        return (getattr(self, str(i)) for i in range(self._count))

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ParameterList(list(self)[index])
        if not -self._count <= index < self._count:
            raise IndexError(f"ParameterList: index {index} is out of range for {self._count} parameters")
        return getattr(self, str(index % self._count))

    def __setitem__(self, index: int, value) -> None:
        self[index]                                                   # the range check
        setattr(self, str(index % self._count), _as_parameter("ParameterList", index, value))


class ParameterDict(_Keyed):
    """Parameters by name (`weights.alpha`), with a dict's methods."""

    noun = "parameter"

    def __init__(self, parameters=None):
        object.__setattr__(self, "_keys", [])
        self.update(parameters or {})

    def __setitem__(self, key: str, value) -> None:
        if key not in self._keys:
            self._keys.append(key)
        setattr(self, key, _as_parameter("ParameterDict", key, value))

    def update(self, parameters) -> None:
        for key, value in (parameters.items() if hasattr(parameters, "items") else parameters):
            self[key] = value
