"""torch's tensor types and constructors mapped onto the engine: dtypes, `Size`, `device`, creation,
random draws with `Generator` / `generator=`, and grad mode.

Every constructor makes an engine `Tensor` (torch.Tensor is the engine's class), so whatever a
script builds is drawable and steppable. dtypes are numpy dtypes, the engine's own: `x.dtype ==
torch.float32` holds. Random draws give PyTorch's numbers: `torch.manual_seed(s)` or a seeded
`Generator` (passed as `generator=`) draws what PyTorch draws on the CPU from the same seed
(tinygrad_like/pytorch_streams/generator.py; docs/torch_facade.md lists each function's agreement).
"""
from __future__ import annotations

import builtins
import contextlib
import functools
import math

import numpy as np

from tinygrad_like import Tensor
from tinygrad_like import dtypes as _dtypes
from tinygrad_like import random as _random
from tinygrad_like.dialect.attributes import Device, Size
from tinygrad_like.function import state
from tinygrad_like.pytorch_streams.generator import TorchGenerator
from tinygrad_like.torch._refuse import check_device

__all__ = [
    "float32", "float", "float64", "double", "float16", "half", "bfloat16",
    "int64", "long", "int32", "int", "int16", "short", "int8", "uint8", "bool",
    "inf", "nan", "pi", "e", "get_default_dtype", "Size", "device", "Generator", "default_generator", "manual_seed",
    "seed", "initial_seed", "get_rng_state", "set_rng_state", "no_grad", "enable_grad", "inference_mode",
    "set_grad_enabled", "is_grad_enabled",
    "tensor", "as_tensor", "from_numpy", "is_tensor", "numel", "zeros", "ones", "empty", "full", "arange", "linspace",
    "eye", "zeros_like", "ones_like", "full_like", "empty_like", "randn_like", "rand_like", "randint_like", "randn",
    "rand", "randint", "randperm", "multinomial", "normal", "bernoulli", "binomial", "poisson",
    "scalar_tensor", "asarray", "frombuffer", "range", "logspace", "empty_permuted", "newaxis",
]

builtins_int, builtins_bool = builtins.int, builtins.bool  # this module names torch.int and torch.bool
builtins_float = builtins.float

# ---------------------------------------------------------------- dtypes
float32 = float = np.dtype(np.float32)
float64 = double = np.dtype(np.float64)
int64 = long = np.dtype(np.int64)
int32 = int = np.dtype(np.int32)
int16 = short = np.dtype(np.int16)
int8 = np.dtype(np.int8)
uint8 = np.dtype(np.uint8)
bool = np.dtype(np.bool_)  # noqa: A001 (torch.bool)
inf, nan, pi, e = math.inf, math.nan, math.pi, math.e
newaxis = None          # x[:, torch.newaxis], numpy's and PyTorch's spelling of None in an index


class RefusedDtype:
    """A PyTorch dtype the engine does not compute in. It exists, so scripts that name it (nanoGPT's
    {'float16': torch.float16, ...} table) run; using it (a tensor of this dtype, .to(it), a layer's
    dtype=) raises TypeError with the reason, wherever numpy is asked for the dtype."""

    def __init__(self, name: str, itemsize: builtins_int, why: str):
        self.name, self.itemsize, self.why = name, itemsize, why
        self.is_floating_point, self.is_complex, self.is_signed = True, False, True

    @property
    def dtype(self):  # numpy's np.dtype(obj) reads obj.dtype: every place that makes an array of it stops here
        raise TypeError(f"tinygrad_like.torch: torch.{self.name} is not in this engine ({self.why}); "
                        "use torch.float32 or torch.float64")

    def __repr__(self):
        return f"torch.{self.name}"


float16 = half = RefusedDtype("float16", 2, "no half precision: numpy computes in float32 or float64")
bfloat16 = RefusedDtype("bfloat16", 2, "numpy has no bfloat16")


def get_default_dtype():
    """float32: what Python floats become."""
    return float32


device = Device  # torch.device("cpu") is the engine's one device; "cuda" or "mps" raise, saying so


# ---------------------------------------------------------------- random state
class Generator:
    """A random stream of its own that draws PyTorch's CPU numbers (tinygrad_like/pytorch_streams/generator.py):
    `g = torch.Generator().manual_seed(2147483647)`, then `torch.randn((27, 27), generator=g)` gives the
    numbers PyTorch gives. Independent of every other stream."""

    def __init__(self, device="cpu"):
        check_device(device, "Generator")
        self.generator = TorchGenerator()  # the stream itself (Tensor.normal_(generator=g) finds it here)

    def manual_seed(self, seed) -> "Generator":
        self.generator.manual_seed(seed)
        return self

    def seed(self):
        return self.generator.seed()

    def initial_seed(self):
        return self.generator.initial_seed()

    def get_state(self) -> Tensor:
        """The state as PyTorch's bytes (a uint8 tensor of 5056): PyTorch's set_state accepts it, and ours
        accepts PyTorch's."""
        return Tensor(self.generator.get_state())

    def set_state(self, new_state) -> "Generator":
        self.generator.set_state(new_state.numpy() if isinstance(new_state, Tensor) else np.asarray(new_state))
        return self

    @property
    def device(self):
        return Device("cpu")


class _DefaultGenerator(Generator):
    """torch.default_generator. Seeding it (torch.manual_seed, torch.seed, torch.set_rng_state) also makes
    it the library's stream (tinygrad_like.random), so every draw without generator= — torch.randn, nn
    layers' initial weights, dropout, multinomial — takes PyTorch's numbers from it, until the engine's
    own Tensor.manual_seed switches the library back to numpy's stream."""

    def manual_seed(self, seed) -> "Generator":
        super().manual_seed(seed)
        _random.use(self.generator)
        return self

    def seed(self):
        seed = super().seed()
        _random.use(self.generator)
        return seed

    def set_state(self, new_state) -> "Generator":
        super().set_state(new_state)
        _random.use(self.generator)
        return self


default_generator = _DefaultGenerator()


def manual_seed(seed) -> Generator:
    """Seed the random stream of every draw without generator= (and make it PyTorch's, see Generator)."""
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """torch.default_generator's state as PyTorch's bytes (a uint8 tensor)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


def _drawing(generator):
    """Inside: random ops draw from `generator` (None: the library's stream)."""
    return contextlib.nullcontext() if generator is None else _random.drawing_from(generator.generator)


# ---------------------------------------------------------------- grad mode
class no_grad:
    """`with torch.no_grad():`, `@torch.no_grad()` or `@torch.no_grad`: run without recording a graph."""

    _enabled = False

    def __new__(cls, func=None):
        self = super().__new__(cls)
        return self(func) if callable(func) else self

    def __enter__(self):
        self._prev, state.grad_enabled = state.grad_enabled, self._enabled

    def __exit__(self, *exc):
        state.grad_enabled = self._prev

    def __call__(self, func):
        @functools.wraps(func)
        def run(*args, **kwargs):
            with type(self)():
                return func(*args, **kwargs)
        return run


class enable_grad(no_grad):
    """The opposite of no_grad: record the graph inside (also as a decorator)."""

    _enabled = True


class inference_mode(no_grad):
    """PyTorch's faster no_grad; the engine has one kind, so it is no_grad (inference_mode(False) records).
    `inference_mode.active` says whether one is in force (torch.is_inference_mode_enabled)."""

    active = False

    def __enter__(self):
        self._was_active, inference_mode.active = inference_mode.active, not self._enabled
        super().__enter__()

    def __exit__(self, *exc):
        inference_mode.active = self._was_active
        super().__exit__(*exc)

    def __new__(cls, mode=True):
        if callable(mode):
            return no_grad.__new__(cls, mode)
        self = super().__new__(cls)
        self._enabled = not mode
        return self

    def __call__(self, func):
        enabled = self._enabled

        @functools.wraps(func)
        def run(*args, **kwargs):
            with inference_mode(not enabled):
                return func(*args, **kwargs)
        return run


class set_grad_enabled(no_grad):
    """set_grad_enabled(False) switches grad mode now, and restores it when used in a `with`."""

    def __new__(cls, mode):
        self = object.__new__(cls)
        self._enabled, self._prev = builtins_bool(mode), state.grad_enabled
        state.grad_enabled = self._enabled
        return self

    def __enter__(self):
        state.grad_enabled = self._enabled


def is_grad_enabled():
    return state.grad_enabled


# ---------------------------------------------------------------- creation
def _size(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = size[0]
    return tuple(map(builtins_int, size))


def _scalar_dtype(value):
    if isinstance(value, (builtins_bool, np.bool_)):
        return bool
    return int64 if isinstance(value, (builtins_int, np.integer)) else float32


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """A new tensor holding a copy of `data` (a number, nested lists, a numpy array or a Tensor). Python
    ints become int64, floats float32, bools bool; a numpy array keeps its dtype, as in PyTorch."""
    check_device(device, "tensor")
    if isinstance(data, Tensor):
        data = data._data
    if isinstance(data, (list, tuple)) and any(isinstance(d, Tensor) for d in data):
        data = [d.tolist() if isinstance(d, Tensor) else d for d in data]  # e.g. [t.item(), ...] kept as tensors
    array = np.array(data, copy=True) if isinstance(data, (np.ndarray, np.generic)) else data
    return Tensor(array, dtype=_dtypes.as_dtype(dtype), requires_grad=requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """`data` as a tensor, sharing memory when it already is one (or a numpy array) of that dtype."""
    check_device(device, "as_tensor")
    if isinstance(data, Tensor) and (dtype is None or data.dtype == np.dtype(dtype)):
        return data
    return Tensor(data._data if isinstance(data, Tensor) else data, dtype=_dtypes.as_dtype(dtype))


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing `array`'s memory (writes to one show in the other)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy array, got {type(array).__name__}")
    return Tensor(array)


def is_tensor(obj) -> builtins_bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor):
    return math.prod(input.shape)


def _made(make, *, dtype=None, device=None, requires_grad=False, op=""):
    check_device(device, op)
    return make(float32 if dtype is None else np.dtype(dtype), requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _made(lambda d, r: Tensor.zeros(*_size(size), dtype=d, requires_grad=r), dtype=dtype, device=device,
                 requires_grad=requires_grad, op="zeros")


def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _made(lambda d, r: Tensor.ones(*_size(size), dtype=d, requires_grad=r), dtype=dtype, device=device,
                 requires_grad=requires_grad, op="ones")


def empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _made(lambda d, r: Tensor.empty(*_size(size), dtype=d, requires_grad=r), dtype=dtype, device=device,
                 requires_grad=requires_grad, op="empty")


def full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    """`fill_value` everywhere; the dtype follows the value (int64, float32, bool) unless given."""
    dtype = _scalar_dtype(fill_value) if dtype is None else dtype
    return _made(lambda d, r: Tensor.full(_size((size,)), fill_value, dtype=d, requires_grad=r), dtype=dtype,
                 device=device, requires_grad=requires_grad, op="full")


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    check_device(device, "arange")
    return Tensor.arange(start, end, step, dtype=_dtypes.as_dtype(dtype), requires_grad=requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _made(lambda d, r: Tensor.linspace(start, end, steps, dtype=d, requires_grad=r), dtype=dtype,
                 device=device, requires_grad=requires_grad, op="linspace")


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _made(lambda d, r: Tensor.eye(n, m, dtype=d, requires_grad=r), dtype=dtype, device=device,
                 requires_grad=requires_grad, op="eye")


def _like(method):
    def like(input, *args, dtype=None, device=None, requires_grad=False, memory_format=None, generator=None):
        check_device(device, method)
        with _drawing(generator):
            return getattr(input, method)(*args, dtype=_dtypes.as_dtype(dtype), requires_grad=requires_grad)
    like.__name__ = like.__qualname__ = method
    like.__doc__ = f"torch.{method}: Tensor.{method} of `input`'s shape (and dtype, unless given)."
    return like


zeros_like, ones_like, full_like = _like("zeros_like"), _like("ones_like"), _like("full_like")
randn_like, rand_like = _like("randn_like"), _like("rand_like")


def empty_like(input, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, dtype=None, device=None, generator=None) -> Tensor:
    low, high = (0, low) if high is None else (low, high)
    return randint(low, high, input.shape, dtype=dtype or input.dtype, device=device, generator=generator)


# ---------------------------------------------------------------- random draws
def randn(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal samples of the given shape."""
    with _drawing(generator):
        return _made(lambda d, r: Tensor.randn(*_size(size), dtype=d, requires_grad=r), dtype=dtype, device=device,
                     requires_grad=requires_grad, op="randn")


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform samples in [0, 1) of the given shape."""
    with _drawing(generator):
        return _made(lambda d, r: Tensor.rand(*_size(size), dtype=d, requires_grad=r), dtype=dtype, device=device,
                     requires_grad=requires_grad, op="rand")


def randint(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False, low=None,
            high=None) -> Tensor:
    """randint(high, size) or randint(low, high, size): int64 uniform in [low, high)."""
    check_device(device, "randint")
    if low is not None or high is not None:
        args = tuple(a for a in (low, high) if a is not None) + args
    if generator is None:                              # the library's stream (a dataset draws per example)
        out = Tensor.randint(*args, size=size)
    else:
        with _drawing(generator):
            out = Tensor.randint(*args, size=size)
    return out if dtype is None else out.cast(np.dtype(dtype))


def randperm(n, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """The numbers 0..n-1 in a random order (int64)."""
    check_device(device, "randperm")
    with _drawing(generator):
        order = _random.permutation(builtins_int(n))
    return Tensor(order.astype(int64 if dtype is None else np.dtype(dtype)))


def multinomial(input: Tensor, num_samples: builtins_int, replacement=False, generator=None) -> Tensor:
    """Indices drawn with probabilities proportional to the rows of `input` (see Tensor.multinomial)."""
    with _drawing(generator):
        return input.multinomial(num_samples, replacement=replacement)


def normal(mean, std, size=None, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """normal(mean, std, size) with float mean and std: N(mean, std²) samples of that shape."""
    if size is None or isinstance(mean, Tensor) or isinstance(std, Tensor):
        raise NotImplementedError("tinygrad_like.torch: normal takes float mean and std and a size here, "
                                  "as in torch.normal(0.0, 1.0, (2, 3)); use mean + std * torch.randn(...)")
    check_device(device, "normal")
    with _drawing(generator):
        values = _random.normal(_size((size,)), float32 if dtype is None else np.dtype(dtype), mean, std)
    return Tensor(values, requires_grad=requires_grad)


def bernoulli(input: Tensor, p=None, generator=None) -> Tensor:
    """1 with probability input[i] (or p, when given), else 0; in input's dtype."""
    with _drawing(generator):
        drawn = _random.bernoulli(input.numpy() if p is None else p, input.shape)
    return Tensor(drawn.astype(input.dtype))


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """The number of successes in count[i] trials of probability prob[i], in prob's dtype (numpy's stream only:
    tinygrad_like.random.numpy_stream says why)."""
    with _drawing(generator):
        drawn = _random.numpy_stream("binomial").binomial(count.numpy().astype(np.int64), prob.numpy())
    return Tensor(drawn.astype(prob.dtype))


def poisson(input: Tensor, generator=None) -> Tensor:
    """Poisson samples of rate input[i], in input's dtype (numpy's stream only)."""
    if (input.numpy() < 0).any():
        raise ValueError("poisson: the rates must be >= 0")
    with _drawing(generator):
        drawn = _random.numpy_stream("poisson").poisson(input.numpy())
    return Tensor(drawn.astype(input.dtype))


# ---------------------------------------------------------------- more ways to make a tensor
def scalar_tensor(s, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A 0-d tensor holding the number s, float32 unless dtype is given (whatever s is, as in PyTorch)."""
    check_device(device, "scalar_tensor")
    return Tensor(np.asarray(s, dtype=float32 if dtype is None else np.dtype(dtype)), requires_grad=requires_grad)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False) -> Tensor:
    """obj as a tensor, sharing memory with a tensor or numpy array when it can (copy=None), always copying
    (copy=True), or refusing to copy (copy=False: a ValueError when a copy is needed). Python numbers and
    lists take PyTorch's dtypes (ints int64, floats float32, bools bool)."""
    check_device(device, "asarray")
    array = obj._data if isinstance(obj, Tensor) else obj
    if isinstance(array, (np.ndarray, np.generic)):
        want = array.dtype if dtype is None else np.dtype(dtype)
        if copy is False and want != array.dtype:
            raise ValueError(f"asarray: copy=False, but {array.dtype} -> {want} needs a copy")
        if isinstance(obj, Tensor) and not copy and want == array.dtype and not requires_grad:
            return obj
        shared = np.array(array, dtype=want, copy=True) if copy else np.asarray(array, dtype=want)
        return Tensor(shared, requires_grad=requires_grad)
    if copy is False:
        raise ValueError(f"asarray: copy=False, but a {type(obj).__name__} has to be copied into a tensor")
    return tensor(obj, dtype=dtype, requires_grad=requires_grad)


def frombuffer(buffer, *, dtype, count: builtins_int = -1, offset: builtins_int = 0, requires_grad=False) -> Tensor:
    """A 1-d tensor over the bytes of `buffer` (anything with the buffer protocol: bytearray, memoryview, ...),
    sharing its memory; `count` items (-1: all) from byte `offset`."""
    return Tensor(np.frombuffer(buffer, dtype=np.dtype(dtype), count=count, offset=offset),
                  requires_grad=requires_grad)


def range(start=0, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:  # noqa: A001
    """start, start + step, ... up to end INCLUDED (deprecated in PyTorch for that reason: arange leaves end
    out), float32 unless dtype is given."""
    check_device(device, "range")
    if end is None:
        start, end = 0, start
    if step == 0 or (end - start) * step < 0:
        raise ValueError(f"range: step {step} does not go from {start} to {end}")
    n = builtins_int(math.floor((end - start) / step)) + 1
    values = start + step * np.arange(n, dtype=np.float64)
    return Tensor(values.astype(float32 if dtype is None else np.dtype(dtype)), requires_grad=requires_grad)


def logspace(start, end, steps: builtins_int, base: builtins_float = 10.0, dtype=None, device=None,
             requires_grad=False) -> Tensor:
    """base ** linspace(start, end, steps): `steps` numbers evenly spaced on a log scale, float32 unless dtype is
    given (computed in float64, rounded once)."""
    check_device(device, "logspace")
    exponents = np.linspace(start, end, steps, dtype=np.float64)
    return Tensor((builtins_float(base) ** exponents).astype(float32 if dtype is None else np.dtype(dtype)),
                  requires_grad=requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of `size` (zeros, where PyTorch leaves it uninitialised). `physical_layout` orders PyTorch's
    strides; a tensor here is one numpy array whose layout numpy chooses, so it is checked and not used."""
    if sorted(physical_layout) != list(builtins.range(len(size))):
        raise ValueError(f"empty_permuted: physical_layout must be a permutation of 0..{len(size) - 1}, "
                         f"got {physical_layout}")
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)
