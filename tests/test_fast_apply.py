"""fast/apply.py's apply for ops of one or two Tensors against Function.apply (function.py).

Each op of apply.UNARY and apply.BINARY runs both ways on the same Tensors, and the outputs are compared:
the array bit for bit (dtype, shape, bytes), requires_grad, and the graph node (its type, parents by
identity, scope, options), under grad mode on and off, inside a scope, with every mix of inputs needing a
gradient, on 0-d inputs (where numpy gives a scalar), and the errors (a shape error, anomaly mode's).
"""
import ast
import inspect

import numpy as np
import pytest

from tinygrad_like import Tensor, ops
from tinygrad_like.errors import ShapeError
from tinygrad_like.fast import apply
from tinygrad_like.function import Function, detect_anomaly, no_grad, scope

plain_apply = Function.__dict__["apply"].__func__
RNG = np.random.default_rng(0)


def inputs(op, shape=(3, 4), dtype=np.float64, grads=(True, True)):
    """Arrays in the op's domain (positive for log/sqrt/pow, nonzero divisors), as Tensors."""
    n = 1 if op in apply.UNARY else 2
    if op is ops.Matmul:
        shapes = [(3, 4), (4, 2)] if shape else [(2, 2), (2, 2)]
    else:
        shapes = [shape] * n
    arrays = [(RNG.random(s) + 0.5).astype(dtype) for s in shapes]
    if op is ops.Mod and dtype == np.int64:
        arrays = [RNG.integers(1, 9, s) for s in shapes]
    return [Tensor(a, requires_grad=bool(g) and a.dtype.kind == "f") for a, g in zip(arrays, grads)]


def same(a: Tensor, b: Tensor) -> None:
    assert type(a) is type(b) is Tensor
    da, db = a.numpy(), b.numpy()
    assert type(da) is type(db) is np.ndarray
    assert da.dtype == db.dtype and da.shape == db.shape and da.tobytes() == db.tobytes()
    assert a.requires_grad == b.requires_grad and a.scope == b.scope and a.name == b.name
    assert (a._ctx is None) == (b._ctx is None)
    if a._ctx is not None:
        ca, cb = a._ctx, b._ctx
        assert type(ca) is type(cb)
        assert sorted(vars(ca)) == sorted(vars(cb))
        assert len(ca.parents) == len(cb.parents) and all(p is q for p, q in zip(ca.parents, cb.parents))
        assert ca.scope == cb.scope and dict(ca.options) == cb.options == {}


def both(op, tensors):
    return op.apply(*tensors), plain_apply(op, *tensors)


ALL = [*apply.UNARY, *apply.BINARY]


@pytest.mark.parametrize("op", ALL, ids=lambda op: op.__name__)
@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True), (False, False)])
def test_the_same_array_and_node_as_function_apply(op, grads):
    tensors = inputs(op, grads=grads)
    same(*both(op, tensors))
    with scope("block0.mlp"):
        same(*both(op, tensors))
    with no_grad():
        fast, plain = both(op, tensors)
        same(fast, plain)
        assert fast._ctx is None


@pytest.mark.parametrize("op", [op for op in ALL if op is not ops.Matmul], ids=lambda op: op.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_0d_inputs_give_a_0d_array_not_a_numpy_scalar(op, dtype):
    fast, plain = both(op, inputs(op, shape=(), dtype=dtype))
    same(fast, plain)
    assert fast.numpy().shape == ()


def test_integer_inputs_need_no_gradient_and_match():
    same(*both(ops.Mod, inputs(ops.Mod, dtype=np.int64)))
    same(*both(ops.Add, [Tensor(np.arange(6).reshape(2, 3)), Tensor(np.arange(3))]))


def test_broadcasting_inputs_match():
    x, y = Tensor(RNG.random((4, 1, 3)), requires_grad=True), Tensor(RNG.random((5, 1)), requires_grad=True)
    for op in apply.BINARY:
        if op is not ops.Matmul:
            same(*both(op, [x, y]))


def error(fn):
    with pytest.raises(Exception) as e:    # noqa: PT011 - both ways must raise alike, whatever it is
        fn()
    return type(e.value), str(e.value)


def test_shape_errors_are_the_same():
    x, y = Tensor(np.ones((2, 3)), requires_grad=True), Tensor(np.ones((4, 5)))
    for op in apply.BINARY:
        fast, plain = error(lambda op=op: op.apply(x, y)), error(lambda op=op: plain_apply(op, x, y))
        assert fast == plain
        assert fast[0] is ShapeError and fast[1].startswith(op.__name__.lower() + ": ")


@pytest.mark.parametrize("requires_grad", [True, False])
def test_anomaly_mode_raises_the_same_error_naming_the_scope(requires_grad):
    x = Tensor(np.array([1.0, -1.0]), requires_grad=requires_grad)
    y = Tensor(np.array([0.0, 0.0]))
    with np.errstate(invalid="ignore", divide="ignore"), detect_anomaly(), scope("head"):
        log = error(lambda: ops.Log.apply(x)), error(lambda: plain_apply(ops.Log, x))
        div = error(lambda: ops.Div.apply(x, y)), error(lambda: plain_apply(ops.Div, x, y))
    assert log[0] == log[1] and div[0] == div[1]
    assert log[0][0] is FloatingPointError and "Log in scope 'head' produced NaN" in log[0][1]
    assert div[0][0] is FloatingPointError and "Div in scope 'head' produced Inf" in div[0][1]


def test_without_anomaly_mode_a_nan_is_an_answer_as_in_the_plain_apply():
    x = Tensor(np.array([-1.0]), requires_grad=True)
    with np.errstate(invalid="ignore"):
        fast, plain = both(ops.Sqrt, [x])
    same(fast, plain)
    assert np.isnan(fast.numpy()[0])


def test_a_non_tensor_input_raises_the_same_error():
    x = Tensor(np.ones(2))
    assert error(lambda: ops.Add.apply(x, np.ones(2))) == error(lambda: plain_apply(ops.Add, x, np.ones(2)))
    assert error(lambda: ops.Exp.apply(np.ones(2))) == error(lambda: plain_apply(ops.Exp, np.ones(2)))


def test_the_listed_ops_take_arrays_only_and_have_their_apply():
    for ops_list, fn, names in ((apply.UNARY, apply.unary, ["x"]), (apply.BINARY, apply.binary, ["x", "y"])):
        for op in ops_list:
            assert list(inspect.signature(op.forward).parameters)[1:] == names, op
            assert op.apply.__func__ is fn, op


def every_subclass(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from every_subclass(sub)


def test_every_other_op_keeps_function_apply():
    import tinygrad_like.torch  # noqa: F401 - the facade's ops too
    listed = set(ALL)
    for op in every_subclass(Function):
        fast = op.apply.__func__ in (apply.unary, apply.binary)
        assert fast == (op in listed), op


def test_gradients_through_the_fast_apply_match_calculus():
    x = Tensor(np.array([0.5, 2.0]), requires_grad=True, dtype=np.float64)
    y = Tensor(np.array([3.0, -1.0]), requires_grad=True, dtype=np.float64)
    (x * y + x.exp() - y / x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0 + np.exp(0.5) + 3.0 / 0.25, -1.0 + np.exp(2.0) - 1.0 / 4.0])
    np.testing.assert_allclose(y.grad.numpy(), [0.5 - 1 / 0.5, 2.0 - 1 / 2.0])


def test_the_listed_ops_keep_nothing_on_the_node():
    """fast/walk.py frees their nodes by deleting the options only (parents and scope are replaced)."""
    for op in ALL:
        tree = ast.parse(inspect.getsource(op).lstrip())
        stored = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)]
        assert not stored, (op, [ast.unparse(n) for n in stored])


def test_a_node_of_a_listed_op_is_freed_like_any_other():
    from tinygrad_like import autograd
    for backward in (autograd.backward, Tensor.backward):
        x = Tensor(np.ones(3), requires_grad=True)
        h = x.exp()
        out = (h * x).sum()
        backward(out)
        for ctx in (h._ctx, out._ctx.parents[0]._ctx):
            assert ctx.freed and list(vars(ctx)) == ["parents", "scope", "freed"]


def test_a_live_graph_made_by_the_fast_apply_deep_copies_and_walks_like_the_original():
    import copy
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True, dtype=np.float64)
    out = (x * x + x.exp()).sum()
    twin = copy.deepcopy(out)
    twin_x = twin._ctx.parents[0]._ctx.parents[0]._ctx.parents[0]
    assert twin_x is not x and type(twin._ctx.parents[0]._ctx.options) is apply.NoOptions
    out.backward()
    twin.backward()
    assert x.grad.numpy().tobytes() == twin_x.grad.numpy().tobytes()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([1.0, 2.0]) + np.exp([1.0, 2.0]))


def test_no_options_is_empty_and_read_only():
    with pytest.raises(TypeError, match="read-only"):
        apply.NO_OPTIONS["alpha"] = 1
    with pytest.raises(TypeError, match="read-only"):
        apply.NO_OPTIONS.update(alpha=1)
    assert apply.NO_OPTIONS == {} and dict(**apply.NO_OPTIONS) == {}


def test_each_thread_starts_from_the_default_modes_which_the_fast_apply_reads():
    """apply.py and walk.py read grad mode, scope and anomaly mode through one look-up of `state.__dict__`,
    which _State.__init__ fills in every thread: an op in a thread started inside no_grad, a scope and
    detect_anomaly records its graph, in no scope, without anomaly checks, and a no_grad inside that thread
    does not reach the caller's."""
    import threading

    from tinygrad_like.function import state
    x = Tensor(np.array([1.0, np.inf]), requires_grad=True, dtype=np.float64)
    seen = {}

    def other():
        seen["modes"] = dict(state.__dict__)
        seen["out"] = x * x                       # inf * inf: no anomaly error, detect_anomaly is the caller's
        with no_grad():
            seen["inside"] = x * x
            inside.set()
            done.wait(5)

    inside, done = threading.Event(), threading.Event()
    with no_grad(), scope("outer"), detect_anomaly():
        thread = threading.Thread(target=other)
        thread.start()
    assert inside.wait(5)
    out = x * x                                   # while the thread sits in its no_grad
    done.set()
    thread.join()
    assert seen["modes"] == {"grad_enabled": True, "scope": "", "detect_anomaly": False, "fused": True}
    assert seen["out"].requires_grad and seen["out"]._ctx.scope == "" and seen["out"]._ctx.parents == (x, x)
    assert not seen["inside"].requires_grad
    assert out.requires_grad and out._ctx.parents == (x, x)


OPERAND_DTYPES = [(np.float32, np.float32), (np.float64, np.float64), (np.float32, np.float64), (np.int64, np.int64),
                  (np.bool_, np.bool_), (np.int64, np.float32), (np.int32, np.int64)]


def same_result(a: Tensor, b: Tensor) -> None:
    """`same`, where a parent may be a cast made for the call (promotion): then a cast of the same Tensor, or a
    constant with the same array."""
    da, db = a.numpy(), b.numpy()
    assert da.dtype == db.dtype and da.shape == db.shape and da.tobytes() == db.tobytes()
    assert a.requires_grad == b.requires_grad and a.scope == b.scope and type(a._ctx) is type(b._ctx)
    if a._ctx is not None:
        assert sorted(vars(a._ctx)) == sorted(vars(b._ctx)) and dict(a._ctx.options) == b._ctx.options == {}
        for p, q in zip(a._ctx.parents, b._ctx.parents, strict=True):
            if p is not q:
                assert type(p._ctx) is type(q._ctx) and type(p._ctx) in (type(None), ops.Cast)
                assert p._ctx is None or p._ctx.parents[0] is q._ctx.parents[0]
            assert p.numpy().tobytes() == q.numpy().tobytes() and p.dtype == q.dtype


def outcome(fn, x, y):
    try:
        return fn(x, y), None
    except Exception as e:                       # bool - bool is refused: the same error both ways
        return None, (type(e), str(e))


@pytest.mark.parametrize("name", list(apply.OPERATORS))
@pytest.mark.parametrize("dtypes", OPERAND_DTYPES, ids=str)
@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, False)])
def test_the_operators_give_what_tensor_pys_give(name, dtypes, grads):
    """Tensor's + - * / as fast/apply.py installs them against tensor.py's own (method.plain), on Tensors of
    one dtype (the short way) and of two (promotion, tensor.py's way), integers and bools included."""
    fast = Tensor.__dict__[name]
    assert fast is not fast.plain and fast.plain.__module__ == "tinygrad_like.tensor"
    x, y = (Tensor((RNG.random((2, 3)) * 4 + 1).astype(d), requires_grad=g and np.dtype(d).kind == "f")
            for d, g in zip(dtypes, grads))
    (a, ea), (b, eb) = outcome(fast, x, y), outcome(fast.plain, x, y)
    assert ea == eb
    if ea is None:
        same_result(a, b)
        with no_grad():
            same_result(fast(x, y), fast.plain(x, y))


@pytest.mark.parametrize("name", list(apply.OPERATORS))
@pytest.mark.parametrize("other", [2.5, 3, np.float64(2.5), np.ones((2, 3)), [1.0, 2.0, 3.0]], ids=repr)
def test_the_operators_with_a_number_or_an_array_take_tensor_pys_way(name, other):
    fast = Tensor.__dict__[name]
    x = Tensor(np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3), requires_grad=True)
    same_result(fast(x, other), fast.plain(x, other))


def test_two_tensors_of_one_dtype_skip_the_promotion(monkeypatch):
    """The short way is taken: with _pair and _floats broken, + - * / of one dtype still work, and give the
    arithmetic's answer (known from numpy on the same arrays)."""
    def broken(*args, **kwargs):
        raise AssertionError("_pair called")
    x, y = Tensor(np.array([1.0, 4.0])), Tensor(np.array([2.0, 8.0]))
    monkeypatch.setattr(Tensor, "_pair", broken)
    monkeypatch.setattr(Tensor, "_floats", broken)
    assert (x + y).numpy().tolist() == [3.0, 12.0] and (x - y).numpy().tolist() == [-1.0, -4.0]
    assert (x * y).numpy().tolist() == [2.0, 32.0] and (x / y).numpy().tolist() == [0.5, 0.5]
    with pytest.raises(AssertionError, match="_pair called"):
        x + Tensor(np.array([1, 2]))                 # int64 with float64: promotion, tensor.py's way
