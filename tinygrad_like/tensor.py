"""`Tensor`: a numpy array that remembers how it was made, so gradients can flow back through it.

Layout of this file: construction, then the ops grouped as unary, binary, reduce, movement and
selection (each a thin call into a primitive of ops.py or a composition of them), then autograd.
The rest of Tensor's methods are defined by idea in the modules it inherits from, one mixin class
each: creation (zeros_like, eye, ...), elementwise_math (sin, clamp, ...), reductions (argmax, norm,
...), movement (split, pad, ...), selection (gather, topk, ...), and composites (softmax, layernorm,
attention, ...: the composite ops, which the fast path may replace by fused ones, dispatch.py).

PyTorch's names (size(), device, to, add_, zero_, `dim=` for `axis=`, ...) are not here: the PyTorch
dialect (tinygrad_like/dialect/) attaches them to this class when tinygrad_like is imported.
A dim out of range raises `DimError` (an IndexError, as in PyTorch, and a ValueError, as before);
shapes that do not fit raise `ShapeError` (a RuntimeError and a ValueError).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from tinygrad_like import dtypes, ops
from tinygrad_like import random as _random
from tinygrad_like.autograd import backprop
from tinygrad_like.composites import CompositeMixin
from tinygrad_like.creation import CreationMixin, shape_args
from tinygrad_like.elementwise_math import ElementwiseMathMixin
from tinygrad_like.errors import DimError, ShapeError
from tinygrad_like.function import Function, current_scope
from tinygrad_like.movement import MovementMixin
from tinygrad_like.reductions import ReductionMixin, correction_of
from tinygrad_like.selection import SelectionMixin, ValuesIndices

_made = itertools.count()  # Tensor._seq


def _dtype(dtype):
    return None if dtype is None else np.dtype(dtype)


class Tensor(CreationMixin, ElementwiseMathMixin, ReductionMixin, MovementMixin, SelectionMixin, CompositeMixin):
    """An n-dimensional array with reverse-mode autodiff.

    >>> x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> (x * x).sum().backward(); x.grad.numpy()        # d(Σx²)/dx = 2x
    array([2., 4., 6.], dtype=float32)
    """

    __slots__ = ("_data", "grad", "requires_grad", "_ctx", "name", "scope", "_last_grad", "_seq", "__weakref__")
    __array_priority__ = 1000  # so that numpy_array * tensor calls Tensor.__rmul__

    def __init__(self, data, requires_grad: bool = False, dtype=None, name: str | None = None):
        if isinstance(data, Tensor):
            data = data.data
        if isinstance(data, np.generic):
            data = np.asarray(data)  # a numpy scalar keeps its dtype, like a numpy array
        if isinstance(data, np.ndarray):
            array = data if dtype is None else data.astype(dtype, copy=False)
        else:
            array = np.asarray(data, dtype=_dtype(dtype))
            if dtype is None and array.dtype == np.float64:
                array = array.astype(np.float32)  # Python floats and lists default to float32
        if requires_grad and array.dtype.kind != "f":
            raise TypeError(f"Tensor: only floating point tensors can require grad, got dtype {array.dtype} "
                            "(integer tensors hold indices; convert with .float() first if you meant values)")
        self._data, self.grad, self.requires_grad, self._ctx = array, None, requires_grad, None
        self.name, self.scope, self._last_grad = name, current_scope(), None
        self._seq = next(_made)  # the order tensors are made in, which backward walks in reverse (autograd.py)

    @classmethod
    def _make(cls, data: np.ndarray, ctx) -> "Tensor":
        """Fast path for op outputs: no conversion, no checks."""
        t = cls.__new__(cls)
        t._data = data
        t.grad = None
        t.requires_grad = ctx is not None
        t._ctx = ctx
        t.name = None
        t.scope = ctx.scope if ctx is not None else ""
        t._last_grad = None
        t._seq = next(_made)
        return t

    # ------------------------------------------------------------ creation
    @staticmethod
    def manual_seed(seed: int) -> None:
        """Seed the library's one random generator: randn, rand, uniform, dropout and sampling."""
        _random.manual_seed(seed)

    @classmethod
    def zeros(cls, *shape, dtype=np.float32, requires_grad=False):
        return cls(np.zeros(shape_args(shape), dtype=dtype), requires_grad=requires_grad)

    @classmethod
    def ones(cls, *shape, dtype=np.float32, requires_grad=False):
        return cls(np.ones(shape_args(shape), dtype=dtype), requires_grad=requires_grad)

    @classmethod
    def full(cls, shape, value, dtype=np.float32, requires_grad=False):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return cls(np.full(shape, value, dtype=dtype), requires_grad=requires_grad)

    @classmethod
    def randn(cls, *shape, dtype=np.float32, requires_grad=False):
        return cls(_random.rng().standard_normal(shape_args(shape)).astype(dtype), requires_grad=requires_grad)

    @classmethod
    def rand(cls, *shape, dtype=np.float32, requires_grad=False):
        return cls(_random.rng().random(shape_args(shape)).astype(dtype), requires_grad=requires_grad)

    @classmethod
    def uniform(cls, *shape, low=0.0, high=1.0, dtype=np.float32, requires_grad=False):
        data = _random.rng().uniform(low, high, shape_args(shape)).astype(dtype)
        return cls(data, requires_grad=requires_grad)

    @classmethod
    def arange(cls, start, stop=None, step=1, dtype=None, requires_grad=False):
        """Like range(): integers when every argument is an int, float32 otherwise."""
        if stop is None:
            start, stop = 0, start
        if dtype is None:
            dtype = np.int64 if all(isinstance(v, (int, np.integer)) for v in (start, stop, step)) else np.float32
        return cls(np.arange(start, stop, step, dtype=dtype), requires_grad=requires_grad)

    # ------------------------------------------------------------ properties
    @property
    def data(self) -> np.ndarray:
        """The numpy array that holds the values. Assigning replaces it: an array as it is, or a
        Tensor's array (PyTorch's `p.data = t`), so the course's SGD line `p.data += -lr * p.grad`
        updates p (the Tensor; its new values live in a new array)."""
        return self._data

    @data.setter
    def data(self, value) -> None:
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value)

    @property
    def shape(self) -> tuple: return self._data.shape
    @property
    def dtype(self) -> np.dtype: return self._data.dtype
    @property
    def ndim(self) -> int: return self._data.ndim
    @property
    def T(self) -> "Tensor": return self.permute(*reversed(range(self.ndim)))

    def numpy(self) -> np.ndarray: return self.data
    def item(self): return self.data.item()
    def tolist(self): return self.data.tolist()
    def detach(self) -> "Tensor": return Tensor._make(self.data, None)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    __hash__ = object.__hash__  # by identity (defining __eq__ would remove it): tensors key the dicts of backward

    def __iter__(self):
        """Over the first axis, as PyTorch: a (3, 4) tensor yields three (4,) tensors."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    # ------------------------------------------------------------ Python number protocols
    def _one(self, what: str):
        if self.data.size != 1:
            raise TypeError(f"{what}: only one-element tensors can be converted to Python scalars, "
                            f"got shape {self.shape}")
        return self.data.item()

    def __float__(self): return float(self._one("float()"))
    def __int__(self): return int(self._one("int()"))

    def __index__(self):
        if self.dtype.kind not in "biu":
            raise TypeError(f"__index__: only integer tensors of a single element can be used as an index, "
                            f"got dtype {self.dtype}")
        return int(self._one("__index__"))

    def __format__(self, spec: str):
        """f"{loss:.3f}": a one-element tensor formats like its number; others only with an empty spec."""
        if self.data.size == 1:
            return format(self.data.item(), spec)
        return object.__format__(self, spec)

    def __array__(self, dtype=None, copy=None):
        """np.asarray(t) and np.array(t, dtype=...) give the numeric array (a copy only when needed
        or asked: copy=True)."""
        array = self.data if dtype is None else self.data.astype(dtype, copy=False)
        return array.copy() if copy and array is self.data else array

    def __bool__(self):
        if self.data.size != 1:
            raise ValueError(f"the truth value of a tensor of shape {self.shape} is ambiguous; use .any() or .all()")
        return bool(self.data)

    def __repr__(self):
        body = np.array2string(self.data, precision=4, separator=", ", threshold=20, edgeitems=2, prefix="Tensor(")
        extras = [f"dtype={self.dtype}"]
        if self._ctx is not None:
            extras.append(f"grad_fn=<{type(self._ctx).__name__}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        if self.name:
            extras.append(f"name={self.name!r}")
        return f"Tensor({body}, {', '.join(extras)})"

    def cast(self, dtype) -> "Tensor":
        dtype = np.dtype(dtype)
        return self if dtype == self.dtype else ops.Cast.apply(self, dtype=dtype)

    def float(self) -> "Tensor": return self.cast(np.float32)
    def double(self) -> "Tensor": return self.cast(np.float64)

    def _lift(self, other) -> "Tensor":
        """Turn a Python or numpy number into a Tensor of our dtype, so float32 stays float32."""
        if isinstance(other, Tensor):
            return other
        if self.dtype.kind == "f" and np.ndim(other) == 0 and not isinstance(other, np.ndarray):
            return Tensor._make(np.asarray(other, dtype=self.dtype), None)
        return Tensor(other)

    def _pair(self, other, op: str = "") -> tuple:
        """self and other as two Tensors of one dtype, by PyTorch's promotion (tinygrad_like/dtypes.py):
        a Python number keeps a float tensor's dtype, an integer tensor meeting a float takes the float's."""
        if isinstance(other, Tensor):
            if other._data.dtype == self._data.dtype:   # the hot path: no promotion to work out
                return self, other
        elif isinstance(other, (int, float)) and self._data.dtype.kind == "f":
            return self, Tensor._make(np.asarray(other, dtype=self._data.dtype), None)
        if op == "-" and (self.data.dtype == bool or isinstance(other, Tensor) and other.data.dtype == bool):
            raise TypeError(f"-: subtracting with a bool tensor is not supported (as in PyTorch); got {self.dtype} "
                            f"and {other.dtype if isinstance(other, Tensor) else type(other).__name__}, "
                            "use ~ or ^ for bools")
        if not isinstance(other, (Tensor, int, float, np.generic)):
            other = Tensor(other)
        dtype = dtypes.result_type(self.data, other.data if isinstance(other, Tensor) else other)
        if not isinstance(other, Tensor):
            other = Tensor._make(np.asarray(other, dtype=dtype), None)
        return self.cast(dtype), other.cast(dtype)

    def _floats(self, other) -> tuple:
        """_pair, then integer or bool operands as float32: true division of integers gives the default float."""
        a, b = self._pair(other)
        return (a, b) if a.data.dtype.kind == "f" else (a.cast(dtypes.DEFAULT_FLOAT), b.cast(dtypes.DEFAULT_FLOAT))

    # ------------------------------------------------------------ unary ops
    def __neg__(self): return ops.Neg.apply(self)
    def __pos__(self): return self
    def __abs__(self): return self.abs()
    def _floating(self) -> "Tensor":
        """self, or an integer or bool tensor as float32: float ops of integers give floats, as in PyTorch."""
        return self if self.data.dtype.kind == "f" else self.cast(dtypes.DEFAULT_FLOAT)

    def exp(self): return ops.Exp.apply(self._floating())
    def log(self): return ops.Log.apply(self._floating())
    def sqrt(self): return ops.Sqrt.apply(self._floating())
    def tanh(self): return ops.Tanh.apply(self._floating())
    def sigmoid(self): return ops.Sigmoid.apply(self._floating())
    def relu(self): return ops.Relu.apply(self)
    def abs(self): return ops.Abs.apply(self)
    def sign(self) -> "Tensor":
        """Constant (no gradient): the derivative of sign is zero wherever it exists."""
        return Tensor._make(np.sign(self.data), None)

    # ------------------------------------------------------------ binary ops
    # operands are promoted by PyTorch's rules first (_pair); reflected ops swap the pair
    def __add__(self, other): return ops.Add.apply(*self._pair(other))
    def __radd__(self, other): return ops.Add.apply(*self._pair(other)[::-1])
    def __sub__(self, other): return ops.Sub.apply(*self._pair(other, "-"))
    def __rsub__(self, other): return ops.Sub.apply(*self._pair(other, "-")[::-1])
    def __mul__(self, other): return ops.Mul.apply(*self._pair(other))
    def __rmul__(self, other): return ops.Mul.apply(*self._pair(other)[::-1])
    def __truediv__(self, other): return ops.Div.apply(*self._floats(other))
    def __rtruediv__(self, other): return ops.Div.apply(*self._floats(other)[::-1])

    def __pow__(self, other):
        if isinstance(other, Tensor) or not isinstance(other, (int, float, np.number)):
            return ops.Pow.apply(*_no_bool_pow(*self._pair(other)))
        if self.dtype.kind == "f":
            return ops.PowConst.apply(self, c=float(other))
        if isinstance(other, (float, np.floating)):                 # int ** 0.5: float32, as in PyTorch
            return ops.PowConst.apply(self.cast(dtypes.DEFAULT_FLOAT), c=float(other))
        base = self if self.dtype != bool else self.cast(dtypes.INT64)   # bool ** 2 is int64
        return ops.PowConst.apply(base, c=int(other))

    def __rpow__(self, other): return ops.Pow.apply(*_no_bool_pow(*self._pair(other)[::-1]))

    def __floordiv__(self, other):
        """⌊self / other⌋ (PyTorch's and Python's floor division, also for negative numbers). No gradient:
        the derivative is 0 wherever it exists."""
        a, b = self._pair(other)
        if a.dtype.kind != "f" and not b.data.all():
            raise ZeroDivisionError(f"floor_divide: integer division by zero (shapes {a.shape} and {b.shape})")
        return Tensor._make(np.floor_divide(a.data, b.data), None)

    def __rfloordiv__(self, other): return self._pair(other)[1] // self

    def __mod__(self, other):
        """self − ⌊self / other⌋·other: the remainder takes the sign of the divisor, as in Python and PyTorch."""
        a, b = self._pair(other)
        if a.dtype.kind != "f" and not b.data.all():
            raise ZeroDivisionError(f"remainder: integer division by zero (shapes {a.shape} and {b.shape})")
        return ops.Mod.apply(a, b)

    def __rmod__(self, other): return self._pair(other)[1] % self

    def maximum(self, other): return ops.Maximum.apply(*self._pair(other))
    def minimum(self, other): return ops.Minimum.apply(*self._pair(other))

    def matmul(self, other):
        """Matrix product with numpy's rules: batch dimensions broadcast; a 1-D side is a vector.
        The dtypes are promoted as for `*` (an int64 one-hot @ float32 weights is float32)."""
        a, other = self._pair(other)
        x = a.unsqueeze(0) if a.ndim == 1 else a
        y = other.unsqueeze(-1) if other.ndim == 1 else other
        if x.ndim < 2 or y.ndim < 2:
            raise ShapeError(f"matmul: needs at least 1-D operands, got shapes {self.shape} and {other.shape}")
        if x.shape[-1] != y.shape[-2]:
            raise ShapeError(f"matmul: inner dimensions differ: {self.shape} @ {other.shape}")
        if x.ndim > 2 and y.ndim == 2:                  # (B, T, k) @ (k, m): one big (B·T, k) @ (k, m) product
            out = ops.Matmul.apply(x.reshape(-1, x.shape[-1]), y).reshape(*x.shape[:-1], y.shape[-1])
        else:
            out = ops.Matmul.apply(x, y)                # (..., n, m), n = 1 / m = 1 for a vector side
        if self.ndim == 1:
            out = out.squeeze(-2)
        return out.squeeze(-1) if other.ndim == 1 else out

    __matmul__ = dot = matmul

    def __rmatmul__(self, other): return self._lift(other).matmul(self)

    # comparisons give boolean tensors that carry no gradient
    def _compare(self, other, fn):
        other = other.data if isinstance(other, Tensor) else other
        return Tensor._make(fn(self.data, other), None)

    def __lt__(self, other): return self._compare(other, np.less)
    def __le__(self, other): return self._compare(other, np.less_equal)
    def __gt__(self, other): return self._compare(other, np.greater)
    def __ge__(self, other): return self._compare(other, np.greater_equal)
    def __eq__(self, other): return self._compare(other, np.equal)
    def __ne__(self, other): return self._compare(other, np.not_equal)
    def __invert__(self): return Tensor._make(~self.data, None)

    def _bitwise(self, other, fn, name: str):
        """Bitwise on integers, logical on bools (the same thing for one bit), as in PyTorch and numpy."""
        a, b = self._pair(other)
        if a.dtype.kind == "f":
            raise TypeError(f"{name}: needs bool or integer tensors, got {self.dtype} and "
                            f"{other.dtype if isinstance(other, Tensor) else type(other).__name__}")
        return Tensor._make(fn(a.data, b.data), None)

    def __and__(self, other): return self._bitwise(other, np.bitwise_and, "&")
    def __or__(self, other): return self._bitwise(other, np.bitwise_or, "|")
    def __xor__(self, other): return self._bitwise(other, np.bitwise_xor, "^")
    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    # ------------------------------------------------------------ reduce ops
    def _axes(self, axis) -> tuple | None:
        if axis is None:
            return None
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        for a in axes:
            if not -max(self.ndim, 1) <= a < max(self.ndim, 1):
                raise DimError(f"axis {a} is out of range for a tensor of shape {self.shape}")
        if self.ndim == 0:
            return ()    # dim 0 or -1 of a 0-d tensor is the tensor itself, as in PyTorch
        return tuple(sorted(int(a) % self.ndim for a in axes))

    def sum(self, axis=None, keepdim=False, dtype=None):
        """Σ over `axis` (all axes when None). dtype: cast first, e.g. to accumulate float32 in float64."""
        x = self if dtype is None else self.cast(dtype)
        return ops.Sum.apply(x, axis=x._axes(axis), keepdim=keepdim)

    def amax(self, axis=None, keepdim=False):
        """The largest entry over `axis` (an int, a tuple, or None for all). Tied entries share the gradient."""
        return ops.Max.apply(self, axis=self._axes(axis), keepdim=keepdim)

    def amin(self, axis=None, keepdim=False):
        """The smallest entry over `axis`, like amax."""
        return ops.Min.apply(self, axis=self._axes(axis), keepdim=keepdim)

    def max(self, dim=None, keepdim=False, *, axis=None):
        """Three habits, one name. x.max(): the largest entry. x.max(axis=...) (numpy's, tinygrad's):
        the values, as amax. x.max(d) or x.max(dim=d) (PyTorch's): the pair (values, indices) along
        dim d, the index of the first largest entry, which gets the whole gradient (as in PyTorch).
        x.max(other_tensor) is PyTorch's elementwise maximum."""
        if isinstance(dim, Tensor):
            return self.maximum(dim)
        if dim is None:
            return self.amax(axis, keepdim)
        return self._extreme(dim, keepdim, np.argmax, "max")

    def min(self, dim=None, keepdim=False, *, axis=None):
        """Like max: x.min(), x.min(axis=...) the values (amin), x.min(d) the pair (values, indices),
        x.min(other_tensor) the elementwise minimum."""
        if isinstance(dim, Tensor):
            return self.minimum(dim)
        if dim is None:
            return self.amin(axis, keepdim)
        return self._extreme(dim, keepdim, np.argmin, "min")

    def _extreme(self, dim: int, keepdim: bool, arg, op: str) -> ValuesIndices:
        """PyTorch's max(dim) / min(dim): values read at the arg index, so the gradient goes to that entry."""
        if self.ndim == 0:                                        # dim 0 or -1 of a 0-d tensor: itself, index 0
            self._axes(dim)
            return ValuesIndices(self, Tensor._make(np.zeros((), dtype=np.int64), None))
        d = self._dim(dim, op)
        if self.shape[d] == 0:
            raise ShapeError(f"{op}: dim {dim} of shape {self.shape} is empty, so it has no {op}imum")
        index = arg(self.data, axis=d, keepdims=True)
        values = self.gather(d, index)
        if not keepdim:
            values, index = values.squeeze(d), index.squeeze(d)
        return ValuesIndices(values, Tensor._make(index, None))

    def logsumexp(self, axis=-1, keepdim=False):
        """log Σ exp(x) over `axis`, computed as m + log Σ exp(x − m) with m the (constant) max, so exp
        never overflows. The gradient is softmax(x). An infinite max (a row of −inf, or +inf) is not
        subtracted: the row's result is then −inf (or +inf), as in PyTorch."""
        m = self.amax(axis, keepdim=True).detach()
        m = Tensor._make(np.where(np.isfinite(m.data), m.data, 0).astype(self.dtype), None)
        out = (self - m).exp().sum(axis, keepdim=True).log() + m
        return out if keepdim else out.reshape(_reduced_shape(self.shape, self._axes(axis)))

    def _count(self, axis) -> int:
        axes = self._axes(axis)
        return self.data.size if axes is None else math.prod((self.shape[a] for a in axes), start=1)

    def mean(self, axis=None, keepdim=False, dtype=None):
        x = self if dtype is None else self.cast(dtype)
        return x.sum(axis, keepdim) / x._count(axis)

    def var(self, axis=None, unbiased=None, keepdim=False, *, correction=None, ddof=None):
        """Σ(x - mean)² / (N - correction) over `axis`. The default is the unbiased estimate, correction=1,
        for every spelling (PyTorch's and tinygrad's default; numpy's var defaults to ddof=0). correction=0,
        unbiased=False or ddof=0 give the population variance; pass one of the three. The positional order
        is PyTorch's: x.var(0, False) is unbiased=False, as in PyTorch (keepdim comes third)."""
        c = correction_of(correction, unbiased, ddof, "var")
        centered = self - self.mean(axis, keepdim=True)
        return (centered * centered).sum(axis, keepdim) / max(self._count(axis) - c, 0)

    def std(self, axis=None, unbiased=None, keepdim=False, *, correction=None, ddof=None):
        """√var, with var's correction (unbiased by default)."""
        return self.var(axis, keepdim=keepdim, correction=correction_of(correction, unbiased, ddof, "std")).sqrt()

    # ------------------------------------------------------------ movement ops
    def reshape(self, *shape):
        shape = shape_args(shape)
        return self if shape == self.shape else ops.Reshape.apply(self, shape=shape)

    def view(self, *shape): return self.reshape(*shape)

    def _dim(self, dim: int, op: str, extra: int = 0) -> int:
        """`dim` in [-n, n), n = ndim + extra, as an index >= 0. Out of range is an error, not a silent wrap."""
        n = self.ndim + extra
        if not -n <= dim < n:
            raise DimError(f"{op}: dim {dim} is out of range for a tensor of shape {self.shape}")
        return dim % n

    def permute(self, *order):
        order = shape_args(order)
        if sorted(o + self.ndim if o < 0 else o for o in order) != list(range(self.ndim)):
            raise ValueError(f"permute: {order} is not a permutation of the {self.ndim} axes of shape {self.shape}")
        return ops.Permute.apply(self, order=tuple(o % self.ndim for o in order))

    def transpose(self, dim0=-2, dim1=-1):
        dim0, dim1 = self._dim(dim0, "transpose"), self._dim(dim1, "transpose")
        order = list(range(self.ndim))
        order[dim0], order[dim1] = order[dim1], order[dim0]
        return self.permute(*order)

    def expand(self, *shape):
        shape = shape_args(shape)
        shape = tuple(s if n == -1 else n for s, n in zip((1,) * (len(shape) - self.ndim) + self.shape, shape))
        return self if shape == self.shape else ops.Expand.apply(self, shape=shape)

    def flatten(self, start_dim=0, end_dim=-1):
        """Axes start_dim..end_dim (both included) merged into one: (2, 3, 4).flatten(1) is (2, 12)."""
        if self.ndim == 0:
            return self.reshape(1)
        start, end = self._dim(start_dim, "flatten"), self._dim(end_dim, "flatten")
        return self.reshape(self.shape[:start] + (math.prod(self.shape[start:end + 1]),) + self.shape[end + 1:])

    def unsqueeze(self, dim):
        dim = self._dim(dim, "unsqueeze", extra=1)
        return self.reshape(self.shape[:dim] + (1,) + self.shape[dim:])

    def squeeze(self, dim=None):
        if dim is None:
            return self.reshape(tuple(n for n in self.shape if n != 1))
        dim = self._dim(dim, "squeeze")
        if self.shape[dim] != 1:
            return self
        return self.reshape(self.shape[:dim] + self.shape[dim + 1:])

    def __getitem__(self, index):
        index = _convert_index(index)
        try:
            return ops.Getitem.apply(self, index=index)
        except IndexError as e:
            raise IndexError(f"getitem: {e} (tensor shape {self.shape})") from None

    @staticmethod
    def cat(*tensors, dim=0):
        """Join tensors along an existing axis: cat(a (2,3), b (4,3)) is (6,3)."""
        tensors = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
        first = tensors[0]
        axis = first._dim(dim, "cat")
        for t in tensors[1:]:
            if t.ndim != first.ndim or any(a != b for i, (a, b) in enumerate(zip(t.shape, first.shape)) if i != axis):
                raise ShapeError(f"cat: shapes {first.shape} and {t.shape} differ outside dim {dim}")
        return ops.Cat.apply(*tensors, axis=axis)

    @staticmethod
    def stack(*tensors, dim=0):
        """Join same-shaped tensors along a new axis: stack of three (2,3) is (3,2,3)."""
        tensors = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
        first = tensors[0]
        first._dim(dim, "stack", extra=1)
        for t in tensors[1:]:
            if t.shape != first.shape:
                raise ShapeError(f"stack: shapes {first.shape} and {t.shape} differ")
        return Tensor.cat(*[t.unsqueeze(dim) for t in tensors], dim=dim)

    # ------------------------------------------------------------ selection
    def where(self, x, y):
        """`cond.where(x, y)`: x where cond is true, else y (cond is self, a boolean tensor)."""
        x = x if isinstance(x, Tensor) else (y._lift(x) if isinstance(y, Tensor) else Tensor(x))
        y = x._lift(y)
        return ops.Where.apply(self if self.dtype == bool else self.cast(bool), x, y)

    def masked_fill(self, mask, value):
        """Replace the entries where `mask` is true by `value` (e.g. -inf before a softmax)."""
        mask = mask if isinstance(mask, Tensor) else Tensor(mask)
        return mask.where(self._lift(value), self)

    # ------------------------------------------------------------ autograd
    def backward(self, gradient=None, retain_graph=False, create_graph=False) -> None:
        """Accumulate d(self)/d(leaf) into the `.grad` of every leaf that requires grad.

        `gradient` is d(loss)/d(self) and may be omitted for a scalar. The graph's arrays are freed
        afterwards unless `retain_graph` (its skeleton stays, for draw_graph); `create_graph` records
        the backward pass, for higher-order gradients.
        """
        if not self.requires_grad:
            raise RuntimeError("backward: this tensor does not require grad (no input had requires_grad=True, "
                               "or it was computed under no_grad())")
        if gradient is None:
            if self.data.size != 1:
                raise RuntimeError(f"backward: output of shape {self.shape} is not a scalar; reduce it first "
                                   "(e.g. .sum()) or pass gradient= with the same shape")
            gradient = Tensor._make(np.ones_like(self.data), None)
        else:
            gradient = _as_gradient(gradient, self)
        backprop([self], [gradient], retain_graph=retain_graph or create_graph, create_graph=create_graph)


Function.make_tensor = Tensor._make


def _no_bool_pow(x: Tensor, y: Tensor) -> tuple:
    if x.dtype == bool:     # numpy would answer in int8; PyTorch refuses
        raise TypeError("**: a power of two bool tensors is not supported (as in PyTorch); cast one to int or float")
    return x, y


def _reduced_shape(shape: tuple, axes) -> tuple:
    """`shape` without `axes` (all of them when None): the shape of a reduction without keepdim."""
    return () if axes is None else tuple(n for i, n in enumerate(shape) if i not in axes)


def _as_gradient(g, t: Tensor) -> Tensor:
    g = g if isinstance(g, Tensor) else Tensor(np.asarray(g, dtype=t.dtype))
    if g.shape != t.shape:
        raise ValueError(f"backward: gradient of shape {g.shape} does not match output of shape {t.shape}")
    return g


def _convert_index(index):
    """Tensors and lists inside an index become numpy integer arrays."""
    def conv(i):
        if isinstance(i, Tensor):
            return i.data
        if isinstance(i, list):
            return np.asarray(i)
        return i
    return tuple(conv(i) for i in index) if isinstance(index, tuple) else conv(index)


def grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None, allow_unused=False):
    """d(outputs)/d(inputs) as a list of Tensors, leaving every `.grad` untouched.

    outputs, inputs: a Tensor or a sequence of them. With allow_unused, an input the outputs do not
    depend on gets None; otherwise that is an error.
    """
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    single = isinstance(inputs, Tensor)
    inputs = [inputs] if single else list(inputs)
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    seeds = []
    for out, g in zip(outputs, grad_outputs):
        if not out.requires_grad:
            raise RuntimeError("grad: an output does not require grad")
        if g is None:
            if out.data.size != 1:
                raise RuntimeError(f"grad: output of shape {out.shape} is not a scalar; pass grad_outputs")
            g = Tensor._make(np.ones_like(out.data), None)
        seeds.append(_as_gradient(g, out))
    retain = create_graph if retain_graph is None else retain_graph
    found = backprop(outputs, seeds, retain_graph=retain, create_graph=create_graph, inputs=inputs)
    result = []
    for i, t in enumerate(inputs):
        g = found.get(t)
        if g is None and not allow_unused:
            raise RuntimeError(f"grad: input {i} (shape {t.shape}) is not used to compute the outputs; "
                               "pass allow_unused=True to get None for it")
        result.append(g)
    return result
