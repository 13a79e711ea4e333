"""One argument, two spellings: PyTorch's `dim=` / `keepdim=` and numpy's (and tinygrad's) `axis=` /
`keepdims=`. The core writes each method with one spelling; `accept_both_spellings(Tensor)` wraps every
public core method that takes an axis with `spellings`, which translates the spelling the method does
not use into the one it does, once, here, instead of in every method.

    x.sum(dim=1, keepdim=True) == x.sum(axis=1, keepdims=True) == x.sum(1, keepdim=True)

Passing both spellings of one argument (`x.sum(dim=1, axis=1)`, or `x.sum(1, axis=1)`) is a
TypeError that names both, as Python's own "got multiple values for argument" would. A method
whose signature holds both names (max/min: `dim` gives PyTorch's (values, indices) pair, `axis`
numpy's values) keeps them apart; the wrapper then only checks that no more than one is given.
"""
from __future__ import annotations

import functools
import inspect

PAIRS = (("dim", "axis"), ("keepdim", "keepdims"))
NAMES = {name for pair in PAIRS for name in pair}


def spellings(fn):
    """Wrap a method so that it accepts both spellings of `dim`/`axis` and `keepdim`/`keepdims`."""
    params = inspect.signature(fn).parameters
    positional = [n for n, p in params.items() if p.kind is p.POSITIONAL_OR_KEYWORD]
    renames, guarded = {}, []                             # {alias: name in the signature}; [(a, b)] both present
    for a, b in PAIRS:
        if a in params and b in params:
            guarded.append((a, b))
        elif a in params or b in params:
            name, alias = (a, b) if a in params else (b, a)
            renames[alias] = name
    op = fn.__name__

    twice = [(n, positional.index(n)) for n in set(renames.values()) | {a for a, _ in guarded} if n in positional]

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs:
            for name, position in twice:
                if name in kwargs and position < len(args):
                    raise TypeError(f"{op}: got {name} twice, by position and as {name}=; pass one, not both")
            for alias, name in renames.items():
                if alias in kwargs:
                    if name in kwargs or (name in positional and positional.index(name) < len(args)):
                        raise _both(op, name, alias)
                    kwargs[name] = kwargs.pop(alias)
            for a, b in guarded:
                if b in kwargs and (a in kwargs or (a in positional and positional.index(a) < len(args))):
                    raise _both(op, a, b)
        return fn(*args, **kwargs)

    return wrapper


def accept_both_spellings(cls) -> None:
    """Wrap every public method of `cls` (and its bases) that takes dim/axis/keepdim/keepdims with
    `spellings`, in the class that defines it (so Tensor.split stays MovementMixin.split). Run on the
    core Tensor before the dialect's own methods attach, which spell their arguments as PyTorch does."""
    for name in dir(cls):
        if name.startswith("_"):
            continue
        owner = next(c for c in cls.__mro__ if name in vars(c))
        raw = vars(owner)[name]
        kind = type(raw) if isinstance(raw, (staticmethod, classmethod)) else None
        fn = raw.__func__ if kind else raw
        if (not inspect.isfunction(fn) or hasattr(fn, "__wrapped__")
                or not set(inspect.signature(fn).parameters) & NAMES):
            continue
        setattr(owner, name, kind(spellings(fn)) if kind else spellings(fn))


def _both(op: str, name: str, alias: str) -> TypeError:
    return TypeError(f"{op}: got both {name} and {alias}=, which are one argument spelled two ways "
                     "(dim/keepdim: PyTorch; axis/keepdims: numpy); pass one, not both")
