"""The PyTorch dialect: what the Tensor says so that PyTorch code reads it, beside the engine, not in it.

A learner can skip this folder. The engine (function.py, ops.py, tensor.py, autograd.py, composites.py
and the files around them) is the idea; nothing in it imports this folder. Here are the translations
for a PyTorch user's habits, attached to the Tensor when `tinygrad_like` is imported:

- spelling.py: every core method that takes an axis also accepts the other spelling (`dim=`/`keepdim=`
  and `axis=`/`keepdims=`);
- attributes.py: what a tensor is and where it lives (`size()`, `dim()`, `device`, `is_leaf`, `grad_fn`,
  `retain_grad()`, `mT`, ...);
- conversions.py: into another dtype or device (`to()`, `cpu()`, `type()`; `.long()`, `.int()` go here);
- inplace.py: arithmetic by name and writing into a tensor (`add`, `add_`, `zero_`, `copy_`, `normal_`,
  `x[i] = v`, `t += x`), with PyTorch's rules for when that is allowed;
- functional.py: torch.nn.functional's names and signatures (`import tinygrad_like.functional as F`), with
  the rest of F in files of their own, one kind each: activations.py, losses.py, margin_losses.py,
  distances.py, norms.py, layers.py, rearrange.py, ctc.py, multi_head_attention.py;
- aliases.py: PyTorch's other names for the engine's ops and short compositions (`eq`, `mm`, `bmm`, `t`,
  `unbind`, `narrow`, `tan`, ...), and the in-place `name_` of each elementwise op;
- elementwise.py: the rest of PyTorch's elementwise methods (`copysign`, `nextafter`, `nan_to_num`, `xlogy`,
  `gcd`, the `bitwise_*` ones, `addcmul`, ...) and the in-place form of each and of the comparisons;
- products.py: named products (`addmm`, `baddbmm`, `inner`, `kron`, `cross`, `dist`, ...);
- shapes.py: shape methods beyond the engine's (`tensor_split`, `rot90`, `unfold`, `sum_to_size`, `t_`, ...);
- indexing.py: writing by index (`index_add`, `index_put_`, `scatter_reduce`, `masked_scatter`, `take`, ...);
- statistics.py: order statistics, running reductions, counts (`median`, `quantile`, `cummax`, `histc`, `cov`, ...);
- missing.py: an attribute PyTorch's Tensor has and ours does not raises `NotInEngine`, naming it (a
  descriptor per name, put on Tensor after everything else).

A new PyTorch Tensor method goes into the file of its kind above, as a method of that file's class;
`attach` copies it onto Tensor, and refuses a name the engine already defines, so the dialect never
changes what a core method does. The methods keep their own module and source lines, so `help()`,
`inspect.getsource` and a debugger lead here. Why attach rather than inherit: docs/engine.md.
"""
from __future__ import annotations

from tinygrad_like.dialect import (
    aliases,
    attributes,
    conversions,
    elementwise,
    functional,
    indexing,
    inplace,
    missing,
    products,
    shapes,
    spelling,
    statistics,
)
from tinygrad_like.tensor import Tensor

__all__ = ["aliases", "attach", "attributes", "conversions", "elementwise", "functional", "indexing", "inplace",
           "missing", "products", "shapes", "spelling", "statistics"]

_CLASS_MACHINERY = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__firstlineno__",
                    "__static_attributes__"}


def attach(cls, *sources) -> None:
    """Copy the methods and properties defined in each class of `sources` onto `cls`. A name `cls`
    already has (from the engine, or from an earlier source) is an error: the dialect adds, never replaces."""
    for source in sources:
        for name, value in vars(source).items():
            if name in _CLASS_MACHINERY:
                continue
            if name in vars(cls) or any(name in vars(base) for base in cls.__mro__[1:-1]):
                raise TypeError(f"dialect: {source.__name__}.{name} would replace {cls.__name__}.{name}; "
                                "the dialect adds names, it does not change the engine's")
            setattr(cls, name, value)


spelling.accept_both_spellings(Tensor)      # first, so that only the engine's own methods are wrapped
attach(Tensor, attributes.Attributes, conversions.Conversions, inplace.InPlace, aliases.Aliases,
       elementwise.Elementwise, products.Products, shapes.Shapes, indexing.Indexing, statistics.Statistics,
       missing.Missing)
missing.mark_missing(Tensor)                # last: only the names nothing above defines
