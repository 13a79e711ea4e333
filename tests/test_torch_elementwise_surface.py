"""torch's elementwise surface (issue 26): each name called the same way on PyTorch and on tinygrad_like.torch,
as torch.X(input, ...), as input.X(...) and, where PyTorch has it, in place as input.X_(...), on ordinary and
extreme inputs (0, −0, ±inf, NaN, huge, tiny), compared value for value and dtype for dtype. Gradients of the
differentiable ones: the table of tests/test_api_gradcheck.py."""
import math

import numpy as np
import pytest

import tinygrad_like.torch as facade
from tinygrad_like import Tensor

torch = pytest.importorskip("torch", reason="compares each name with PyTorch's own answer")

EXTREMES = [-np.inf, -1e300, -1e4, -30.0, -2.5, -1.0, -0.5, -1e-10, -1e-310, -0.0, 0.0, 1e-310, 1e-10, 0.5, 1.0, 2.5,
            30.0, 1e4, 1e300, np.inf, np.nan]
EXTREMES32 = [{-1e300: -3e38, 1e300: 3e38, -1e-310: -1e-40, 1e-310: 1e-40}.get(v, v) for v in EXTREMES]
UNIT = [-1.0, -0.999, -0.5, -1e-10, -0.0, 0.0, 1e-10, 0.5, 0.999, 1.0, 1.5, -1.5, np.nan]
GRID = np.array(np.meshgrid(EXTREMES, EXTREMES)).reshape(2, -1)   # every pair of extremes, for binary ops
INTS = np.array([-9, -7, -4, -1, 0, 0, 1, 3, 4, 6, 12, 18, 2 ** 40, -(2 ** 40)])
INTS2 = np.array([6, 3, -6, 5, 0, 7, 1, 9, -8, 4, 8, -12, 2 ** 20, 6])
SHIFTS = np.array([0, 1, 2, 3, 5, 7, 10, 0, 1, 2, 3, 4, 5, 6])

UNARY = ["acosh", "asinh", "atanh", "arccosh", "arcsinh", "arctanh", "acos", "asin", "atan", "arccos", "arcsin",
         "arctan", "cosh", "sinh", "tan",
         "expm1", "log10", "trunc", "fix", "frac", "reciprocal", "neg", "negative", "positive", "absolute", "deg2rad",
         "rad2deg", "signbit", "nan_to_num", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal",
         "logical_not"]
BINARY = ["atan2", "arctan2", "copysign", "hypot", "nextafter", "fmax", "fmin", "fmod", "remainder", "floor_divide",
          "true_divide", "div", "divide", "mul", "multiply", "add", "sub", "subtract", "xlogy", "logaddexp",
          "logaddexp2", "eq", "ne", "not_equal", "gt", "ge", "lt", "le", "greater", "greater_equal", "less",
          "less_equal", "logical_and", "logical_or", "logical_xor", "float_power"]
INTEGER = ["gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor", "floor_divide", "remainder", "fmod"]
IN_PLACE_UNARY = ["acosh", "asinh", "atanh", "arccosh", "arcsinh", "arctanh", "deg2rad", "rad2deg", "nan_to_num",
                  "logical_not", "fix", "trunc", "frac", "neg", "negative", "reciprocal"]
IN_PLACE_BINARY = ["copysign", "nextafter", "xlogy", "eq", "ne", "not_equal", "gt", "ge", "lt", "le", "greater",
                   "greater_equal", "less", "less_equal", "logical_and", "logical_or", "logical_xor", "hypot",
                   "fmod", "remainder", "atan2", "arctan2"]


def same(ours, theirs, rtol=1e-14, atol=0, zero_signs=True):
    """Our tensor (or a Python value) equals PyTorch's: dtype, shape, values (NaN where NaN, signed zeros)."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, Tensor), type(ours)
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch."), (ours.dtype, theirs.dtype)
        want = theirs.numpy()
        got = ours.numpy()
        assert got.shape == want.shape
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
            exact = (want == np.round(want)) & (zero_signs | (want != 0))   # integers and zeros: same sign bit too
            np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(want[exact]))
        else:
            np.testing.assert_array_equal(got, want)
    else:
        assert ours == theirs


def both(call, *arrays, **kwargs):
    """call(module, *tensors) on PyTorch and on the facade, each on its own copies of the arrays."""
    with np.errstate(all="ignore"):
        ours = call(facade, *[facade.tensor(a.copy()) for a in arrays])
    with np.errstate(all="ignore"):
        theirs = call(torch, *[torch.tensor(a.copy()) for a in arrays])
    return ours, theirs


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_unary_function_and_method(name, dtype):
    x = np.array(UNIT if name in ("acosh", "atanh", "arccosh", "arctanh", "acos", "asin", "arccos", "arcsin") else
                 EXTREMES if dtype == np.float64 else EXTREMES32, dtype=dtype)
    rtol = 1e-14 if dtype == np.float64 else 2e-7
    same(*both(lambda t, a: getattr(t, name)(a), x), rtol)
    same(*both(lambda t, a: getattr(a, name)(), x), rtol)


@pytest.mark.parametrize("name", BINARY)
def test_binary_function_and_method_on_every_pair_of_extremes(name):
    y, x = GRID
    if name in ("fmod", "remainder"):        # PyTorch computes y − trunc(y/x)·x: NaN or noise once y/x overflows
        with np.errstate(all="ignore"):
            y, x = GRID[:, ~(np.abs(GRID[0] / GRID[1]) > 1e15)]
    atol = 1e-16 if name == "logaddexp2" else 0     # log₂(2^−1 + 2^−1): ours 0, PyTorch's −4.8e−17
    signs = name != "remainder"                     # 0 % −2.5: −0.0 in Python and numpy (ours), 0.0 in PyTorch
    same(*both(lambda t, a, b: getattr(t, name)(a, b), y, x), 1e-13, atol, signs)
    same(*both(lambda t, a, b: getattr(a, name)(b), y, x), 1e-13, atol, signs)
    y32 = np.array(np.meshgrid(EXTREMES32, EXTREMES32))[0].ravel().astype(np.float32)
    try:
        theirs = getattr(torch.tensor(y32), name)(2.5)
    except TypeError:                                               # PyTorch takes only a tensor here
        return
    same(*both(lambda t, a: getattr(a, name)(2.5), y32)[:1], theirs, 2e-7, 0, signs)     # a number, in float32


def test_fmod_and_remainder_stay_exact_where_the_quotient_overflows():
    y, x = np.array([1e300, -1e300, 1e300, 7.5]), np.array([-1e-10, 3.0, 1e-310, 1e-300])
    assert facade.fmod(facade.tensor(y), facade.tensor(x)).tolist() == [math.fmod(a, b) for a, b in zip(y, x)]
    assert facade.remainder(facade.tensor(y), facade.tensor(x)).tolist() == [a % b for a, b in zip(y, x)]


@pytest.mark.parametrize("name", INTEGER)
def test_integer_ops(name):
    same(*both(lambda t, a, b: getattr(t, name)(a, b), INTS, INTS2 + (INTS2 == 0)))
    same(*both(lambda t, a, b: getattr(a, name)(b), INTS.astype(np.int32), (INTS2 + (INTS2 == 0)).astype(np.int32)))


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise_on_bools_is_logical(name):
    same(*both(lambda t, a, b: getattr(t, name)(a, b), np.array([True, True, False, False]),
               np.array([True, False, True, False])))


def test_bitwise_not_and_shifts():
    same(*both(lambda t, a: t.bitwise_not(a), INTS))
    same(*both(lambda t, a: a.bitwise_not(), np.array([True, False])))
    same(*both(lambda t, a, s: t.bitwise_left_shift(a, s), INTS % 1000, SHIFTS))
    same(*both(lambda t, a, s: a.bitwise_right_shift(s), INTS, SHIFTS))
    same(*both(lambda t, a, s: t.bitwise_right_shift(a, s), INTS, SHIFTS))
    same(*both(lambda t, a: a.bitwise_left_shift(3), INTS.astype(np.int16) % 100))
    with pytest.raises(TypeError, match="bitwise_not: needs integer"):
        facade.tensor([1.5]).bitwise_not()
    with pytest.raises(TypeError, match="gcd: needs integer"):
        facade.gcd(facade.tensor([1.5]), facade.tensor([2.0]))


@pytest.mark.parametrize("name", IN_PLACE_UNARY)
def test_in_place_unary(name):
    x = np.array(UNIT if "h" in name and name.startswith(("a", "arc")) else EXTREMES)
    ours, theirs = both(lambda t, a: (getattr(a, name + "_")(), a), x)
    assert ours[0] is ours[1]                                    # the same tensor, returned
    same(ours[1], theirs[1])


@pytest.mark.parametrize("name", IN_PLACE_BINARY)
def test_in_place_binary(name):
    y, x = GRID
    if name in ("fmod", "remainder"):                # as above: PyTorch's own answer is noise there
        with np.errstate(all="ignore"):
            y, x = GRID[:, ~(np.abs(GRID[0] / GRID[1]) > 1e15)]
    ours, theirs = both(lambda t, a, b: (getattr(a, name + "_")(b), a), y, x)
    assert ours[0] is ours[1]
    same(ours[1], theirs[1], 1e-13, zero_signs=name != "remainder")


def test_in_place_torch_functions():
    x = np.array([-2.0, -0.5, 0.0, 0.5, 3.0])
    for name in ("abs_", "ceil_", "cos_", "exp_", "floor_", "frac_", "log1p_", "neg_", "round_", "sigmoid_",
                 "sin_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "relu_", "erf_", "exp2_",
                 "rsqrt_", "reciprocal_", "deg2rad_", "rad2deg_", "asinh_", "cosh_", "expm1_", "fix_", "atan_"):
        ours, theirs = both(lambda t, a, n=name: (getattr(t, n)(a), a), x)
        assert ours[0] is ours[1], name
        same(ours[1], theirs[1], 1e-15)
    for name in ("acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "asin_",
                 "atanh_", "log10_", "log2_", "log_", "negative_"):
        ours, theirs = both(lambda t, a, n=name: (getattr(t, n)(a), a), np.array(UNIT))
        assert ours[0] is ours[1], name
        same(ours[1], theirs[1], 1e-15)
    same(*both(lambda t, a: t.clamp_min(a, 0.1), x))
    same(*both(lambda t, a: t.clamp_max(a, 0.1), x))
    same(*both(lambda t, a: (t.clamp_(a, -1, 1), a)[1], x))
    same(*both(lambda t, a: (t.clamp_min_(a, 0.1), a)[1], x))
    same(*both(lambda t, a: (t.clamp_max_(a, 0.1), a)[1], x))
    same(*both(lambda t, a: (t.clip_(a, -0.1, 0.1), a)[1], x))
    same(*both(lambda t, a: (t.zero_(a), a)[1], x))
    same(*both(lambda t, a: (t.fill_(a, 2.5), a)[1], x))
    same(*both(lambda t, a: (t.nan_to_num_(a, 1.0), a)[1], np.array(EXTREMES)))
    same(*both(lambda t, a, b: (t.xlogy_(a, b), a)[1], *GRID))
    same(*both(lambda t, a, b: (t.gcd_(a, b), a)[1], INTS, INTS2))
    same(*both(lambda t, a, b: (t.lcm_(a, b), a)[1], INTS % 1000, INTS2))
    same(*both(lambda t, a, b: (t.ldexp_(a, b), a)[1], x, np.array([-3, 0, 2, 5, 1000])))


def test_float32_in_place_keeps_the_tensors_dtype():
    ours, theirs = both(lambda t, a, b: (a.eq_(b), a)[1], np.array([1.0, 2.0], np.float32), np.array([1.0, 3.0]))
    same(ours, theirs)
    with pytest.raises(TypeError, match="float_power_: the result is float64"):
        facade.tensor([1.0, 2.0]).float_power_(2)
    same(*both(lambda t, a: (a.float_power_(3), a)[1], np.array([1.5, -2.0])))


def test_the_other_arguments():
    x, y = np.array([[1.5, -2.0, 0.0], [3.0, 1e-8, -7.0]]), np.array([0.5, -3.0, 2.0])
    same(*both(lambda t, a, b: t.add(a, b, alpha=2.5), x, y))
    same(*both(lambda t, a, b: t.sub(a, b, alpha=-2), x, y))
    same(*both(lambda t, a, b: t.rsub(a, b), x, y))
    same(*both(lambda t, a, b: t.rsub(a, b, alpha=3), x, y))
    same(*both(lambda t, a: t.rsub(a, 2.0), x))
    same(*both(lambda t, a, b: t.div(a, b, rounding_mode="floor"), x, y))
    same(*both(lambda t, a, b: t.div(a, b, rounding_mode="trunc"), x, y))
    same(*both(lambda t, a, b, c: t.addcmul(a, b, c, value=0.5), x, y, y[::-1].copy()))
    same(*both(lambda t, a, b, c: t.addcdiv(a, b, c, value=-2), x, y, y[::-1].copy()))
    same(*both(lambda t, a, b, c: (a.addcmul_(b, c), a)[1], x, y, y[::-1].copy()))
    same(*both(lambda t, a, b, c: (a.addcdiv_(b, c, value=3), a)[1], x, y, y[::-1].copy()))
    same(*both(lambda t, a: t.nan_to_num(a, nan=1.0, posinf=2.0, neginf=-3.0), np.array(EXTREMES)))
    same(*both(lambda t, a: t.nan_to_num(a), np.array(EXTREMES32, np.float32)))
    same(*both(lambda t, a: t.nan_to_num(a), INTS))
    same(*both(lambda t, a, b: t.heaviside(a, b), np.array(EXTREMES), np.full(len(EXTREMES), 0.5)))
    same(*both(lambda t, a: t.ldexp(a, t.tensor([3, -2, 0])), x))
    same(*both(lambda t, a: t.ldexp(a, t.tensor([3, -2, 0], dtype=t.int32)), x.astype(np.float32)))
    same(*both(lambda t, a: t.frexp(a)[0], np.array(EXTREMES)))
    same(*both(lambda t, a: t.frexp(a)[1], np.array(EXTREMES[1:-2])))          # PyTorch's exponent of ±inf, NaN: any
    same(*both(lambda t, a: t.float_power(a, 2), x.astype(np.float32)))
    same(*both(lambda t, a, b: t.float_power(a, b), INTS[:5], np.array([0.5, 2.0, -1.0, 3.0, 0.0])))
    same(*both(lambda t, a: t.isin(a, t.tensor([1.5, 3.0, -7.0])), x))
    same(*both(lambda t, a: t.isin(a, 0.0, invert=True), x))
    same(*both(lambda t, a: t.fill(a, 4), x))
    same(*both(lambda t, a: t.equal(a, a.clone()), x))
    same(*both(lambda t, a: t.is_floating_point(a), INTS))
    same(*both(lambda t, a: t.is_signed(a), INTS.astype(np.uint8)))
    same(*both(lambda t, a: t.is_nonzero(a), np.array([0.0])))
    same(*both(lambda t, a, b: t.is_same_size(a, b), x, y))
    same(*both(lambda t, a: t.positive(a), x))
    same(*both(lambda t, a: t.adjoint(a), np.arange(24.0).reshape(2, 3, 4)))
    same(*both(lambda t, a: a.mH, np.arange(24.0).reshape(2, 3, 4)))
    same(*both(lambda t, a: a.H, x))
    same(*both(lambda t, a: (t.detach_(a), a)[1].requires_grad, x))


def test_integer_and_bool_inputs_give_pytorchs_dtypes():
    for name in ("acosh", "asinh", "atanh", "copysign", "xlogy", "logaddexp2", "hypot", "fmax", "nan_to_num"):
        for x in (np.array([2, 0, 1]), np.array([True, False, True])):
            call = (lambda t, a, n=name: getattr(t, n)(a)) if name in UNARY else (
                lambda t, a, n=name: getattr(t, n)(a, a))
            try:
                theirs = call(torch, torch.tensor(x))
            except (RuntimeError, NotImplementedError):  # PyTorch has no integer kernel: ours computes in float32
                assert call(facade, facade.tensor(x)).dtype == np.float32
                continue
            with np.errstate(all="ignore"):
                same(call(facade, facade.tensor(x)), theirs, 1e-6)


def test_legacy_new():
    x = facade.tensor([1.0, 2.0], dtype=facade.float64)
    assert x.new(2, 3).shape == (2, 3) and x.new(2, 3).dtype == np.float64
    assert x.new(facade.Size([4])).shape == (4,)
    assert x.new([1, 2]).tolist() == [1.0, 2.0] and x.new([1, 2]).dtype == np.float64
    assert x.new().shape == (0,)
    t = torch.tensor([1.0, 2.0], dtype=torch.float64)
    assert tuple(t.new(2, 3).shape) == (2, 3) and t.new([1, 2]).tolist() == [1.0, 2.0] and tuple(t.new().shape) == (0,)


def test_shape_errors_name_the_op():
    with pytest.raises(Exception, match="H: only for matrices"):
        _ = facade.zeros(2, 3, 4).H
    with pytest.raises(Exception, match="adjoint: needs at least 2"):
        facade.zeros(3).adjoint()
    with pytest.raises(TypeError, match="addcdiv: integer division"):
        facade.addcdiv(facade.zeros(2), facade.tensor([1, 2]), facade.tensor([1, 2]))
    with pytest.raises(TypeError, match="heaviside: values must be a tensor"):
        facade.tensor([1.0]).heaviside(0.5)


def test_in_place_on_an_intermediate_is_recorded_and_on_a_parameter_refused():
    w = facade.tensor([0.5, -1.5, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        w.asinh_()
    h = w * 2
    h.asinh_()                                                     # recorded: d asinh(2w)/dw = 2/√(4w² + 1)
    h.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 / np.sqrt(4 * w.numpy() ** 2 + 1), rtol=1e-6)
    v = facade.tensor([0.5, -1.5], requires_grad=True)
    g = v * 1.0
    g.addcmul_(v, v, value=0.5)                                    # v + v²/2: gradient 1 + v
    g.sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), 1 + v.numpy(), rtol=1e-6)


def test_every_elementwise_function_of_the_facade_is_called_here():
    from pathlib import Path

    from tinygrad_like.torch import _functions
    source = Path(__file__).read_text()
    for name in _functions.ELEMENTWISE_FUNCTIONS:
        assert name in _functions.FUNCTIONS, name
        assert f'"{name}"' in source or f"t.{name}(" in source, name


SPECIAL = ["erfc", "erfinv", "lgamma", "digamma", "i0", "logit", "sinc"]
SPECIAL_IN_PLACE_FUNCTIONS = ["erfc_", "i0_", "logit_", "sinc_"]                 # torch.erfc_(x), ...


@pytest.mark.parametrize("name", SPECIAL)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_special_functions_at_extremes_and_in_between(name, dtype):
    rng = np.random.default_rng(7)
    spread = rng.uniform(-1, 1, 400) if name in ("erfinv", "logit") else rng.uniform(-30, 30, 400)
    x = np.concatenate([EXTREMES if dtype == np.float64 else EXTREMES32, UNIT, spread]).astype(dtype)
    ours, theirs = both(lambda t, a: getattr(t, name)(a), x)
    if name == "erfc":                                   # below 2.2e−308 (x > 26.5) both are subnormal: digits go
        keep = ~(np.abs(theirs.numpy()) < np.finfo(dtype).tiny)
        ours, theirs = ours[Tensor(keep)], theirs[torch.tensor(keep)]
    # PyTorch computes float32 digamma in float32 (about 3e−6 off); ours in float64, rounded once
    rtol = {np.float64: {"digamma": 1e-12, "lgamma": 1e-13}.get(name, 1e-14),
            np.float32: {"digamma": 5e-6}.get(name, 3e-7)}[dtype]
    same(ours, theirs, rtol, atol=1e-15 if name == "lgamma" else 0)       # lgamma's roots at 1 and 2: absolute
    same(*both(lambda t, a: getattr(a, name)(), x), rtol, atol=1e-15 if name == "lgamma" else 0)
    same(*both(lambda t, a: (getattr(a, name + "_")(), a)[1], x), rtol, atol=1e-15 if name == "lgamma" else 0)
    if name + "_" in SPECIAL_IN_PLACE_FUNCTIONS:
        same(*both(lambda t, a: (getattr(t, name + "_")(a), a)[1], x), rtol)


def test_erfc_where_one_minus_erf_would_give_zero():
    x = np.array([5.0, 10.0, 20.0, 26.0, -10.0])
    np.testing.assert_allclose(facade.erfc(facade.tensor(x)).numpy(), [math.erfc(v) for v in x], rtol=1e-14)
    y = np.array([1 - 1e-15, -1 + 1e-12, 0.999999])
    np.testing.assert_allclose([math.erf(v) for v in facade.erfinv(facade.tensor(y)).numpy()], y, rtol=0, atol=2e-16)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_polygamma_against_pytorch_and_at_its_poles(n):
    rng = np.random.default_rng(n)
    x = np.concatenate([rng.uniform(-20, 30, 400), [0.5, 1.0, 2.0, 1e-8, 1e8, -2.5]])
    x = x[np.abs(x - np.round(x)) > 1e-3]                         # away from the poles, where both blow up
    # PyTorch's trigamma (n = 1) is good to about 5e−10 in places (ours: tests/test_api_gradcheck.py's series)
    same(*both(lambda t, a: t.polygamma(n, a), x), 1e-9 if n == 1 else 1e-12)
    same(*both(lambda t, a: a.polygamma(n), x), 1e-9 if n == 1 else 1e-12)
    same(*both(lambda t, a: (a.polygamma_(n), a)[1], x), 1e-9 if n == 1 else 1e-12)
    poles = facade.tensor([0.0, -1.0, -7.0, np.inf, -np.inf, np.nan], dtype=facade.float64).polygamma(n).tolist()
    sign = 1 if n % 2 else -1                                     # (−1)ⁿ⁺¹: the sign of ψ⁽ⁿ⁾ near the poles
    assert poles[:3] == [sign * math.inf] * 3 and poles[3] == 0 and math.isnan(poles[4]) and math.isnan(poles[5])
    same(*both(lambda t, a: t.polygamma(0, a), x))                # n = 0 is digamma
    with pytest.raises(ValueError, match="polygamma: n must be a non-negative integer"):
        facade.tensor([1.0]).polygamma(-1)


def test_mvlgamma_and_its_domain():
    x = np.array([1.6, 2.5, 10.0, 1e3])
    for p in (1, 2, 3, 5):
        if (x > (p - 1) / 2).all():
            same(*both(lambda t, a, q=p: t.mvlgamma(a, p=q), x), 1e-14)
            same(*both(lambda t, a, q=p: (a.mvlgamma_(q), a)[1], x), 1e-14)
    with pytest.raises(ValueError, match=r"mvlgamma: every entry must be > \(p − 1\)/2 = 1.0 for p = 3"):
        facade.mvlgamma(facade.tensor([0.9, 3.0]), p=3)


def test_logit_with_eps_and_the_incomplete_gammas_refused():
    x = np.array([-0.5, 0.0, 0.05, 0.5, 0.97, 1.0, 1.5, np.nan])
    same(*both(lambda t, a: t.logit(a, eps=0.1), x), 1e-14)
    same(*both(lambda t, a: (a.logit_(0.1), a)[1], x), 1e-14)
    for name in ("igamma", "igammac"):
        with pytest.raises(NotImplementedError, match="no incomplete gamma functions"):
            getattr(facade, name)
        with pytest.raises(NotImplementedError, match="no incomplete gamma functions"):
            getattr(facade.zeros(1), name)


def test_what_complex_aware_code_asks_of_a_real_tensor():
    # sgn(NaN): PyTorch's sign and sgn give 0, numpy's sign and ours keep the NaN (a NaN is not hidden)
    nan = facade.tensor([np.nan])
    assert math.isnan(facade.sgn(nan).item()) and math.isnan(facade.angle(nan).item())
    for x in (np.array(EXTREMES[:-1]), np.array(EXTREMES32[:-1], np.float32), INTS):
        for name in ("sgn", "angle", "conj", "conj_physical", "resolve_conj", "resolve_neg", "real"):
            same(*both(lambda t, a, n=name: getattr(t, n)(a), x))
        for name in ("sgn", "angle", "conj", "conj_physical", "resolve_conj", "resolve_neg"):
            same(*both(lambda t, a, n=name: getattr(a, n)(), x))
        same(*both(lambda t, a: a.real, x))
        same(*both(lambda t, a: (a.sgn_(), a)[1], x))
        same(*both(lambda t, a: (t.conj_physical_(a), a)[1], x))
        for name in ("is_complex", "is_conj", "is_neg"):
            same(*both(lambda t, a, n=name: getattr(t, n)(a), x))
            same(*both(lambda t, a, n=name: getattr(a, n)(), x))
    with pytest.raises(NotImplementedError, match="no complex numbers"):
        _ = facade.zeros(2).imag
