"""Which version of a composite op runs: the composite the core defines, or the fast path's fused op.

A composite op (softmax, layernorm, attention, ...) is written once, in composites.py, from primitive
ops: its graph shows how it works and its gradient comes from the primitives' rules. The fast path
(tinygrad_like/fast/) may register a fused replacement for it: one graph node with a hand-written
backward, proven equal to the composite by tests/test_fused.py. `run` picks one of the two, in one
place: the fused op when the fast path is on (`fast.enabled()`, `composed()` turns it off), one is
registered, and it accepts these arguments; the composite otherwise.

Each fused op class names the composite it replaces (`Function.composite`) and says how its recorded
parents and options map back onto the composite's arguments (`as_composite`). So `draw_graph(expand=...)`
can open a fused node into the very composite the core defines (`rebuild`).

Primitive ops have no composite to fall back to; for them the fast path may register a faster array
function under a name (`register_kernel`), which the primitive asks for with `kernel(name, plain)`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from tinygrad_like.function import composed, enable_grad, state

COMPOSITES: dict[str, Callable] = {}   # name -> the composite, a function of Tensors (composites.py)


class Fused(NamedTuple):
    """A fused replacement: the Function class `op`; `apply(*args, **kwargs)`, which takes the
    composite's arguments and applies op; `accepts`, whether it handles these (None: always)."""
    op: type
    apply: Callable
    accepts: Callable | None


FUSED: dict[str, Fused] = {}           # name -> the fast path's replacement
KERNELS: dict[str, Callable] = {}      # name -> a faster array function for a primitive's forward


def composite(name: str):
    """Register the decorated function as the composite op `name` (composites.py)."""
    def register(fn):
        COMPOSITES[name] = fn
        return fn
    return register


def register_fused(name: str, op: type, apply: Callable, accepts: Callable | None = None) -> None:
    """Let the fused op class `op`, through `apply` (same arguments as the composite `name`), run in place
    of the composite while the fast path is on and `accepts(*args, **kwargs)` is true."""
    if name not in COMPOSITES:
        raise ValueError(f"register_fused: there is no composite op {name!r} "
                         f"(they are {', '.join(sorted(COMPOSITES))})")
    if op.composite != name:
        raise ValueError(f"register_fused: {op.__name__} replaces {op.composite!r}, not {name!r}")
    FUSED[name] = Fused(op, apply, accepts)


def register_kernel(name: str, fn: Callable) -> None:
    """Let `fn` run in place of a primitive's plain numpy array function `name` while the fast path is on."""
    KERNELS[name] = fn


def run(name: str, *args, **kwargs):
    """The composite op `name` on these arguments: its fused replacement when the fast path is on, one is
    registered, and it accepts them; else the composite itself."""
    fused = FUSED.get(name) if state.fused else None
    if fused is not None and (fused.accepts is None or fused.accepts(*args, **kwargs)):
        return fused.apply(*args, **kwargs)
    return COMPOSITES[name](*args, **kwargs)


def kernel(name: str, plain: Callable) -> Callable:
    """The array function a primitive op runs for `name`: the fast path's while it is on, else `plain`."""
    return KERNELS.get(name, plain) if state.fused else plain


# ---------------------------------------------------------------- opening a fused node (draw_graph, tests)

def is_fused(ctx) -> bool:
    """Whether the graph node `ctx` is a fused op that knows the composite it replaces."""
    return getattr(ctx, "composite", None) in COMPOSITES


def fused_op_names() -> set:
    """The class names of the fused ops registered (draw_graph's `expand` takes them)."""
    return {f.op.__name__ for f in FUSED.values()}


def can_rebuild(ctx) -> bool:
    """The composite can be built while the fused node still holds its parents and options (not freed by backward)."""
    return is_fused(ctx) and not ctx.freed


def rebuild(ctx, parents=None):
    """The composite that the fused node `ctx` replaces, applied to `parents` (default: its own) with its
    recorded options, recorded as a graph (even under no_grad), its ops in the scope the fused op ran in."""
    if not is_fused(ctx):
        raise ValueError(f"rebuild: {type(ctx).__name__} is not a fused op that replaces a composite "
                         f"(those are {', '.join(sorted(fused_op_names()))})")
    if ctx.freed:
        raise ValueError(f"rebuild: the inputs of {type(ctx).__name__} were freed by backward(); "
                         "pass retain_graph=True to backward() to keep them")
    prev, state.scope = state.scope, ctx.scope
    try:
        with composed(), enable_grad():
            args, kwargs = ctx.as_composite(*(ctx.parents if parents is None else parents), **ctx.options)
            return COMPOSITES[ctx.composite](*args, **kwargs)
    finally:
        state.scope = prev


def composite_of(out):
    """`out`, made by a fused op, made again by the composite that op replaces, from the same parents:
    gradients of the result flow into the same Tensors the fused op read."""
    if out._ctx is None:
        raise ValueError("composite_of: this tensor was not made by a recorded op (a leaf, or made under no_grad)")
    return rebuild(out._ctx)
