"""`Module`: a layer that finds its parameters and sub-layers from its own attributes.

A parameter is any leaf Tensor attribute with requires_grad=True (a Tensor computed by an op, such
as a MoE layer's `aux_loss`, is not a parameter); a sub-layer is any Module attribute,
or a list/tuple of Modules (named `h.0`, `h.1`, ...). Names are dotted paths, as in PyTorch and
nanoGPT (`h.0.attn.c_attn.weight`), so state dicts move between the frameworks by name.

Calling a module runs its `forward` inside the engine's name scope named by the module's dotted
path from the outermost module that holds it (`transformer.h.0.attn`), the prefix of its parameters'
names. So `draw_graph` boxes every block and sub-layer of a transformer like its state_dict, each
parameter in the box of the layer that uses it, and a block called on its own draws the same boxes.

Hooks, with PyTorch's signatures: `register_forward_pre_hook(fn)` calls fn(module, args) before
forward (a return value other than None replaces the positional args; a non-tuple becomes a 1-tuple),
`register_forward_hook(fn)` calls fn(module, args, output) after it (a return value other than None
replaces the output). Hooks run in the order registered, each seeing what the previous one returned;
both return a handle whose `remove()` takes the hook off. `HookPoint` is an identity layer that exists
only to be hooked: it names an activation that is not any layer's input or output (attention's pattern).
"""
from __future__ import annotations

import itertools
import weakref
from typing import Callable, Iterator

import numpy as np

from tinygrad_like import Tensor
from tinygrad_like.function import state


def as_array(value) -> np.ndarray:
    """A state dict entry as a numpy array: a Tensor's array, or np.asarray of anything else."""
    return value._data if isinstance(value, Tensor) else np.asarray(value)


def _join(outer: str, inner: str) -> str:
    return f"{outer}.{inner}" if outer and inner else outer or inner


def _is_device(arg) -> bool:
    return isinstance(arg, str) or type(arg).__name__.lower() == "device"


def _check_cpu(device) -> None:
    kind = str(device).split(":")[0]
    if kind != "cpu":
        raise RuntimeError(f"Module.to: device '{device}' is not available: the tinygrad_like engine runs on "
                           "the CPU (numpy), so use 'cpu' or leave the device out")


class _Calls:
    """Module calls in progress: how deeply they nest (0: none) and the caller's scope around the outermost.
    An object of its own, not attributes of Module: setting a class attribute invalidates Python's attribute
    caches for the class and every subclass, which each module call would then pay for."""

    def __init__(self):
        self.depth = 0
        self.scope_base = ""


_calls = _Calls()


class Module:
    training = True
    _local_name = ""   # the name in its parent (`h.0`)
    _path = None       # the dotted path from the outermost module (`transformer.h.0`), set by naming
    _parent = None     # a weak reference to the module that holds it
    _names_version = -1
    _tree_version = 0  # bumped whenever any module gains or swaps a sub-layer or a parameter
    _forward_pre_hooks: dict = {}  # {handle id: fn}, made per module on the first register (never mutated here)
    _forward_hooks: dict = {}

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        if _calls.depth == 0:
            root = self._root()
            if root._names_version != Module._tree_version:
                root._assign_names()  # names run from the outermost module down, even when a part is called
            _calls.scope_base = state.scope
        prev = state.scope
        path = self._path
        state.scope = _join(_calls.scope_base, path) if path is not None else _join(prev, self._local_name)
        _calls.depth += 1
        try:
            if not (self._forward_pre_hooks or self._forward_hooks):
                return self.forward(*args, **kwargs)
            return self._call_with_hooks(args, kwargs)
        finally:
            _calls.depth -= 1
            state.scope = prev

    def _call_with_hooks(self, args: tuple, kwargs: dict):
        for fn in list(self._forward_pre_hooks.values()):
            new = fn(self, args)
            if new is not None:
                args = new if isinstance(new, tuple) else (new,)
        output = self.forward(*args, **kwargs)
        for fn in list(self._forward_hooks.values()):
            new = fn(self, args, output)
            if new is not None:
                output = new
        return output

    # ------------------------------------------------------------ hooks
    def register_forward_pre_hook(self, fn: Callable) -> "RemovableHandle":
        """fn(module, args) -> None or replacement args, called before each forward. Returns a handle;
        `handle.remove()` takes the hook off."""
        return self._add_hook("_forward_pre_hooks", fn)

    def register_forward_hook(self, fn: Callable) -> "RemovableHandle":
        """fn(module, args, output) -> None or a replacement output, called after each forward.
        Returns a handle; `handle.remove()` takes the hook off."""
        return self._add_hook("_forward_hooks", fn)

    def _add_hook(self, kind: str, fn: Callable) -> "RemovableHandle":
        if not callable(fn):
            raise TypeError(f"{kind.strip('_')[:-1]}: expected a function, got {type(fn).__name__}")
        if kind not in vars(self):
            object.__setattr__(self, kind, {})  # the class default is shared and stays empty
        handle = RemovableHandle(getattr(self, kind))
        getattr(self, kind)[handle.id] = fn
        return handle

    def __setattr__(self, key, value):
        if getattr(value, "is_buffer", False):          # tinygrad_like.torch.nn.Buffer: a buffer by assignment
            object.__setattr__(self, "_buffer_names", {**vars(self).get("_buffer_names", {}), key: value.persistent})
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
    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        """(name, module) for each direct sub-layer; list entries are named `attr.i`."""
        for key, value in vars(self).items():
            if isinstance(value, Module):
                yield key, value
            elif isinstance(value, (list, tuple)) and value and all(isinstance(v, Module) for v in value):
                for i, v in enumerate(value):
                    yield f"{key}.{i}", v

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, "Module"]]:
        yield prefix, self
        for name, child in self.named_children():
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
            for name, child in module.named_children():
                object.__setattr__(child, "_local_name", name)
            object.__setattr__(module, "_path", path)
            object.__setattr__(module, "_names_version", Module._tree_version)
        for name, p in self.named_parameters():
            p.name = name

    # ------------------------------------------------------------ state
    def state_dict(self) -> dict[str, np.ndarray]:
        """{dotted name: numpy array} of every parameter, then every persistent buffer (the live arrays,
        not copies)."""
        return {**{name: p._data for name, p in self.named_parameters()},
                **{name: b._data for name, b in self.named_buffers(persistent_only=True)}}

    def load_state_dict(self, state: dict, strict: bool = True) -> None:
        """Copy arrays (numpy, Tensors, or anything numpy can read, such as a PyTorch state_dict's tensors)
        into the parameters and persistent buffers, in place, cast to their dtypes. Everything is checked
        before anything is written, so a bad state dict leaves the model unchanged."""
        params = {**dict(self.named_parameters()), **dict(self.named_buffers(persistent_only=True))}
        missing = [k for k in params if k not in state]
        unexpected = [k for k in state if k not in params]
        if strict and (missing or unexpected):
            raise KeyError(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")
        arrays = {key: as_array(value) for key, value in state.items() if key in params}
        for key, value in arrays.items():
            if value.shape != params[key].shape:
                raise ValueError(f"load_state_dict: '{key}' has shape {value.shape} in the state dict "
                                 f"but {params[key].shape} in the model")
        for key, value in arrays.items():
            params[key]._data[...] = value

    def train(self, mode: bool = True) -> "Module":
        for _, module in self.named_modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget every parameter's gradient (None), or with set_to_none=False fill it with zeros."""
        for p in self.parameters():
            p.grad = None if set_to_none or p.grad is None else Tensor(np.zeros_like(p._data))

    # ------------------------------------------------------------ PyTorch's tree methods
    def children(self) -> Iterator["Module"]:
        """Each direct sub-layer (PyTorch's `children`; `named_children` gives the names too)."""
        for _, child in self.named_children():
            yield child

    def modules(self) -> Iterator["Module"]:
        """This module and every sub-layer below it, outermost first."""
        for _, module in self.named_modules():
            yield module

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Keep `tensor` as attribute `name`: state that is not learned (a causal mask, BatchNorm's running
        statistics). It moves with `to()`, and a persistent buffer is in the state_dict, after the parameters."""
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"register_buffer: the name must be a non-empty string without dots, got {name!r}")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: '{name}' must be a Tensor or None, got {type(tensor).__name__}")
        buffers = dict(vars(self).get("_buffer_names", {}))
        buffers[name] = persistent
        object.__setattr__(self, "_buffer_names", buffers)
        setattr(self, name, tensor)

    def register_parameter(self, name: str, param: Tensor | None) -> None:
        """Keep `param` (a leaf Tensor that requires grad, or None) as attribute `name`: a parameter."""
        if param is not None and not (isinstance(param, Tensor) and param.requires_grad and param._ctx is None):
            raise TypeError(f"register_parameter: '{name}' must be a leaf Tensor with requires_grad=True or None")
        setattr(self, name, param)

    def named_buffers(self, prefix: str = "", persistent_only: bool = False) -> Iterator[tuple[str, Tensor]]:
        """(dotted name, Tensor) for each buffer registered with register_buffer, outermost module first."""
        for path, module in self.named_modules(prefix):
            for key, persistent in vars(module).get("_buffer_names", {}).items():
                value = getattr(module, key, None)
                if isinstance(value, Tensor) and (persistent or not persistent_only):
                    yield (f"{path}.{key}" if path else key), value

    def buffers(self) -> Iterator[Tensor]:
        for _, b in self.named_buffers():
            yield b

    def apply(self, fn) -> "Module":
        """Call fn(module) on every sub-layer, then on this module (PyTorch's order), e.g. to initialise
        weights: `model.apply(init_weights)`. Returns self."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs) -> "Module":
        """`to(dtype)` casts every floating point parameter and buffer in place (the Tensor objects stay,
        so optimizers holding them still work); `to("cpu")` changes nothing. The engine has no other device."""
        dtype = kwargs.pop("dtype", None)
        for arg in (*args, *kwargs.values()):
            if isinstance(arg, Tensor):
                dtype = arg.dtype
            elif _is_device(arg):
                _check_cpu(arg)
            elif arg is not None and not isinstance(arg, bool):
                dtype = arg
        if dtype is not None:
            dtype = np.dtype(dtype)
            for t in [*self.parameters(), *self.buffers()]:
                if t.dtype.kind == "f":
                    t._data = t._data.astype(dtype)
                    if t.grad is not None:
                        t.grad = Tensor(t.grad._data.astype(dtype))
        return self

    def double(self) -> "Module":
        return self.to(np.float64)

    def float(self) -> "Module":
        return self.to(np.float32)

    def cpu(self) -> "Module":
        return self

    # ------------------------------------------------------------ display
    def extra_repr(self) -> str:
        return ""

    def __repr__(self):
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        children = [(n, c) for n, c in self.named_children() if not isinstance(c, HookPoint)]  # places, not layers
        for name, child in children:
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        return "\n".join(lines) + (")" if not children else "\n)")


class eval_mode:
    """`with eval_mode(model):` the model in eval mode inside (no dropout, ...), its previous mode after."""

    def __init__(self, model: Module):
        self.model = model

    def __enter__(self):
        self.was_training = self.model.training
        self.model.eval()

    def __exit__(self, *exc):
        self.model.train(self.was_training)


class RemovableHandle:
    """What register_forward_hook / register_forward_pre_hook return: `remove()` takes the hook off
    (a second remove does nothing); also a context manager that removes it on exit."""

    _ids = itertools.count()

    def __init__(self, hooks: dict):
        self.id = next(RemovableHandle._ids)
        self._hooks = hooks

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class HookPoint(Module):
    """forward(x) = x: a named place in a layer's computation where hooks can read or replace an
    activation. A layer calls it only when it has hooks (`hooked`), so an unhooked model runs as before."""

    @property
    def hooked(self) -> bool:
        return bool(self._forward_pre_hooks or self._forward_hooks)

    def forward(self, x):
        return x
