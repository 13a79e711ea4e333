"""Autograd behaviour: accumulation, retain_graph, freeing, no_grad, grad(), higher order, deep graphs,
detect_anomaly. Known answers come from calculus or finite differences, not from the engine."""
import gc
import weakref

import numpy as np
import pytest

from tinygrad_like import Tensor, detect_anomaly, grad, no_grad, scope
from tinygrad_like.scaffolding import Skeleton


def test_gradients_accumulate_across_backward_calls():
    x = Tensor([1.0, -2.0], requires_grad=True)
    (x * x).sum().backward()
    (x * 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0 + 3.0, -4.0 + 3.0])  # 2x + 3


def test_a_node_used_twice_sums_both_paths():
    x = Tensor([1.5, 2.0], requires_grad=True)
    y = x * x + x                                   # dy/dx = 2x + 1
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 5.0])


def test_retain_graph_allows_a_second_backward():
    x = Tensor([2.0], requires_grad=True)
    y = (x * x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2 * 12.0])  # 3x² twice


def test_graph_is_freed_after_backward_down_to_its_skeleton():
    """After backward the arrays go (intermediate outputs, saved arrays); what a drawing needs stays:
    each op, its output's shape, dtype and scope, links to its parents, and the leaves themselves."""
    x = Tensor(np.linspace(-1, 1, 100), requires_grad=True, name="x")
    with scope("layer"):
        h = x.exp()                                 # (100,): dropped once the graph is freed
    logits = (h * x).reshape(20, 5)
    y = logits.sparse_categorical_crossentropy(np.zeros(20, dtype=np.int64))
    h_data, probs = weakref.ref(h.numpy()), weakref.ref(y._ctx.probs)   # an output, and an array saved for backward
    del h, logits
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()
    gc.collect()
    assert h_data() is None and probs() is None
    assert y._ctx.freed and not hasattr(y._ctx, "probs") and not hasattr(y._ctx, "options")
    (reshaped,) = y._ctx.parents
    assert isinstance(reshaped, Skeleton) and reshaped.shape == (20, 5) and reshaped._data is None
    while type(reshaped._ctx).__name__ == "Reshape":
        (reshaped,) = reshaped._ctx.parents
    product = reshaped
    exp, leaf = product._ctx.parents
    assert type(product._ctx).__name__ == "Mul" and leaf is x  # a leaf that requires grad stays itself
    assert type(exp._ctx).__name__ == "Exp" and exp.scope == "layer" and exp.dtype == np.float64
    assert exp._ctx.parents == (x,)


def test_leaf_gradients_are_arrays_of_their_own():
    """x + y sends the same gradient to both; each .grad must still be a separate, writable array,
    because optimizers (gradient clipping, ...) update .grad in place."""
    x, y = Tensor([1.0, 2.0], requires_grad=True), Tensor([3.0, 4.0], requires_grad=True)
    (x + y).sum().backward()
    assert x.grad is not y.grad and x.grad.numpy().flags.writeable
    x.grad.data *= 10.0
    np.testing.assert_array_equal(y.grad.numpy(), [1.0, 1.0])
    g = Tensor([5.0, 6.0])
    z = Tensor([0.0, 0.0], requires_grad=True)
    (z + 0.0).backward(g)
    z.grad.data[:] = 0.0
    np.testing.assert_array_equal(g.numpy(), [5.0, 6.0])   # the caller's gradient is untouched
    m = Tensor(np.zeros((2, 3)), requires_grad=True)
    g = Tensor(np.arange(6.0))
    m.reshape(6).backward(g)                              # m.grad would be a numpy view of g
    m.grad.data *= 0.0
    np.testing.assert_array_equal(g.numpy(), np.arange(6.0))


def test_no_grad_records_nothing():
    x = Tensor([1.0, 2.0], requires_grad=True)
    with no_grad():
        y = (x * 2).exp().sum()
    assert not y.requires_grad and y._ctx is None

    @no_grad()
    def f(t):
        return t * t
    assert f(x)._ctx is None and not f(x).requires_grad
    assert (x * x).requires_grad                    # restored afterwards


def test_grad_returns_gradients_without_touching_dot_grad():
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = Tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = (x * w).sum()
    gx, gw = grad(y, [x, w])
    np.testing.assert_array_equal(gx.numpy(), [0.5, -1.0, 2.0])
    np.testing.assert_array_equal(gw.numpy(), [1.0, 2.0, 3.0])
    assert x.grad is None and w.grad is None


def test_grad_with_grad_outputs_and_allow_unused():
    x = Tensor([1.0, 2.0], requires_grad=True)
    unused = Tensor([1.0], requires_grad=True)
    y = x * x                                       # non-scalar: needs grad_outputs
    (gx,) = grad(y, [x], grad_outputs=Tensor([10.0, 100.0]))
    np.testing.assert_array_equal(gx.numpy(), [20.0, 400.0])
    gx, gu = grad((x * 3).sum(), [x, unused], allow_unused=True)
    assert gu is None and np.array_equal(gx.numpy(), [3.0, 3.0])
    with pytest.raises(RuntimeError, match="allow_unused"):
        grad((x * 3).sum(), [x, unused])
    with pytest.raises(RuntimeError, match="grad_outputs"):
        grad(x * x, [x])


def test_grad_of_an_intermediate_and_of_several_outputs():
    x = Tensor([1.0, 2.0], requires_grad=True)
    h = x * 3.0
    (gh,) = grad((h * h).sum(), [h])                 # d(h²)/dh = 2h = 6x
    np.testing.assert_array_equal(gh.numpy(), [6.0, 12.0])
    (gx,) = grad([(x * 2.0).sum(), (x * x).sum()], [x])  # outputs' gradients add: 2 + 2x
    np.testing.assert_array_equal(gx.numpy(), [4.0, 6.0])
    assert x.grad is None and h.grad is None


def test_second_derivative_of_cube_is_6x():
    x = Tensor(np.array([-1.0, 0.5, 2.0]), requires_grad=True)
    (g,) = grad((x ** 3).sum(), [x], create_graph=True)
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 2)
    (h,) = grad(g.sum(), [x])
    np.testing.assert_allclose(h.numpy(), 6 * x.numpy())
    # the same through backward(create_graph=True): x.grad is itself differentiable
    y = (x * x * x).sum()
    y.backward(create_graph=True)
    first = x.grad
    assert first.requires_grad and first._ctx is not None
    x.grad = None
    first.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.numpy())


def test_without_create_graph_backward_records_no_graph():
    x = Tensor([1.0, 2.0], requires_grad=True)
    w = Tensor([3.0, 4.0], requires_grad=True)
    ((x * w).tanh() * x).sum().backward()
    for t in (x, w):
        assert t.grad._ctx is None and not t.grad.requires_grad
    (g,) = grad((x ** 3).sum(), [x])
    assert g._ctx is None and not g.requires_grad


def mlp_loss(x, w1, w2):
    """A 2-layer tanh MLP with a squared-error loss: ((tanh(x w1) w2 - 1)²).sum()."""
    return (((x @ w1).tanh() @ w2 - 1.0) ** 2).sum()


def test_hessian_vector_product_of_an_mlp_matches_finite_differences():
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((5, 3)))
    params = [Tensor(rng.standard_normal((3, 4)), requires_grad=True),
              Tensor(rng.standard_normal((4, 2)), requires_grad=True)]
    v = [rng.standard_normal(p.shape) for p in params]
    # H v = d/dθ (∇L · v): differentiate the gradient, built with create_graph
    grads = grad(mlp_loss(x, *params), params, create_graph=True)
    dot = sum(((g * Tensor(vi)).sum() for g, vi in zip(grads, v)), Tensor(0.0, dtype=np.float64))
    hvp = grad(dot, params)

    def gradient_at(shift):
        shifted = [Tensor(p.numpy() + shift * vi, requires_grad=True) for p, vi in zip(params, v)]
        return [g.numpy() for g in grad(mlp_loss(x, *shifted), shifted)]
    eps = 1e-5
    plus, minus = gradient_at(eps), gradient_at(-eps)
    for h, gp, gm in zip(hvp, plus, minus):
        np.testing.assert_allclose(h.numpy(), (gp - gm) / (2 * eps), rtol=1e-6, atol=1e-7)


def test_a_chain_of_100000_ops_backprops_without_recursion_error():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = x
    for _ in range(100_000):                        # the cheapest op, so the test stays fast
        y = -y                                      # an even number of negations: y = x, dy/dx = 1
    (y * Tensor([3.0, 5.0])).sum().backward()
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 5.0])


def test_detect_anomaly_names_the_op_that_made_nan_in_forward():
    x = Tensor([-1.0, 1.0], requires_grad=True)
    # log(-1) = NaN is the very thing tested here: the warning is silenced, the NaN is asserted
    with detect_anomaly(), scope("blk"), np.errstate(invalid="ignore"):
        y = x * 2.0
        with pytest.raises(FloatingPointError, match=r"Log in scope 'blk' produced NaN in its forward output"):
            y.log()
    with np.errstate(invalid="ignore"):             # the NaN is asserted on the next line
        assert np.isnan(x.log().numpy()[0])         # without detect_anomaly: no error


def test_detect_anomaly_names_the_op_whose_backward_made_inf():
    x = Tensor([0.0, 4.0], requires_grad=True)
    with scope("blk"):
        y = x.sqrt()                                # forward is finite: sqrt(0) = 0
    loss = (y * 3.0).sum()
    with detect_anomaly(), np.errstate(divide="ignore"):   # the 1/0 tested for: it must raise, not warn
        with pytest.raises(FloatingPointError, match=r"Sqrt in scope 'blk' produced Inf in its backward gradient"):
            loss.backward()


def test_detect_anomaly_catches_log_of_zero_in_backward():
    """log(0) = -inf is allowed in a forward output (it is also the mask value), but its gradient 1/0 is not."""
    x = Tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly(), np.errstate(divide="ignore"):   # log(0) and 1/0 are the point: they must raise
        y = (x.log() * 2.0).sum()
        with pytest.raises(FloatingPointError, match=r"Log produced Inf in its backward gradient"):
            y.backward()


def test_detect_anomaly_accepts_masked_attention():
    """-inf is how masks are written (exp(-inf) = 0): a causal attention is not an anomaly."""
    Tensor.manual_seed(0)
    q = Tensor.randn(1, 4, 8, requires_grad=True)
    with detect_anomaly():
        q.scaled_dot_product_attention(q, q, is_causal=True).sum().backward()
    assert np.isfinite(q.grad.numpy()).all()


def test_a_freed_graph_keeps_small_values_as_copies_that_pin_nothing():
    """A skeleton keeps at most 4 numbers, copied: a small view must not keep its big base array alive."""
    big = np.arange(1000.0)
    w = Tensor([1.0, 2.0], requires_grad=True, dtype=np.float64)
    y = (w * Tensor(big[:2])).sum()                  # the constant is a view of `big`
    base = weakref.ref(big)
    del big
    y.backward()
    gc.collect()
    assert base() is None
    (product,) = y._ctx.parents
    leaf, constant = product._ctx.parents
    assert leaf is w and constant._data.tolist() == [0.0, 1.0] and constant._data.base is None


def test_the_walk_takes_tensors_newest_first_and_each_after_all_its_users():
    """backprop walks tensors in the reverse of the order they were made (Tensor._tape_index): every tensor
    after all the tensors computed from it, whatever order the graph's edges list them in."""
    from tinygrad_like.autograd import backprop
    x = Tensor([1.0, 2.0], requires_grad=True, name="x")
    a = x * 2.0                      # made first, used last
    b = x.exp()
    c = b * a + a                    # uses a twice and b once
    walked = []
    backprop([c.sum()], [Tensor(1.0)], on_step=lambda node, g, passed: walked.append(node))
    made = [x, a, b, c]
    assert [t for t in walked if any(t is m for m in made)] == [c, b, a, x]
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]) * (2 * np.array([1.0, 2.0]) + 2) + 2, rtol=1e-6)


def test_a_deep_copy_shares_creation_numbers_and_still_backprops():
    import copy
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = copy.deepcopy(x)             # the same _tape_index as x: ties between them are broken by id
    (x * y + y * 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(y.grad.numpy(), [4.0, 5.0])


def test_a_tensor_that_only_gets_none_gradients_is_still_freed():
    """A rule may send no gradient to an input that requires one; that input's own graph must still
    be freed by backward (its arrays would otherwise stay held by the skeleton)."""
    from tinygrad_like.function import Function

    class PassX(Function):           # x + y with y treated as a constant
        def forward(self, x, y): return x + y
        def backward(self, grad, out): return grad, None

    x = Tensor([1.0, 2.0], requires_grad=True)
    h = x.exp()
    PassX.apply(x, h).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    assert h._ctx.freed


def test_accumulating_into_an_existing_grad_gives_a_new_array_of_the_sum():
    x = Tensor([1.0, -2.0], requires_grad=True)
    (x * 2.0).sum().backward()
    first = x.grad
    (x * x).sum().backward()
    assert x.grad is not first and x.grad.numpy() is not first.numpy() and not x.grad.requires_grad
    np.testing.assert_array_equal(first.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(x.grad.numpy(), [2.0 + 2.0, 2.0 - 4.0])
