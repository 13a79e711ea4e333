"""`Module`: a layer that finds its parameters and sub-layers from its own attributes.

A parameter is any leaf Tensor attribute with requires_grad=True (a Tensor computed by an op, such
as a MoE layer's `aux_loss`, is not a parameter); a sub-layer is any Module attribute,
or a list/tuple of Modules (named `h.0`, `h.1`, ...). Names are dotted paths, as in PyTorch and
nanoGPT (`h.0.attn.c_attn.weight`), so state dicts move between the frameworks by name.

Calling a module runs its `forward` inside the engine's name scope named by the module's dotted
path from the outermost module that holds it (`transformer.h.0.attn`), the prefix of its parameters'
names. So `draw_graph` boxes every block and sub-layer of a transformer like its state_dict, each
parameter in the box of the layer that uses it, and a block called on its own draws the same boxes.
"""
from __future__ import annotations

import weakref
from typing import Iterator

import numpy as np

from tinygrad_like import Tensor
from tinygrad_like.function import state


def _join(outer: str, inner: str) -> str:
    return f"{outer}.{inner}" if outer and inner else outer or inner


class Module:
    training = True
    _local_name = ""   # the name in its parent (`h.0`)
    _path = None       # the dotted path from the outermost module (`transformer.h.0`), set by naming
    _parent = None     # a weak reference to the module that holds it
    _names_version = -1
    _tree_version = 0  # bumped whenever any module gains or swaps a sub-layer or a parameter
    _calls_in_progress = 0
    _scope_base = ""   # the caller's scope around the outermost module call

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        if Module._calls_in_progress == 0:
            root = self._root()
            if root._names_version != Module._tree_version:
                root._assign_names()  # names run from the outermost module down, even when a part is called
            Module._scope_base = state.scope
        prev = state.scope
        path = self._path
        state.scope = _join(Module._scope_base, path) if path is not None else _join(prev, self._local_name)
        Module._calls_in_progress += 1
        try:
            return self.forward(*args, **kwargs)
        finally:
            Module._calls_in_progress -= 1
            state.scope = prev

    def __setattr__(self, key, value):
        if isinstance(value, (Module, list, tuple)) or (isinstance(value, Tensor) and value._ctx is None):
            Module._tree_version += 1
            for child in (value if isinstance(value, (list, tuple)) else (value,)):
                if isinstance(child, Module):
                    object.__setattr__(child, "_parent", weakref.ref(self))
        object.__setattr__(self, key, value)

    def _root(self) -> Module:
        """The outermost module holding this one (itself when none does)."""
        module = self
        while module._parent is not None and (parent := module._parent()) is not None:
            module = parent
        return module

    # ------------------------------------------------------------ the tree
    def children(self) -> Iterator[tuple[str, "Module"]]:
        """(name, module) for each direct sub-layer; list entries are named `attr.i`."""
        for key, value in vars(self).items():
            if isinstance(value, Module):
                yield key, value
            elif isinstance(value, (list, tuple)) and value and all(isinstance(v, Module) for v in value):
                for i, v in enumerate(value):
                    yield f"{key}.{i}", v

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, "Module"]]:
        yield prefix, self
        for name, child in self.children():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        seen = set()
        for path, module in self.named_modules(prefix):
            for key, value in vars(module).items():
                if isinstance(value, Tensor) and value.requires_grad and value._ctx is None and id(value) not in seen:
                    seen.add(id(value))  # a tied weight is listed once, under its first name
                    yield (f"{path}.{key}" if path else key), value

    def parameters(self) -> list[Tensor]:
        return [p for _, p in self.named_parameters()]

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def _assign_names(self) -> None:
        """Give sub-modules their scope names and parameters their dotted names (for drawings)."""
        for path, module in self.named_modules():
            for name, child in module.children():
                object.__setattr__(child, "_local_name", name)
            object.__setattr__(module, "_path", path)
            object.__setattr__(module, "_names_version", Module._tree_version)
        for name, p in self.named_parameters():
            p.name = name

    # ------------------------------------------------------------ state
    def state_dict(self) -> dict[str, np.ndarray]:
        """{dotted name: numpy array} of every parameter (the live arrays, not copies)."""
        return {name: p.data for name, p in self.named_parameters()}

    def load_state_dict(self, state: dict, strict: bool = True) -> None:
        """Copy arrays into the parameters, in place. Everything is checked before anything is written,
        so a bad state dict leaves the model unchanged."""
        params = dict(self.named_parameters())
        missing = [k for k in params if k not in state]
        unexpected = [k for k in state if k not in params]
        if strict and (missing or unexpected):
            raise KeyError(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")
        for key, value in state.items():
            if key in params and tuple(np.shape(value)) != params[key].shape:
                raise ValueError(f"load_state_dict: '{key}' has shape {tuple(np.shape(value))} in the state dict "
                                 f"but {params[key].shape} in the model")
        for key, value in state.items():
            if key in params:
                params[key].data[...] = np.asarray(value.data if isinstance(value, Tensor) else value)

    def train(self, mode: bool = True) -> "Module":
        for _, module in self.named_modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def zero_grad(self) -> None:
        for p in self.parameters():
            p.grad = None

    # ------------------------------------------------------------ display
    def extra_repr(self) -> str:
        return ""

    def __repr__(self):
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        children = list(self.children())
        for name, child in children:
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        return "\n".join(lines) + (")" if not children else "\n)")


class ModuleDict(Module):
    """A named bag of sub-layers, e.g. nanoGPT's `transformer` holding wte, wpe, h and ln_f."""

    def __init__(self, **modules):
        for name, module in modules.items():
            setattr(self, name, module)
