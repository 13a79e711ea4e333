"""The bookkeeping every op shares: `Function`, grad mode, name scopes and anomaly detection.

A `Function` is one node of the computation graph. `apply` runs its numpy `forward`, and, when
gradients are wanted, remembers its parents so that `backward` can be called later. Backward rules
are written with Tensor ops, so the gradient is itself a graph when `create_graph=True` asks for it.
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np

from tinygrad_like.errors import ShapeError


class _State(threading.local):
    """This thread's modes. A thread-local runs __init__ in each thread that uses it, so every thread
    starts from these defaults, held in its own dict (fast/apply.py reads them through one look-up of
    `state.__dict__`: each attribute read is a thread-local look-up of its own)."""

    def __init__(self):
        self.grad_enabled = True
        self.scope = ""  # the dotted name of the scopes we are in
        self.detect_anomaly = False
        self.fused = True  # the fast path is on (fast_path, composed)


state = _State()


class no_grad(contextlib.ContextDecorator):
    """`with no_grad():` (or `@no_grad()`) runs ops without recording a graph: inference, optimizer steps."""

    def __enter__(self):
        self.prev, state.grad_enabled = state.grad_enabled, False

    def __exit__(self, *exc):
        state.grad_enabled = self.prev


class enable_grad(no_grad):
    """The opposite of `no_grad`; backward uses it to record the gradient graph when `create_graph=True`."""

    def __enter__(self):
        self.prev, state.grad_enabled = state.grad_enabled, True


class scope:
    """Name the ops created inside: `with scope("block0.attn"):`. Nested scopes join with dots.

    `draw_graph(..., group_scopes=True)` draws each scope as a box, so a transformer reads as blocks.
    (A class rather than a generator: every module call enters one, so it should cost little.)
    """

    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        self.prev = state.scope
        state.scope = f"{self.prev}.{self.name}" if self.prev and self.name else self.prev or self.name

    def __exit__(self, *exc):
        state.scope = self.prev


def current_scope() -> str:
    return state.scope


@contextlib.contextmanager
def fast_path(on: bool):
    """Turn the fast path (tinygrad_like/fast/) on or off inside the block: its fused ops in place of the
    composites, and its array functions in place of the plain ones of primitives (dispatch.py)."""
    prev, state.fused = state.fused, bool(on)
    try:
        yield
    finally:
        state.fused = prev


def composed():
    """`with composed():` runs the composites (composites.py: linear, softmax, log_softmax, layernorm,
    gelu, cross-entropy, attention) instead of their fused ops, so that `draw_graph` shows how they
    work: the fast path off, as `tinygrad_like.fast.enabled(False)`."""
    return fast_path(False)


@contextlib.contextmanager
def detect_anomaly():
    """Raise at the first op whose forward output or backward gradient holds a NaN or an Inf."""
    prev, state.detect_anomaly = state.detect_anomaly, True
    try:
        yield
    finally:
        state.detect_anomaly = prev


def check_finite(fn: "Function", array: np.ndarray, what: str) -> None:
    """Raise on NaN or Inf. A forward output may hold -inf: that is how masks are written (masked_fill
    with -inf before a softmax, whose exp gives 0). log(0) = -inf is still caught, by its backward (1/0)."""
    if array.dtype.kind != "f":
        return
    finite = np.isfinite(array) if what != "forward output" else ~(np.isnan(array) | (array == np.inf))
    if not finite.all():
        where = f" in scope '{fn.scope}'" if fn.scope else ""
        bad = "NaN" if np.isnan(array).any() else "Inf"
        raise FloatingPointError(f"detect_anomaly: {type(fn).__name__}{where} produced {bad} in its {what} "
                                 f"(shape {array.shape})")


class Function:
    """One op. Subclasses define `forward(*arrays, **options) -> array` on numpy arrays and
    `backward(grad, out) -> grad or tuple of grads` with Tensor ops, one gradient per parent
    (None for a parent that needs none). `self.parents` holds the input Tensors, `self.options` the
    keyword options forward got, `out` is the output."""

    parents: tuple = ()
    scope = ""
    freed = False  # set by scaffolding.free, after backward

    def forward(self, *args, **kwargs):
        raise NotImplementedError

    def backward(self, grad, out):
        raise NotImplementedError

    make_tensor = None  # Tensor._result, set by tensor.py (which imports this module)

    @classmethod
    def apply(cls, *parents, **kwargs):
        arrays, requires_grad = [], False
        for p in parents:                   # one loop, not a comprehension: that is a function call of its own
            arrays.append(p._data)
            requires_grad = requires_grad or p.requires_grad
        fn = cls()
        try:
            data = fn.forward(*arrays, **kwargs)
            if not isinstance(data, np.ndarray):
                data = np.asarray(data)  # np.sum over all axes, or 0-d arithmetic, gives a numpy scalar
        except ValueError as e:
            shapes = " and ".join(str(p.shape) for p in parents)
            raise ShapeError(f"{cls.__name__.lower()}: {e} (input shapes {shapes})") from None
        requires_grad = requires_grad and state.grad_enabled
        if requires_grad:  # the options too, so draw_graph can rebuild a fused op's composite (dispatch.py)
            fn.parents, fn.scope, fn.options = parents, state.scope, kwargs
        if state.detect_anomaly:
            fn.scope = state.scope
            check_finite(fn, data, "forward output")
        return Function.make_tensor(data, fn if requires_grad else None)
