"""The fast path's backward walk (tinygrad_like/fast/walk.py) against the plain one (autograd.backward).

Every graph is built twice from the same arrays, walked once by each, and compared: each leaf's .grad bit
for bit (dtype, shape and bytes), which leaves got no gradient, the freed graph (each op freed, its parents
kept as the leaves themselves or as Skeletons with the same shape, dtype, name, scope, small values and
gradient norm), and the errors (type and message). The known answers here come from the plain walk, which
the rest of the suite checks against calculus, finite differences and PyTorch.
"""
import numpy as np
import pytest

from tinygrad_like import Tensor, autograd, ops, scaffolding
from tinygrad_like.fast import walk
from tinygrad_like.function import Function, detect_anomaly, no_grad
from tinygrad_like.scaffolding import Skeleton

RNG = np.random.default_rng(0)


def plain_walk(out, g=None):
    autograd.backward(out, g)


def lean_walk(out, g=None):
    walk.backward(out, g)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def freed_graph(out) -> list:
    """What backward left of the graph under `out`, as comparable tuples, in the order a stack walk finds it."""
    seen, found, stack = set(), [], [out]
    while stack:
        t = stack.pop()
        ctx = t._ctx
        if ctx is None or id(ctx) in seen:
            continue
        seen.add(id(ctx))
        found.append((type(ctx).__name__, ctx.freed, sorted(vars(ctx)) if ctx.freed else None))
        for p in ctx.parents:
            if isinstance(p, Skeleton):
                small = None if p._data is None else p._data.tobytes()
                found.append(("skeleton", p.shape, str(p.dtype), p.name, p.scope, p.requires_grad, small, p.grad_norm))
            else:
                found.append(("tensor", p.shape, p.requires_grad, p._ctx is None))
            stack.append(p)
    return found


def outcome(build, arrays, walker, g=None, twice=False):
    """Build the graph from copies of `arrays`, walk it, and return what can be compared."""
    out, leaves = build(*[Tensor(a.copy(), requires_grad=a.dtype.kind == "f") for a in arrays])
    error = None
    try:
        walker(out, g)
        if twice:
            walker(out, g)
    except Exception as e:  # noqa: BLE001 - the two walks must raise alike
        error = (type(e), str(e))
    grads = [None if t.grad is None else t.grad.numpy() for t in leaves]
    return grads, error, freed_graph(out)


def assert_same(build, arrays, g=None, twice=False):
    plain = outcome(build, arrays, plain_walk, g, twice)
    lean = outcome(build, arrays, lean_walk, g, twice)
    for a, b in zip(plain[0], lean[0]):
        assert (a is None) == (b is None)
        if a is not None:
            assert same_bits(a, b), (a, b)
            assert b.flags.writeable
    assert plain[1] == lean[1]
    assert plain[2] == lean[2]
    return plain


def arrays(*shapes, dtype=np.float32):
    return [RNG.standard_normal(s).astype(dtype) for s in shapes]


# ---------------------------------------------------------------- graphs

GRAPHS = {
    "2x2 add": (lambda a, b: ((a + b).sum(), [a, b]), [(2, 2), (2, 2)]),
    "broadcast add and sub": (lambda a, b, c: ((a + b - c) * (a - c)).sum(), [(3, 4), (4,), (3, 1)]),
    "broadcast mul, stretched and added axes": (lambda a, b: (a * b * a).sum(), [(2, 1, 3), (4, 1)]),
    "shared subgraph": (lambda a, b, c: ((a * b) + (a * b) * c + (a * b).tanh()).sum(), [(5,), (5,), (5,)]),
    "one tensor used by many": (lambda a: (a * a + a.exp() - a.sigmoid() * a + (-a)).sum(), [(7,)]),
    "sums over axes": (lambda a: (a.sum(axis=0) * a.sum(axis=1, keepdim=True).sum() + a.sum()).sum(), [(3, 4)]),
    "reshape, expand, permute, clone": (
        lambda a, b: (a.reshape(4, 3).permute(1, 0).clone() * b.expand(3, 4)).sum(), [(2, 6), (3, 1)]),
    "products and rows": (lambda a, b, c: ((a @ b).relu()[1:, :] * c[0]).sum(), [(4, 3), (3, 5), (2, 5)]),
    "cat, where, max, log": (
        lambda a, b: (Tensor.cat([a, b], dim=0).amax(axis=1) + (a > 0).where(a, b).abs().log().sum()).sum(),
        [(2, 3), (2, 3)]),
    "fused ops": (lambda a, w, b: a.layernorm(-1, 1e-5, w, b).softmax(-1).gelu().linear(w.reshape(1, 4)).sum(),
                  [(3, 4), (4,), (4,)]),
    "cross-entropy": (lambda a: a.sparse_categorical_crossentropy(np.array([0, 2, 1])), [(3, 4)]),
    "zero-dimensional": (lambda a, b: (a * b - b + a.exp() * a.tanh() - a.sigmoid()).sum(), [(), ()]),
    "float64": (lambda a, b: ((a * b).tanh() + a / b).sum(), [(3,), (3,)]),
    "division, broadcast": (lambda a, b, c: (a / (b * b + 1.0) + c / a - (a / c).exp()).sum(), [(3, 4), (4,), (3, 1)]),
    "rows of a table, repeated": (lambda w, x: (w[np.array([[0, 2], [2, 2]])] * x).sum() + w[1].sum(),
                                  [(4, 3), (2, 2, 3)]),
    "cat on every axis, permutes": (
        lambda a, b: (Tensor.cat([a, b], dim=2).permute(2, 0, 1).sum(axis=0) * Tensor.cat([a, a], dim=-3).sum(axis=2)
                      + Tensor.cat([b, b], dim=1).permute(1, 2, 0).sum()).sum(), [(1, 2, 3), (1, 2, 2)]),
    "batched products, broadcast": (lambda a, b, c: ((a @ b) @ c).tanh().sum(), [(2, 3, 4, 5), (3, 5, 2), (1, 2, 4)]),
    "(B, T, k) @ (k, m) and (k, m) @ (B, m, n)": (lambda a, w, v: ((a @ w).relu() @ (w.permute(1, 0) @ v)).sum(),
                                                  [(3, 4, 5), (5, 2), (3, 5, 6)]),
    "matrix times vector and vector times matrix": (lambda a, v: (a @ v).sum() + (v @ a.permute(1, 0)).sum(),
                                                    [(3, 4), (4,)]),
    "powers": (lambda a: (a ** 3 + a ** 2 * 0.5 - (a * a + 1.0) ** 0.5 + a ** 1 + a ** 0 + (a * a + 1.0) ** -1).sum(),
               [(3, 4)]),
    "where with broadcast condition and value": (
        lambda a, b: ((a > 0).where(a, b * 2.0) + (b[0] < 0).where(a.tanh(), 0.5) + a.masked_fill(a < -0.3, 1.5)).sum(),
        [(3, 4), (1, 4)]),
    "relu at zero": (lambda a: ((a * 0.0).relu() + a.relu() * a).sum(), [(5,)]),
    "NewGELU and attention scores": (
        lambda x, w: (lambda h: (0.5 * h * (1.0 + ((2.0 / np.pi) ** 0.5 * (h + 0.044715 * h ** 3)).tanh())))(
            (x @ w).masked_fill(Tensor(np.tril(np.ones((4, 4), bool)) == 0), -np.inf).softmax(-1) @ x).sum(),
        [(2, 4, 4), (4, 4)]),
}


def _call(fn, shapes, dtype=np.float32):
    def build(*leaves):
        out = fn(*leaves)
        return (out if isinstance(out, tuple) else (out, list(leaves)))
    return build, arrays(*shapes, dtype=dtype)


@pytest.mark.parametrize("name", list(GRAPHS))
def test_the_lean_walk_gives_the_plain_walks_gradients_and_freed_graph(name):
    fn, shapes = GRAPHS[name]
    build, data = _call(fn, shapes, np.float64 if name == "float64" else np.float32)
    assert_same(build, data)


ARRAY_RULES = ["batched products, broadcast", "(B, T, k) @ (k, m) and (k, m) @ (B, m, n)",
               "matrix times vector and vector times matrix", "powers", "where with broadcast condition and value",
               "relu at zero", "NewGELU and attention scores"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ARRAY_RULES)
def test_products_powers_where_and_relu_run_on_arrays_with_the_plain_walks_bits(name, dtype, monkeypatch):
    """Matmul, PowConst, Where and Relu have array rules: the lean walk never calls their Tensor rules,
    and gives the plain walk's bits in both float dtypes."""
    fn, shapes = GRAPHS[name]
    build, data = _call(fn, shapes, dtype)
    plain = outcome(build, data, plain_walk)
    for op in (ops.Matmul, ops.PowConst, ops.Where, ops.Relu):
        monkeypatch.setattr(op, "backward", lambda *a: pytest.fail("a Tensor rule ran in the lean walk"))
    lean = outcome(build, data, lean_walk)
    assert [None if a is None else (a.dtype, a.shape, a.tobytes()) for a in plain[0]] == \
        [None if b is None else (b.dtype, b.shape, b.tobytes()) for b in lean[0]]
    assert plain[1:] == lean[1:]


def test_a_product_of_two_dtypes_takes_the_tensor_rule():
    assert_same(lambda a, b: ((a @ b.cast(np.float64)).sum(), [a, b]), arrays((3, 4), (4, 2)))


@pytest.mark.parametrize("name", list(GRAPHS))
def test_a_second_backward_raises_the_same_error(name):
    fn, shapes = GRAPHS[name]
    build, data = _call(fn, shapes)
    plain = assert_same(build, data, twice=True)
    assert plain[1] is not None and "already freed" in plain[1][1]


def test_a_gradient_given_to_backward_is_copied_into_each_leaf():
    """a + b hands the caller's gradient to both leaves: each .grad is an array of its own."""
    g = Tensor(np.arange(4.0, dtype=np.float32).reshape(2, 2))
    build, data = _call(lambda a, b: (a + b, [a, b]), [(2, 2), (2, 2)])
    assert_same(build, data, g=g)
    a, b = (Tensor(x, requires_grad=True) for x in data)
    lean_walk(a + b, g)
    assert a.grad._data is not g._data and b.grad._data is not g._data and a.grad._data is not b.grad._data
    np.testing.assert_array_equal(a.grad.numpy(), g.numpy())


def test_a_gradient_of_another_dtype_is_cast_first():
    g = Tensor(np.ones((2, 2)))                                 # float64 for a float32 output
    build, data = _call(lambda a, b: (a * b, [a, b]), [(2, 2), (2, 2)])
    grads = assert_same(build, data, g=g)[0]
    assert grads[0].dtype == np.float32


def test_mixed_dtypes_run_the_tensor_rules():
    def build(a, b):
        return (a.double() * b.double() + a.double()).sum() + b.sum(), [a, b]
    assert_same(build, arrays((3,), (3,)))


def test_constants_and_integer_inputs_get_no_gradient():
    def build(a, idx):
        return (a[idx] * Tensor(np.float32(2.0)) + a.sum()).sum(), [a, idx]
    assert_same(build, [arrays((5,))[0], np.array([0, 3, 3])])


def test_gradients_accumulate_into_leaves_across_backward_calls():
    data = arrays((3,), (3,))
    results = []
    for walker in (plain_walk, lean_walk):
        a, b = (Tensor(x, requires_grad=True) for x in data)
        walker((a * b).sum())
        walker((a * a + b).sum())
        results.append((a.grad.numpy(), b.grad.numpy()))
    assert all(same_bits(x, y) for x, y in zip(*results))


def test_a_leaf_keeps_a_fresh_gradient_without_a_copy_exactly_when_the_plain_walk_does():
    """The plain walk keeps a gradient a rule made and nobody else holds; a view or the caller's gradient
    is copied. Same choice in the lean walk: a fresh product is owned, a reshape's view is not."""
    data = arrays((2, 3), (2, 3))
    for build in (lambda a, b: ((a * b).sum(), [a, b]), lambda a, b: ((a.reshape(6) + b.reshape(6)).sum(), [a, b])):
        owned = []
        for walker in (plain_walk, lean_walk):
            out, leaves = build(*[Tensor(x, requires_grad=True) for x in data])
            walker(out)
            owned.append([t.grad._data.flags.owndata for t in leaves])
        assert owned[0] == owned[1]


@pytest.mark.parametrize("order", ["a first", "b first", "a twice"])
def test_an_array_several_leaves_receive_is_kept_by_the_same_leaf_as_in_the_plain_walk(order):
    """A fresh gradient array that reaches several leaves (x + y hands its gradient to both) is kept, not
    copied, by the leaf the plain walk's heap gives first; the others get copies."""
    made = []

    class Spy(Function):                                        # hands on a fresh array, remembered
        def forward(self, x): return x.copy()
        def backward(self, grad, out):
            made.append(grad * 1.0)
            return made[-1]

    kept = []
    for walker in (plain_walk, lean_walk):
        first, second = Tensor([1.0, 2.0], requires_grad=True), Tensor([3.0, 4.0], requires_grad=True)
        a, b = (first, second) if order != "b first" else (second, first)
        out = Spy.apply(a + b) if order != "a twice" else Spy.apply(a + b + a)
        walker(out, Tensor([1.0, 1.0]))
        kept.append([t.grad._data is made[-1]._data for t in (first, second)])
        np.testing.assert_array_equal(a.grad.numpy(), [2.0, 2.0] if order == "a twice" else [1.0, 1.0])
    assert kept[0] == kept[1] and sum(kept[0]) == 1


def test_each_leaf_gradient_is_the_tensor_that_tensor_result_makes():
    """The walk makes the leaves' .grad by writing Tensor._result(array, None) out (a call costs more there):
    every slot as _result sets it, newer on the tape than the graph, in each way a leaf gets its array (the
    caller's gradient copied, a fresh array kept, a view copied, a sum with an earlier .grad)."""
    data = arrays((2, 3), (2, 3))
    builds = (lambda a, b: (a + b, [a, b]), lambda a, b: ((a * b).sum(), [a, b]),
              lambda a, b: ((a.reshape(6) + b.reshape(6)).sum(), [a, b]))
    reference = Tensor._result(data[0], None)
    for build in builds:
        for walker in (plain_walk, lean_walk):
            a, b = (Tensor(x, requires_grad=True) for x in data)
            for _ in range(2):                                  # the second time, into the first .grad
                out, leaves = build(a, b)
                walker(out, Tensor(np.ones((2, 3), np.float32)) if out.shape else None)
                for t in leaves:
                    assert type(t.grad) is Tensor and type(t.grad._data) is np.ndarray
                    for slot in set(Tensor.__slots__) - {"_data", "_tape_index", "__weakref__"}:   # any new slot too
                        assert getattr(t.grad, slot) == getattr(reference, slot), slot
                    assert t.grad._tape_index > out._tape_index


@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_seed_of_a_one_number_out_is_shared_read_only_and_never_handed_out(shape, dtype):
    """backward() of a one-number out starts from one read-only array of ones per dtype and shape (walk.SEEDS):
    a leaf gets a writable copy of its own, whether the out is the leaf itself or passes the seed on (an add
    hands it to both parents unchanged), and the seed still holds 1 after its gradients are written into."""
    leaves = []
    for _ in range(2):
        x = Tensor(np.full(shape, 3.0, dtype), requires_grad=True)
        y = Tensor(np.full(shape, 4.0, dtype), requires_grad=True)
        lean_walk(x + y)
        lean_walk(x)                                            # the out is the leaf: 1 more
        leaves += [x, y]
    seed = walk.SEEDS[(np.dtype(dtype), shape)]
    assert not seed.flags.writeable and seed.shape == shape and seed.dtype == dtype
    for t in leaves:
        assert t.grad._data.flags.writeable and t.grad._data is not seed and t.grad._data.base is not seed
        assert t.grad.dtype == dtype and t.grad.shape == shape
        t.grad._data += 10.0                                    # written into: the seed is not
    assert [t.grad._data.item() for t in leaves] == [12.0, 11.0] * 2 and seed.item() == 1.0
    with pytest.raises(ValueError, match="read-only"):
        seed += 1


def test_in_place_change_after_use_raises_the_same_error():
    def build(a):
        h = a * 2.0
        out = (h * h).sum()
        h.add_(1.0)                                             # h changed after the product read it
        return out, [a]
    plain = assert_same(build, arrays((3,)))
    assert plain[1] is not None and "changed in place" in plain[1][1]


def test_an_error_midway_leaves_the_same_leaves_updated():
    """When a node raises (here: its input was changed in place), the leaves the plain walk had already
    reached, those made after that node, have their .grad; the older ones do not."""
    def build(a):
        h = a * 2.0
        squared = h * h                                         # reads h; raises in backward
        w = Tensor(np.array([0.5, -1.0, 2.0], np.float32), requires_grad=True)   # a leaf made after it
        out = squared.sum() + (w * 3.0).sum()
        h.add_(1.0)
        return out, [a, w]
    plain = assert_same(build, arrays((3,)))
    assert "changed in place" in plain[1][1]
    assert plain[0][0] is None and plain[0][1] is not None


def test_a_rule_that_sends_none_still_frees_the_graph():
    class PassX(Function):
        def forward(self, x, y): return x + y
        def backward(self, grad, out): return grad, None

    def build(a):
        h = a.exp()
        return PassX.apply(a, h).sum(), [a]
    assert_same(build, arrays((4,)))


def test_intermediate_gradient_norms_are_kept_for_drawings_on_small_graphs_only():
    def build(a):
        h = (a * 3.0).tanh()
        return (h * h).sum(), [a]
    small = assert_same(build, arrays((5,)))[2]
    assert any(entry[0] == "skeleton" and entry[-1] is not None for entry in small)
    big = assert_same(build, arrays((scaffolding.NORM_AT_MOST + 1,)))[2]
    assert all(entry[-1] is None for entry in big if entry[0] == "skeleton")


def test_a_long_chain_walks_without_recursion():
    def build(a):
        h = a
        for _ in range(3000):
            h = h * 1.0001 + 0.5
        return h.sum(), [a]
    assert_same(build, arrays((2,)))


STEPS = [lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y, lambda x, y: -x,
         lambda x, y: (x * 0.25).tanh(), lambda x, y: x.sigmoid(), lambda x, y: (x * 0.1).exp(),
         lambda x, y: x.sum(axis=-1, keepdim=True) if x.ndim else x, lambda x, y: x.relu() * y,
         lambda x, y: x.clone(), lambda x, y: (x + y).expand(3, 4), lambda x, y: x.reshape(-1).sum() + y]


@pytest.mark.parametrize("seed", range(40))
def test_random_graphs(seed):
    """Random programs over a pool of tensors of broadcastable shapes: each step applies a random op to
    random members of the pool (so subgraphs are shared), some of them constants."""
    rng = np.random.default_rng(seed)
    shapes = [(3, 4), (4,), (3, 1), (1, 4), (), (3, 4)]
    data = [rng.standard_normal(s).astype(np.float32 if seed % 4 else np.float64) for s in shapes]
    plan = [(int(rng.integers(len(STEPS))), int(rng.integers(100)), int(rng.integers(100))) for _ in range(25)]

    def build(*leaves):
        pool = list(leaves) + [Tensor(rng_const, requires_grad=False) for rng_const in (data[0] * 0.5,)]
        for op, i, j in plan:
            x, y = pool[i % len(pool)], pool[j % len(pool)]
            new = STEPS[op](x, y)
            pool.append(new)
        return sum(t.sum() for t in pool[len(leaves):] if t.requires_grad), list(leaves)
    assert_same(build, data)


# ---------------------------------------------------------------- when the plain walk runs instead

def test_retain_graph_create_graph_anomaly_retain_grad_and_odd_gradients_go_to_the_plain_walk(monkeypatch):
    calls = []
    plain = autograd.backward
    monkeypatch.setattr(autograd, "backward", lambda *a, **k: calls.append(a) or plain(*a, **k))
    x = Tensor([1.0, 2.0], requires_grad=True)
    walk.backward((x * x).sum(), None, retain_graph=True)
    walk.backward((x * x).sum(), None, create_graph=True)
    with detect_anomaly():
        walk.backward((x * x).sum())
    walk.backward(x * x, np.ones(2, np.float32))                # an array, not a Tensor
    walk.backward(x * x, Tensor([1.0, 1.0], requires_grad=True))   # a gradient that needs a gradient
    h = x * x
    scaffolding.retain(h)
    walk.backward(h.sum())
    assert len(calls) == 6
    np.testing.assert_array_equal(h.grad.numpy(), [1.0, 1.0])
    del h
    from tinygrad_like import composed
    with composed():                                            # the fast path off: the plain walk
        walk.backward((x * x).sum())
        (x * x).sum().backward()
    assert len(calls) == 8
    walk.backward((x * x).sum())
    (x * x).sum().backward()
    assert len(calls) == 8                                      # no feature in use: the lean walk


@pytest.mark.parametrize("case", ["not a scalar", "wrong shape", "needs no grad"])
def test_bad_calls_raise_the_plain_walks_errors(case):
    def error(walker):
        x = Tensor([1.0, 2.0], requires_grad=True)
        out, g = {"not a scalar": (x * x, None), "wrong shape": (x * x, Tensor([1.0])),
                  "needs no grad": (Tensor([1.0]).sum(), None)}[case]
        with pytest.raises(Exception) as e:     # noqa: PT011 - the two walks must raise alike
            walker(out, g)
        return type(e.value), str(e.value)
    assert error(plain_walk) == error(lean_walk)


def test_backward_uses_the_lean_walk_while_the_fast_path_is_on():
    from tinygrad_like import composed
    assert Tensor.backward is walk.backward
    assert Tensor.backward.__doc__.startswith("Accumulate d(self)/d(leaf) into the `.grad`")  # help(): tensor.py
    x = Tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    with composed():                                            # the plain walk: same answer
        y = Tensor([1.0, 2.0], requires_grad=True)
        (y * y).sum().backward()
    assert same_bits(x.grad.numpy(), y.grad.numpy())


def test_double_backward_falls_back_and_matches():
    results = []
    for walker_is_lean in (False, True):
        x = Tensor([0.5, -1.5], requires_grad=True, dtype=np.float64)
        (gx,) = autograd.grad((x * x * x).sum(), x, create_graph=True)
        out = gx.sum()
        (walk.backward if walker_is_lean else autograd.backward)(out)
        results.append(x.grad.numpy())
    assert same_bits(*results)
    np.testing.assert_allclose(results[0], [6 * 0.5, 6 * -1.5])


def test_the_walk_restores_grad_mode():
    x = Tensor([1.0, 2.0], requires_grad=True)
    lean_walk(x.amax(axis=0))                                   # a Tensor rule: grad mode turned off inside
    out = x * 2.0
    assert out.requires_grad
    with no_grad():
        y = Tensor([1.0], requires_grad=True)
        h = y * 1.0
    assert not h.requires_grad


# ---------------------------------------------------------------- a split's slices added in place

SLICES = {
    "split in three on the last axis (q, k, v)": (lambda x: [x[..., 0:4], x[..., 4:8], x[..., 8:12]], (2, 3, 12)),
    "overlapping slices": (lambda x: [x[:, 0:3], x[:, 1:4], x[:, 2:]], (3, 5)),
    "ints, None and Ellipsis": (lambda x: [x[0], x[1, None], x[..., 2], x[2, 3]], (4, 4)),
    "the same slice twice": (lambda x: [x[1:3], x[1:3], x[::2]], (6,)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(SLICES))
def test_slices_of_one_tensor_get_the_plain_walks_bits(name, dtype):
    """Slices of an intermediate (its gradient the walk's own array) and of a leaf, each multiplied by
    constants holding -0.0, so the slices' gradients hold -0.0 (the plain sum turns those outside a later
    slice into +0.0, and the in-place sum must too)."""
    take, shape = SLICES[name]
    constants = []
    for part in take(np.zeros(shape)) * 2:
        c = RNG.standard_normal(np.shape(part)).astype(dtype)
        c.reshape(-1)[::2] = -0.0
        constants.append(c)

    def build(x):
        parts = take(x * 1.0) + take(x)
        return sum((p * Tensor(c)).sum() for p, c in zip(parts, constants)), [x]
    grads, _, _ = assert_same(build, [RNG.standard_normal(shape).astype(dtype)])
    assert (grads[0] == 0).any()


def test_split_gradients_are_added_into_the_walks_own_array(monkeypatch):
    """The first slice's gradient is a fresh array of x's shape; the others are added into it, so no second
    zero array is made (the plain walk makes one per slice)."""
    made = []
    zeros = np.zeros
    monkeypatch.setattr("tinygrad_like.ops.np.zeros", lambda *a, **k: made.append(a[0]) or zeros(*a, **k))
    x = Tensor(RNG.standard_normal((2, 3, 12)).astype(np.float32), requires_grad=True)
    q, k, v = (x * 2.0).split(4, dim=-1)
    walk.backward((q * k).sum() + v.sum())
    assert made.count((2, 3, 12)) == 1
    expected = np.concatenate([k.numpy(), q.numpy(), np.ones((2, 3, 4), np.float32)], axis=-1) * 2
    assert np.array_equal(x.grad.numpy(), expected)
