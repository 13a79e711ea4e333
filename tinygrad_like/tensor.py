"""`Tensor`: a numpy array that remembers how it was made, so gradients can flow back through it.

Layout of this file: construction and creation, then the ops grouped as unary, binary, reduce,
movement and selection (each a thin call into a primitive of ops.py or a composition of them), then
the functional nn ops (softmax, layernorm, attention, ...) composed from those, then autograd.
The hot functional ops first take their fused twin from fused.py (one op each, proven equal to the
composition by tests/test_fused.py); inside `with composed():` they run the composition below it.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from tinygrad_like import dtypes, fused, ops
from tinygrad_like import random as _random
from tinygrad_like.autograd import backprop
from tinygrad_like.function import Function, current_scope, no_grad, state

_made = itertools.count()  # Tensor._seq


def _shape_args(shape) -> tuple:
    """Accept f(2, 3) and f((2, 3)) alike."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def _dtype(dtype):
    return None if dtype is None else np.dtype(dtype)


class Tensor:
    """An n-dimensional array with reverse-mode autodiff.

    >>> x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> (x * x).sum().backward(); x.grad.numpy()        # d(Σx²)/dx = 2x
    array([2., 4., 6.], dtype=float32)
    """

    __slots__ = ("data", "grad", "requires_grad", "_ctx", "name", "scope", "_last_grad", "_seq", "__weakref__")
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
        self.data, self.grad, self.requires_grad, self._ctx = array, None, requires_grad, None
        self.name, self.scope, self._last_grad = name, current_scope(), None
        self._seq = next(_made)  # the order tensors are made in, which backward walks in reverse (autograd.py)

    @classmethod
    def _make(cls, data: np.ndarray, ctx) -> "Tensor":
        """Fast path for op outputs: no conversion, no checks."""
        t = cls.__new__(cls)
        t.data = data
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
        return cls(np.zeros(_shape_args(shape), dtype=dtype), requires_grad=requires_grad)

    @classmethod
    def ones(cls, *shape, dtype=np.float32, requires_grad=False):
        return cls(np.ones(_shape_args(shape), dtype=dtype), requires_grad=requires_grad)

    @classmethod
    def full(cls, shape, value, dtype=np.float32, requires_grad=False):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return cls(np.full(shape, value, dtype=dtype), requires_grad=requires_grad)

    @classmethod
    def randn(cls, *shape, dtype=np.float32, requires_grad=False):
        return cls(_random.rng().standard_normal(_shape_args(shape)).astype(dtype), requires_grad=requires_grad)

    @classmethod
    def rand(cls, *shape, dtype=np.float32, requires_grad=False):
        return cls(_random.rng().random(_shape_args(shape)).astype(dtype), requires_grad=requires_grad)

    @classmethod
    def uniform(cls, *shape, low=0.0, high=1.0, dtype=np.float32, requires_grad=False):
        data = _random.rng().uniform(low, high, _shape_args(shape)).astype(dtype)
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
    def shape(self) -> tuple: return self.data.shape
    @property
    def dtype(self) -> np.dtype: return self.data.dtype
    @property
    def ndim(self) -> int: return self.data.ndim
    @property
    def size(self) -> int: return self.data.size
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
            if other.data.dtype == self.data.dtype:   # the hot path: no promotion to work out
                return self, other
        elif isinstance(other, (int, float)) and self.data.dtype.kind == "f":
            return self, Tensor._make(np.asarray(other, dtype=self.data.dtype), None)
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
    def exp(self): return ops.Exp.apply(self)
    def log(self): return ops.Log.apply(self)
    def sqrt(self): return ops.Sqrt.apply(self)
    def tanh(self): return ops.Tanh.apply(self)
    def sigmoid(self): return ops.Sigmoid.apply(self)
    def relu(self): return ops.Relu.apply(self)
    def abs(self): return ops.Abs.apply(self)
    def sign(self) -> "Tensor":
        """Constant (no gradient): the derivative of sign is zero wherever it exists."""
        return Tensor._make(np.sign(self.data), None)

    def silu(self):
        """x·σ(x), the SiLU (swish) used by SwiGLU."""
        return self * self.sigmoid()

    def gelu(self):
        """GELU, tanh approximation as in GPT-2: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))."""
        if state.fused:
            return fused.Gelu.apply(self)
        return 0.5 * self * (1 + (math.sqrt(2 / math.pi) * (self + 0.044715 * self ** 3)).tanh())

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

    # ------------------------------------------------------------ in-place ops
    def _inplace(self, other, op, name: str):
        """`t op= other`. With no graph being recorded (under no_grad(), or nothing requires grad) the
        result is written into t's own array: the same Tensor, the same array, as in PyTorch, so that
        `with no_grad(): w -= lr * w.grad` trains w. While recording, a leaf that requires grad is an
        error (PyTorch's too); an intermediate result becomes a new node that Python binds to the name."""
        recording = state.grad_enabled and (self.requires_grad or (isinstance(other, Tensor) and other.requires_grad))
        if recording:
            if self.requires_grad and self._ctx is None:
                raise RuntimeError(f"{name}: a leaf tensor that requires grad cannot be changed in place while "
                                   "a graph is recorded; update it under `with no_grad():`")
            return op(self, other)
        with no_grad():
            result = op(self, other).data
        if result.shape != self.shape:
            raise ValueError(f"{name}: the result's shape {result.shape} is not the tensor's shape {self.shape}")
        if not np.can_cast(result.dtype, self.dtype, "same_kind"):
            raise TypeError(f"{name}: the result's dtype {result.dtype} cannot be written into a {self.dtype} tensor")
        if not self.data.flags.writeable:
            raise ValueError(f"{name}: this tensor's array is read-only (a broadcast view?); make a copy first")
        np.copyto(self.data, result, casting="same_kind")
        return self

    def __iadd__(self, other): return self._inplace(other, Tensor.__add__, "+=")
    def __isub__(self, other): return self._inplace(other, Tensor.__sub__, "-=")
    def __imul__(self, other): return self._inplace(other, Tensor.__mul__, "*=")
    def __itruediv__(self, other): return self._inplace(other, Tensor.__truediv__, "/=")

    def matmul(self, other):
        """Matrix product with numpy's rules: batch dimensions broadcast; a 1-D side is a vector.
        The dtypes are promoted as for `*` (an int64 one-hot @ float32 weights is float32)."""
        a, other = self._pair(other)
        x = a.unsqueeze(0) if a.ndim == 1 else a
        y = other.unsqueeze(-1) if other.ndim == 1 else other
        if x.ndim < 2 or y.ndim < 2:
            raise ValueError(f"matmul: needs at least 1-D operands, got shapes {self.shape} and {other.shape}")
        if x.shape[-1] != y.shape[-2]:
            raise ValueError(f"matmul: inner dimensions differ: {self.shape} @ {other.shape}")
        if x.ndim > 2 and y.ndim == 2:                  # (B, T, k) @ (k, m): one big (B·T, k) @ (k, m) product
            out = ops.Matmul.apply(x.reshape(-1, x.shape[-1]), y).reshape(*x.shape[:-1], y.shape[-1])
        else:
            out = ops.Matmul.apply(x, y)                # (..., n, m), n = 1 / m = 1 for a vector side
        if self.ndim == 1:
            out = out.squeeze(-2)
        return out.squeeze(-1) if other.ndim == 1 else out

    __matmul__ = dot = matmul

    def linear(self, weight, bias=None):
        """x Wᵀ + b, x (..., in), weight (out, in), bias (out,) or None: what nn.Linear computes."""
        if self.shape[-1:] != weight.shape[-1:] or weight.ndim != 2:
            raise ValueError(f"linear: input {self.shape} does not fit weight {weight.shape} "
                             "(need (..., in) and (out, in))")
        if bias is not None and bias.shape != weight.shape[:1]:
            raise ValueError(f"linear: bias {bias.shape} does not fit weight {weight.shape} "
                             f"(need ({weight.shape[0]},))")
        if state.fused:
            return fused.Linear.apply(self, weight, *(() if bias is None else (bias,)))
        y = self @ weight.T
        return y if bias is None else y + bias
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
                raise ValueError(f"axis {a} is out of range for a tensor of shape {self.shape}")
        if self.ndim == 0:
            return ()    # dim 0 or -1 of a 0-d tensor is the tensor itself, as in PyTorch
        return tuple(sorted(int(a) % self.ndim for a in axes))

    def sum(self, axis=None, keepdim=False, dtype=None):
        """Σ over `axis` (all axes when None). dtype: cast first, e.g. to accumulate float32 in float64."""
        x = self if dtype is None else self.cast(dtype)
        return ops.Sum.apply(x, axis=x._axes(axis), keepdim=keepdim)

    def max(self, axis=None, keepdim=False): return ops.Max.apply(self, axis=self._axes(axis), keepdim=keepdim)
    def min(self, axis=None, keepdim=False): return ops.Min.apply(self, axis=self._axes(axis), keepdim=keepdim)

    def logsumexp(self, axis=-1, keepdim=False):
        """log Σ exp(x) over `axis`, computed as m + log Σ exp(x − m) with m the (constant) max, so exp
        never overflows. The gradient is softmax(x). An infinite max (a row of −inf, or +inf) is not
        subtracted: the row's result is then −inf (or +inf), as in PyTorch."""
        m = self.max(axis, keepdim=True).detach()
        m = Tensor._make(np.where(np.isfinite(m.data), m.data, 0).astype(self.dtype), None)
        out = (self - m).exp().sum(axis, keepdim=True).log() + m
        return out if keepdim else out.reshape(_reduced_shape(self.shape, self._axes(axis)))

    def _count(self, axis) -> int:
        axes = self._axes(axis)
        return self.size if axes is None else math.prod((self.shape[a] for a in axes), start=1)

    def mean(self, axis=None, keepdim=False, dtype=None):
        x = self if dtype is None else self.cast(dtype)
        return x.sum(axis, keepdim) / x._count(axis)

    def var(self, axis=None, keepdim=False, correction=1):
        """Σ(x - mean)² / (N - correction): correction=1 is the unbiased estimate, 0 the population variance."""
        centered = self - self.mean(axis, keepdim=True)
        return (centered * centered).sum(axis, keepdim) / max(self._count(axis) - correction, 0)

    def std(self, axis=None, keepdim=False, correction=1):
        return self.var(axis, keepdim, correction).sqrt()

    # ------------------------------------------------------------ movement ops
    def reshape(self, *shape):
        shape = _shape_args(shape)
        return self if shape == self.shape else ops.Reshape.apply(self, shape=shape)

    def view(self, *shape): return self.reshape(*shape)

    def _dim(self, dim: int, op: str, extra: int = 0) -> int:
        """`dim` in [-n, n), n = ndim + extra, as an index >= 0. Out of range is an error, not a silent wrap."""
        n = self.ndim + extra
        if not -n <= dim < n:
            raise ValueError(f"{op}: dim {dim} is out of range for a tensor of shape {self.shape}")
        return dim % n

    def permute(self, *order):
        order = _shape_args(order)
        if sorted(o + self.ndim if o < 0 else o for o in order) != list(range(self.ndim)):
            raise ValueError(f"permute: {order} is not a permutation of the {self.ndim} axes of shape {self.shape}")
        return ops.Permute.apply(self, order=tuple(o % self.ndim for o in order))

    def transpose(self, dim0=-2, dim1=-1):
        dim0, dim1 = self._dim(dim0, "transpose"), self._dim(dim1, "transpose")
        order = list(range(self.ndim))
        order[dim0], order[dim1] = order[dim1], order[dim0]
        return self.permute(*order)

    def expand(self, *shape):
        shape = _shape_args(shape)
        shape = tuple(s if n == -1 else n for s, n in zip((1,) * (len(shape) - self.ndim) + self.shape, shape))
        return self if shape == self.shape else ops.Expand.apply(self, shape=shape)

    def flatten(self, start_dim=0, end_dim=-1):
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
                raise ValueError(f"cat: shapes {first.shape} and {t.shape} differ outside dim {dim}")
        return ops.Cat.apply(*tensors, axis=axis)

    @staticmethod
    def stack(*tensors, dim=0):
        """Join same-shaped tensors along a new axis: stack of three (2,3) is (3,2,3)."""
        tensors = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
        first = tensors[0]
        first._dim(dim, "stack", extra=1)
        for t in tensors[1:]:
            if t.shape != first.shape:
                raise ValueError(f"stack: shapes {first.shape} and {t.shape} differ")
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

    # ------------------------------------------------------------ functional nn ops (composed)
    def softmax(self, axis=-1):
        """exp(x - max) / Σ exp(x - max): subtracting the (constant) max keeps exp from overflowing."""
        if self.ndim == 0:                                      # dim 0 / -1 of a 0-d tensor: softmax is 1
            self._axes(axis)
            return self.reshape(1).softmax(0).reshape(())
        if state.fused:
            return fused.Softmax.apply(self, axis=self._axes(axis)[0])
        e = (self - self.max(axis, keepdim=True).detach()).exp()
        return e / e.sum(axis, keepdim=True)

    def log_softmax(self, axis=-1):
        """x - max - log Σ exp(x - max): the log of softmax without ever taking log(0)."""
        if self.ndim == 0:
            self._axes(axis)
            return self.reshape(1).log_softmax(0).reshape(())
        if state.fused:
            return fused.LogSoftmax.apply(self, axis=self._axes(axis)[0])
        shifted = self - self.max(axis, keepdim=True).detach()
        return shifted - shifted.exp().sum(axis, keepdim=True).log()

    def layernorm(self, axis=-1, eps=1e-5, weight=None, bias=None):
        """(x - mean) / √(var + eps) over `axis`, each vector given mean 0 and standard deviation 1,
        then times `weight` and plus `bias` when given (both shaped like the normalised axis)."""
        affine = [p for p in (weight, bias) if p is not None]
        if (state.fused and self._axes(axis) == (self.ndim - 1,) and (weight is not None or bias is None)
                and all(p.shape == self.shape[-1:] for p in affine)):  # other shapes broadcast, composed
            return fused.LayerNorm.apply(self, *affine, eps=eps)
        centered = self - self.mean(axis, keepdim=True)
        y = centered / ((centered * centered).mean(axis, keepdim=True) + eps).sqrt()
        y = y if weight is None else y * weight
        return y if bias is None else y + bias

    def sparse_categorical_crossentropy(self, targets, ignore_index=-1, reduction="mean", label_smoothing=0.0):
        """−log softmax(logits)[target] per position whose target is not `ignore_index`, computed as
        logsumexp(logits) − logits[target] (no log of an underflowed probability).

        self: logits (..., C); targets: integer (...). label_smoothing ε: the target is (1 − ε)·onehot
        + ε/C, adding ε·(logsumexp − mean(logits)) per position. reduction: "mean" over the positions
        kept (0 when none is left; PyTorch gives NaN there), "sum", or "none" (shape (...), 0 at
        ignored positions). PyTorch's `F.cross_entropy` with its own default ignore_index = −100 is
        tinygrad_like.functional.cross_entropy.
        """
        targets = np.asarray(targets.data if isinstance(targets, Tensor) else targets)
        if targets.shape != self.shape[:-1]:
            raise ValueError(f"sparse_categorical_crossentropy: logits {self.shape} need targets of shape "
                             f"{self.shape[:-1]}, got {targets.shape}")
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"sparse_categorical_crossentropy: reduction must be 'mean', 'sum' or 'none', "
                             f"got {reduction!r}")
        if not 0 <= label_smoothing <= 1:
            raise ValueError(f"sparse_categorical_crossentropy: label_smoothing must be in [0, 1], "
                             f"got {label_smoothing}")
        n_class = self.shape[-1]
        flat = targets.reshape(-1)
        keep = flat != ignore_index
        bad = flat[keep & ((flat < 0) | (flat >= n_class))]
        if bad.size:
            raise IndexError(f"sparse_categorical_crossentropy: target {bad[0]} is outside [0, {n_class})")
        rows = np.nonzero(keep)[0]
        logits = self.reshape(-1, n_class)
        if state.fused:
            loss = fused.CrossEntropy.apply(logits, rows=rows, targets=flat[rows], reduction=reduction,
                                            label_smoothing=float(label_smoothing))
        else:
            logp = logits[rows].log_softmax(-1)                               # x − logsumexp(x), (M, C)
            losses = -logp[np.arange(len(rows)), flat[rows]]
            if label_smoothing:
                losses = (1 - label_smoothing) * losses - label_smoothing * logp.mean(-1)
            if reduction == "none":
                return ops.ScatterAdd.apply(losses, shape=(len(flat),), index=rows).reshape(targets.shape)
            loss = losses.sum() if reduction == "sum" else losses.sum() / max(len(rows), 1)
        return loss.reshape(targets.shape) if reduction == "none" and loss.shape != targets.shape else loss

    def dropout(self, p=0.5, training=True):
        """Zero each entry with probability p and scale the rest by 1/(1-p), so the mean is unchanged."""
        if not training or p == 0:
            return self
        if not 0 <= p < 1:
            raise ValueError(f"dropout: p must be in [0, 1), got {p}")
        keep = _random.rng().random(self.shape) >= p
        return self * Tensor._make((keep / (1 - p)).astype(self.dtype), None)

    def scaled_dot_product_attention(self, key, value, attn_mask=None, is_causal=False, return_weights=False):
        """softmax(Q Kᵀ / √d + mask) V on (..., T, d) tensors; self is the query. A query that the mask
        lets see no key at all (a padded position) gets output 0 and gradient 0, as in PyTorch.

        attn_mask: boolean (True where attending is allowed, as in PyTorch) or a float mask added to
        the scores. is_causal: token i sees tokens j <= i only (the lower triangle, aligned to the end
        when keys outnumber queries, as in KV-cache decoding). Returns out (..., Tq, dv), and the
        weights (..., Tq, Tk) too with return_weights=True.
        """
        q, k, v = self, key, value
        if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
            raise ValueError(f"scaled_dot_product_attention: query {q.shape}, key {k.shape} and value {v.shape} "
                             "do not fit (need (..., Tq, d), (..., Tk, d), (..., Tk, dv))")
        mask = None if attn_mask is None else attn_mask if isinstance(attn_mask, Tensor) else Tensor(attn_mask)
        if state.fused and not return_weights and (mask is None or not mask.requires_grad):
            return fused.Attention.apply(q, k, v, mask=_additive_mask(q, k, mask, is_causal))
        scores = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(q.shape[-1]))  # (..., Tq, Tk)
        if is_causal:
            scores = scores.masked_fill(Tensor(~_causal(q.shape[-2], k.shape[-2])), -math.inf)
        if mask is not None:
            scores = scores.masked_fill(~mask, -math.inf) if mask.dtype == bool else scores + mask
        weights = attention_softmax(scores)
        out = weights @ v
        return (out, weights) if return_weights else out

    def multihead_attention(self, n_head: int, n_kv_head: int | None = None, is_causal: bool = False):
        """Self-attention with n_head query heads and n_kv_head key/value heads (None: n_head) read from
        the packed projection self = (B, T, (nh + 2·nkv)·hs): each token's query heads, then its key
        heads, then its value heads. Returns (B, T, nh·hs), the heads' outputs side by side. Query head
        h reads KV head h // (nh / nkv). One fused op; inside `composed()`: split, sdpa, join."""
        n_kv_head = n_head if n_kv_head is None else n_kv_head
        n_packed = n_head + 2 * n_kv_head
        if self.ndim != 3 or n_head < 1 or n_kv_head < 1 or n_head % n_kv_head or self.shape[-1] % n_packed:
            raise ValueError(f"multihead_attention: input {self.shape} with n_head={n_head}, n_kv_head={n_kv_head} "
                             f"(need (B, T, (n_head + 2·n_kv_head)·hs) with n_head divisible by n_kv_head)")
        if state.fused:
            return fused.MultiHeadAttention.apply(self, n_head=n_head, n_kv_head=n_kv_head, causal=is_causal)
        q, k, v = fused.split_heads(self, n_head, n_kv_head)          # (B, nkv, nh/nkv, T, hs), (B, nkv, 1, T, hs)
        return fused.join_heads(q.scaled_dot_product_attention(k, v, is_causal=is_causal))

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
            if self.size != 1:
                raise RuntimeError(f"backward: output of shape {self.shape} is not a scalar; reduce it first "
                                   "(e.g. .sum()) or pass gradient= with the same shape")
            gradient = Tensor._make(np.ones_like(self.data), None)
        else:
            gradient = _as_gradient(gradient, self)
        backprop([self], [gradient], retain_graph=retain_graph or create_graph, create_graph=create_graph)


Function.make_tensor = Tensor._make


def attention_softmax(scores: Tensor) -> Tensor:
    """softmax over the last axis, except that a row of scores that are all −inf (a query whose every
    key is masked: a padded position) gets weights 0, hence output 0 and gradient 0, as PyTorch's
    scaled_dot_product_attention gives, instead of 0/0 = NaN. (A plain softmax of such a row is NaN,
    in PyTorch too.) The dead rows' scores are replaced by 0 before the softmax, so that no NaN
    reaches the backward pass either."""
    dead = np.isneginf(scores.data).all(-1, keepdims=True)
    if not dead.any():
        return scores.softmax(-1)
    dead = Tensor._make(dead, None)
    return dead.where(0.0, dead.where(0.0, scores).softmax(-1))


def _no_bool_pow(x: Tensor, y: Tensor) -> tuple:
    if x.dtype == bool:     # numpy would answer in int8; PyTorch refuses
        raise TypeError("**: a power of two bool tensors is not supported (as in PyTorch); cast one to int or float")
    return x, y


def _reduced_shape(shape: tuple, axes) -> tuple:
    """`shape` without `axes` (all of them when None): the shape of a reduction without keepdim."""
    return () if axes is None else tuple(n for i, n in enumerate(shape) if i not in axes)


def _causal(tq: int, tk: int) -> np.ndarray:
    """(tq, tk) booleans, True where query i may see key j: the lower triangle, aligned to the end."""
    return np.tril(np.ones((tq, tk), dtype=bool), k=tk - tq)


def _additive_mask(q: Tensor, k: Tensor, mask: Tensor | None, is_causal: bool) -> np.ndarray | None:
    """Causal and boolean masks as 0 / -inf to add to the scores (a float mask is added as it is)."""
    total = None
    if is_causal:
        total = np.where(_causal(q.shape[-2], k.shape[-2]), 0, -np.inf).astype(q.dtype)
    if mask is not None:
        m = np.where(mask.data, 0, -np.inf).astype(q.dtype) if mask.dtype == bool else mask.data.astype(q.dtype)
        total = m if total is None else total + m
    return total


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
            if out.size != 1:
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


# The API beyond the core lives in modules grouped by idea (creation, elementwise math, reductions,
# movement, selection); each lists its functions in METHODS, and they become Tensor methods here.
from tinygrad_like import creation, elementwise_math, movement, reductions, selection  # noqa: E402

for _module in (creation, elementwise_math, reductions, movement, selection):
    for _name, _method in _module.METHODS.items():
        if _name in Tensor.__dict__:  # one definition per name: a second one would silently replace the first
            raise ImportError(f"Tensor.{_name} is defined in tensor.py and in {_module.__name__}")
        setattr(Tensor, _name, _method)
del _module, _name, _method
