"""Optimizers against the update formulas written out by hand in plain numpy (float64), gradient clipping
against the norm computed by hand, and the schedule against its closed form."""
import math
import warnings

import numpy as np
import pytest

from nn.optim import SGD, Adam, AdamW, clip_grad_norm, cosine_schedule
from tinygrad_like import Tensor

STEPS = 4


def grads_for(shape, steps=STEPS, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for _ in range(steps)]


# ---------------------------------------------------------------- independent references (float64 loops)

def ref_sgd(p, grads, lr, momentum=0.0, nesterov=False, weight_decay=0.0):
    p, buf = np.array(p, dtype=np.float64), None
    for g in grads:
        d = g + weight_decay * p
        if momentum:
            buf = d.copy() if buf is None else momentum * buf + d
            d = d + momentum * buf if nesterov else buf
        p = p - lr * d
    return p


def ref_adam(p, grads, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False):
    p = np.array(p, dtype=np.float64)
    m, v = np.zeros_like(p), np.zeros_like(p)
    b1, b2 = betas
    for t, g in enumerate(grads, start=1):
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g ** 2
        m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
    return p


def run(make_opt, p0, grads, dtype):
    p = Tensor(np.array(p0, dtype=dtype), requires_grad=True)
    data = p.numpy()
    opt = make_opt([p])
    for g in grads:
        p.grad = Tensor(np.array(g, dtype=dtype))
        opt.step()
        opt.zero_grad()
    assert p.numpy() is data, "the update must be in place"
    assert p.dtype == dtype
    return p.numpy()


# name, our optimizer, reference with the same settings
CASES = [
    ("sgd", lambda ps: SGD(ps, lr=0.1), lambda p, gs: ref_sgd(p, gs, 0.1)),
    ("sgd momentum", lambda ps: SGD(ps, lr=0.1, momentum=0.9), lambda p, gs: ref_sgd(p, gs, 0.1, 0.9)),
    ("sgd nesterov", lambda ps: SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
     lambda p, gs: ref_sgd(p, gs, 0.1, 0.9, nesterov=True)),
    ("sgd weight decay", lambda ps: SGD(ps, lr=0.1, momentum=0.5, weight_decay=0.1),
     lambda p, gs: ref_sgd(p, gs, 0.1, 0.5, weight_decay=0.1)),
    ("adam", lambda ps: Adam(ps, lr=0.01), lambda p, gs: ref_adam(p, gs, 0.01)),
    ("adam betas eps", lambda ps: Adam(ps, lr=0.05, betas=(0.8, 0.99), eps=1e-3),
     lambda p, gs: ref_adam(p, gs, 0.05, (0.8, 0.99), 1e-3)),
    ("adam weight decay", lambda ps: Adam(ps, lr=0.01, weight_decay=0.5),
     lambda p, gs: ref_adam(p, gs, 0.01, weight_decay=0.5)),
    ("adamw", lambda ps: AdamW(ps, lr=0.01, weight_decay=0.5),
     lambda p, gs: ref_adam(p, gs, 0.01, weight_decay=0.5, decoupled=True)),
    ("adamw default wd", lambda ps: AdamW(ps, lr=0.1),
     lambda p, gs: ref_adam(p, gs, 0.1, weight_decay=0.01, decoupled=True)),
]


@pytest.mark.parametrize("name, make_opt, ref", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 2e-6)])
def test_update_matches_formula(name, make_opt, ref, dtype, tol):
    p0 = np.random.default_rng(1).standard_normal((3, 4))
    grads = grads_for((3, 4))
    np.testing.assert_allclose(run(make_opt, p0, grads, dtype), ref(p0, grads), rtol=tol, atol=tol)


def test_adam_first_step_is_lr_times_sign():
    """With bias correction, Adam's first step is lr·g/(|g| + eps) ≈ lr·sign(g), whatever the scale of g."""
    p = Tensor(np.zeros(3), requires_grad=True)
    p.grad = Tensor(np.array([1e-3, -5.0, 2e2]))
    Adam([p], lr=0.1).step()
    np.testing.assert_allclose(p.numpy(), [-0.1, 0.1, -0.1], rtol=1e-5)


def test_param_groups_have_own_settings_and_none_grads_are_skipped():
    rng = np.random.default_rng(2)
    w0, b0, frozen0 = rng.standard_normal((2, 3)), rng.standard_normal(3), rng.standard_normal(4)
    w, b, frozen = (Tensor(x.copy(), dtype=np.float64, requires_grad=True) for x in (w0, b0, frozen0))
    opt = AdamW([{"params": [w]}, {"params": [b, frozen], "weight_decay": 0.0, "lr": 0.05}], lr=0.01, weight_decay=0.3)
    assert opt.param_groups[0]["lr"] == 0.01 and opt.param_groups[0]["weight_decay"] == 0.3
    assert opt.param_groups[1]["betas"] == (0.9, 0.999) and opt.param_groups[1]["eps"] == 1e-8
    gw, gb = grads_for((2, 3), seed=3), grads_for((3,), seed=4)
    for t in range(STEPS):
        w.grad, b.grad = Tensor(gw[t]), (Tensor(gb[t]) if t != 1 else None)  # b has no grad at step 1
        opt.step()
        opt.zero_grad()
    np.testing.assert_allclose(w.numpy(), ref_adam(w0, gw, 0.01, weight_decay=0.3, decoupled=True), rtol=1e-12)
    # b skipped step 1 entirely: its own step count and moments see only the other three gradients
    np.testing.assert_allclose(b.numpy(), ref_adam(b0, [gb[0], gb[2], gb[3]], 0.05), rtol=1e-12)
    np.testing.assert_array_equal(frozen.numpy(), frozen0)
    assert id(frozen) not in opt.state and opt.state[id(b)]["step"] == 3


def test_schedule_through_group_lr():
    """A training loop sets group["lr"] each step. An np.float64 lr must not upcast float32 arithmetic:
    the result is bitwise the one a Python float lr gives, and plain SGD is bitwise p − lr·g in float32."""
    p0 = np.random.default_rng(9).standard_normal(64).astype(np.float32) * 1e-2  # small: rounding shows
    grads = [g.astype(np.float32) for g in grads_for((64,))]
    lrs = [0.1, 0.05, 0.02, 0.01]
    results = []                                       # [(with Python float lr, with np.float64 lr)] per optimizer
    for make in (lambda ps: SGD(ps, lr=1.0), lambda ps: SGD(ps, lr=1.0, momentum=0.9), lambda ps: Adam(ps, lr=1.0)):
        results.append([])
        for cast in (float, np.float64):
            p = Tensor(p0.copy(), requires_grad=True)
            opt = make([p])
            for lr, g in zip(lrs, grads):
                opt.param_groups[0]["lr"] = cast(lr)
                p.grad = Tensor(g)
                opt.step()
            assert p.dtype == np.float32
            assert all(v.dtype == np.float32 for v in opt.state[id(p)].values() if isinstance(v, np.ndarray))
            results[-1].append(p.numpy())
    for python_lr, numpy_lr in results:
        np.testing.assert_array_equal(numpy_lr, python_lr)
    ref = p0.copy()
    for lr, g in zip(lrs, grads):
        ref = ref - np.float32(lr) * g                 # float32 throughout
    np.testing.assert_array_equal(results[0][0], ref)


def test_float32_stays_float32_everywhere():
    p = Tensor(np.ones((2, 2), np.float32), requires_grad=True)
    for opt in (SGD([p], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1), Adam([p], lr=0.1, weight_decay=0.1),
                AdamW([p], lr=0.1)):
        for _ in range(2):
            p.grad = Tensor(np.full((2, 2), 0.5, np.float32))
            opt.step()
        assert p.dtype == np.float32
        assert all(v.dtype == np.float32 for v in opt.state[id(p)].values() if isinstance(v, np.ndarray))


def test_step_after_backward_with_shared_readonly_grads():
    """(a + b).sum() may hand a and b one read-only broadcast gradient array; stepping must not write to it."""
    a, b = Tensor([1.0, 2.0], requires_grad=True), Tensor([3.0, 4.0], requires_grad=True)
    (a + b).sum().backward()
    opt = SGD([a, b], lr=0.5, momentum=0.9, weight_decay=0.1)
    opt.step()
    np.testing.assert_allclose(a.numpy(), [1 - 0.5 * (1 + 0.1), 2 - 0.5 * (1 + 0.2)], rtol=1e-6)
    np.testing.assert_allclose(b.numpy(), [3 - 0.5 * (1 + 0.3), 4 - 0.5 * (1 + 0.4)], rtol=1e-6)


# ---------------------------------------------------------------- state dicts

def make_pair(make_opt, seed=5):
    rng = np.random.default_rng(seed)
    ps = [Tensor(rng.standard_normal((3, 2)), requires_grad=True), Tensor(rng.standard_normal(2), requires_grad=True)]
    return ps, make_opt(ps)


def steps(ps, opt, grads):
    for g in grads:
        for p, gi in zip(ps, g):
            p.grad = Tensor(gi)
        opt.step()


@pytest.mark.parametrize("make_opt", [
    lambda ps: SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    lambda ps: Adam(ps, lr=0.01, weight_decay=0.1),
    lambda ps: AdamW([{"params": ps[:1]}, {"params": ps[1:], "weight_decay": 0.0, "lr": 0.003}], lr=0.01),
], ids=["sgd", "adam", "adamw groups"])
def test_state_dict_round_trip_continues_identically(make_opt):
    grads = [grads_for((3, 2), 6, seed=6), grads_for((2,), 6, seed=7)]
    grads = list(zip(*grads))
    ps, opt = make_pair(make_opt)
    steps(ps, opt, grads[:3])
    sd = opt.state_dict()
    saved_params = [p.numpy().copy() for p in ps]
    steps(ps, opt, grads[3:])                       # keeps going: must not change the saved state dict
    ps2, opt2 = make_pair(make_opt, seed=99)
    for p, d in zip(ps2, saved_params):
        p.data[...] = d
    opt2.load_state_dict(sd)
    steps(ps2, opt2, grads[3:])
    for p, p2 in zip(ps, ps2):
        np.testing.assert_array_equal(p.numpy(), p2.numpy())


def test_state_dict_contents():
    ps, opt = make_pair(lambda ps: Adam(ps, lr=0.01))
    steps(ps, opt, list(zip(grads_for((3, 2), 2), grads_for((2,), 2))))
    sd = opt.state_dict()
    assert sd["param_groups"] == [{"lr": 0.01, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0,
                                   "params": [0, 1]}]
    assert sd["state"][0]["step"] == 2 and sd["state"][1]["exp_avg_sq"].shape == (2,)
    assert sd["state"][0]["exp_avg"] is not opt.state[id(ps[0])]["exp_avg"]  # a copy


@pytest.mark.parametrize("mutate, match", [
    (lambda sd: sd["param_groups"].append(dict(sd["param_groups"][0])), "2 parameter groups"),
    (lambda sd: sd["param_groups"][0]["params"].pop(), "group 0 has 1 parameters"),
    (lambda sd: sd["state"][0].update(exp_avg=np.zeros((2, 3))), r"'exp_avg' has shape \(2, 3\).*\(3, 2\)"),
    (lambda sd: sd["state"][0].update(momentum_buffer=np.zeros((3, 2))), "unknown state"),
    (lambda sd: sd["param_groups"][0].pop("betas"), "lacks settings"),
    (lambda sd: sd["param_groups"][0].update(lr=-1.0), "lr must be >= 0"),
    (lambda sd: sd["state"].update({7: {}}), "parameter 7"),
    (lambda sd: sd["state"][1].pop("exp_avg_sq"), r"parameter 1 state lacks \['exp_avg_sq'\]"),
])
def test_load_mismatched_state_is_an_error_and_changes_nothing(mutate, match):
    ps, opt = make_pair(lambda ps: Adam(ps, lr=0.01))
    steps(ps, opt, list(zip(grads_for((3, 2), 2), grads_for((2,), 2))))
    before = opt.state_dict()
    sd = opt.state_dict()
    mutate(sd)
    with pytest.raises(ValueError, match=match):
        opt.load_state_dict(sd)
    after = opt.state_dict()
    assert after["param_groups"] == before["param_groups"]
    for i in before["state"]:
        for k, v in before["state"][i].items():
            np.testing.assert_array_equal(after["state"][i][k], v)


@pytest.mark.parametrize("make, match", [
    (lambda p: SGD([p], lr=-0.1), "lr must be >= 0"),
    (lambda p: SGD([p], lr=0.1, nesterov=True), "nesterov momentum needs momentum > 0"),
    (lambda p: Adam([p], lr=0.1, betas=(0.9, 1.0)), "betas"),
    (lambda p: Adam([{"params": [p], "weight_decay": -1}], lr=0.1), "weight_decay must be >= 0"),
    (lambda p: Adam([{"params": [p], "momentum": 0.9}], lr=0.1), "unknown settings"),
    (lambda p: SGD([p, p], lr=0.1), "more than once"),
    (lambda p: SGD([], lr=0.1), "empty"),
    (lambda p: SGD(p, lr=0.1), "single Tensor"),
    (lambda p: SGD([p.numpy()], lr=0.1), "not a Tensor"),
])
def test_bad_arguments(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make(Tensor(np.ones(2), requires_grad=True))


def test_grad_of_wrong_shape():
    p = Tensor(np.ones(3), requires_grad=True)
    p.grad = Tensor(np.ones(4))
    with pytest.raises(ValueError, match=r"gradient of shape \(4,\) for a parameter of shape \(3,\)"):
        SGD([p], lr=0.1).step()


# ---------------------------------------------------------------- clip_grad_norm

def test_clip_grad_norm_scales_to_max_norm():
    a, b, c = (Tensor(np.zeros(s, np.float32), requires_grad=True) for s in (2, 1, 3))
    a.grad, b.grad = Tensor(np.array([3.0, 4.0], np.float32)), Tensor(np.array([12.0], np.float32))  # ‖g‖ = 13
    total = clip_grad_norm([a, b, c], max_norm=6.5)                        # c has no grad: ignored
    assert isinstance(total, float) and total == pytest.approx(13.0)
    scale = 6.5 / (13 + 1e-6)
    np.testing.assert_allclose(a.grad.numpy(), [3 * scale, 4 * scale], rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), [12 * scale], rtol=1e-6)
    assert a.grad.dtype == np.float32 and c.grad is None
    new_norm = math.sqrt(sum(np.sum(t.grad.numpy().astype(np.float64) ** 2) for t in (a, b)))
    assert new_norm == pytest.approx(6.5, rel=1e-6)


def test_clip_grad_norm_epsilon():
    """The 1e-6 in max_norm/(‖g‖ + 1e-6) shows on tiny gradients: ‖g‖ = 1e-4 clipped to 5e-5 scales by
    0.495, not 0.5."""
    a = Tensor(np.zeros(2), requires_grad=True)
    a.grad = Tensor(np.array([6e-5, 8e-5]))
    assert clip_grad_norm(a, 5e-5) == pytest.approx(1e-4, rel=1e-12)
    np.testing.assert_allclose(a.grad.numpy(), np.array([6e-5, 8e-5]) * (5e-5 / (1e-4 + 1e-6)), rtol=1e-12)


def test_clip_grad_norm_below_max_does_nothing():
    a = Tensor(np.zeros(2), requires_grad=True)
    a.grad = Tensor(np.array([0.6, 0.8]))
    g = a.grad
    assert clip_grad_norm([a], 1.5) == pytest.approx(1.0)
    assert a.grad is g
    np.testing.assert_array_equal(a.grad.numpy(), [0.6, 0.8])


def test_clip_grad_norm_with_shared_gradient():
    """a and b may share one read-only gradient array after backward; each must be scaled exactly once."""
    a, b = Tensor([1.0, 2.0], requires_grad=True), Tensor([3.0, 4.0], requires_grad=True)
    (a + b).sum().backward()                                               # every grad entry is 1, ‖g‖ = 2
    assert clip_grad_norm([a, b], 1.0) == pytest.approx(2.0)
    np.testing.assert_allclose(a.grad.numpy(), [0.5, 0.5], rtol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), [0.5, 0.5], rtol=1e-5)


# ---------------------------------------------------------------- cosine_schedule

MAX, MIN, WARM, TOTAL = 1e-3, 1e-4, 10, 110


@pytest.mark.parametrize("step, expected", [
    (0, MAX * 1 / WARM),                                   # warmup starts near 0
    (4, MAX * 5 / WARM),
    (WARM - 1, MAX),                                       # warmup ends at max_lr
    (WARM, MAX),                                           # decay starts at max_lr
    (WARM + 25, MIN + 0.5 * (1 + math.cos(math.pi / 4)) * (MAX - MIN)),
    (60, (MAX + MIN) / 2),                                 # midpoint of the decay
    (TOTAL, MIN),                                          # end
    (TOTAL + 50, MIN),                                     # after the end
])
def test_cosine_schedule(step, expected):
    assert cosine_schedule(step, MAX, WARM, TOTAL, MIN) == pytest.approx(expected, rel=1e-12, abs=1e-18)


def test_cosine_schedule_no_warmup_and_default_min():
    assert cosine_schedule(0, 2.0, 0, 100) == 2.0
    assert cosine_schedule(50, 2.0, 0, 100) == pytest.approx(1.0)
    assert cosine_schedule(100, 2.0, 0, 100) == 0.0
    with pytest.raises(ValueError, match="warmup_steps < total_steps"):
        cosine_schedule(0, 1.0, 10, 10)


# ---------------------------------------------------------------- optional: PyTorch itself

def test_matches_torch_if_installed():
    torch = pytest.importorskip("torch")
    p0 = np.random.default_rng(8).standard_normal((3, 4)).astype(np.float32)
    grads = [g.astype(np.float32) for g in grads_for((3, 4))]
    pairs = [
        (lambda ps: SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1),
         lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
        (lambda ps: Adam(ps, lr=0.01, weight_decay=0.1), lambda ps: torch.optim.Adam(ps, lr=0.01, weight_decay=0.1)),
        (lambda ps: AdamW(ps, lr=0.01), lambda ps: torch.optim.AdamW(ps, lr=0.01)),
    ]
    for ours, theirs in pairs:
        tp = torch.tensor(p0.copy(), requires_grad=True)
        topt = theirs([tp])
        for g in grads:
            tp.grad = torch.tensor(g)
            topt.step()
        np.testing.assert_allclose(run(ours, p0, grads, np.float32), tp.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_adam_updates_a_group_as_one_flat_array_and_matches_per_parameter_formulas():
    """The flat group step equals the per-parameter formula for every parameter, also when one of them
    skips a step (its step count then differs, and the group falls back to one-by-one updates)."""
    rng = np.random.default_rng(3)
    shapes = [(3, 4), (4,), (2, 2, 2)]
    start = [rng.standard_normal(s) for s in shapes]
    grads = [[rng.standard_normal(s) for _ in range(5)] for s in shapes]
    grads[1][2] = None                                     # parameter 1 has no gradient at step 2
    params = [Tensor(a.copy(), requires_grad=True) for a in start]
    opt = AdamW(params, lr=0.05, weight_decay=0.1)
    for t in range(5):
        for p, gs in zip(params, grads):
            p.grad = None if gs[t] is None else Tensor(gs[t])
        opt.step()
    for p, a, gs in zip(params, start, grads):
        expected = ref_adam(a, [g for g in gs if g is not None], lr=0.05, weight_decay=0.1, decoupled=True)
        np.testing.assert_allclose(p.numpy(), expected, rtol=1e-12, atol=1e-12)
    state = opt.state[id(params[0])]
    assert state["exp_avg"].base is not None               # a view of the group's flat buffer
    assert opt.state_dict()["state"][0]["exp_avg"].shape == (3, 4)


@pytest.mark.parametrize("decoupled, wd", [(True, 0.01), (False, 0.1), (False, 0.0)])
def test_the_fast_paths_adam_in_pieces_equals_the_plain_one_bit_for_bit(decoupled, wd):
    """tinygrad_like/fast/adam.py runs nn.optim's arithmetic in cache-sized pieces; with arrays of several
    pieces (65,536 elements each) every element is the same, for one parameter and for a group."""
    from nn import optim
    from tinygrad_like.fast import adam
    rng = np.random.default_rng(7)
    n = 3 * (1 << 16) + 123
    p, g, m, v = (rng.standard_normal(n).astype(np.float32) for _ in range(4))
    v = np.abs(v)
    a, b = [x.copy() for x in (p, m, v)], [x.copy() for x in (p, m, v)]
    optim.adam_update(a[0], g, a[1], a[2], 1e-3, 0.9, 0.999, 1e-8, wd, decoupled, 3)
    adam.adam_update(b[0], g, b[1], b[2], 1e-3, 0.9, 0.999, 1e-8, wd, decoupled, 3)
    for x, y in zip(a, b):
        assert np.array_equal(x, y)
    assert not np.array_equal(a[0], p)                                   # it did update
    params = [rng.standard_normal(s).astype(np.float32) for s in ((300, 400), (70_000,))]
    grads = [rng.standard_normal(q.shape).astype(np.float32) for q in params]
    size = sum(q.size for q in params)
    plain = ([q.copy() for q in params], np.zeros(size, np.float32), np.zeros(size, np.float32))
    fast = ([q.copy() for q in params], np.zeros(size, np.float32), np.zeros(size, np.float32))
    optim.adam_group(plain[0], grads, plain[1], plain[2], 1e-3, 0.9, 0.999, 1e-8, wd, decoupled, 1)
    adam.adam_group(fast[0], grads, fast[1], fast[2], 1e-3, 0.9, 0.999, 1e-8, wd, decoupled, 1)
    for x, y in zip(plain[0] + [plain[1], plain[2]], fast[0] + [fast[1], fast[2]]):
        assert np.array_equal(x, y)


def test_adam_reaches_the_fast_path_only_through_dispatch():
    from tinygrad_like import dispatch, fast
    from tinygrad_like.fast import adam
    assert dispatch.kernel("adam_update", None) is adam.run_update
    assert dispatch.kernel("adam_group", None) is adam.run_group
    with fast.enabled(False):
        assert dispatch.kernel("adam_update", "plain") == "plain"


# ---------------------------------------------------------------- clip_grad_norm's fast squared norms

NORM_SIZES = [*range(0, 140), 255, 256, 257, 1000, 1023, 1024, 1025, 8191, 8192, 8193, 65536, 65537, 100003]


def _grad_norm_kernel():
    from tinygrad_like.fast import grad_norm
    if grad_norm.library() is None:
        pytest.skip(f"no C kernel for the gradient norm here: {grad_norm.reason()}")
    return grad_norm


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_squares_sums_kernel_has_numpys_bits(dtype):
    """grad_norm.c sums the squares in numpy's pairwise order (8 interleaved sums per block of up to 128,
    halves split at multiples of 8), so every sum equals np.sum(np.square(a, dtype=np.float64)) bit for bit:
    sizes on both sides of 8, 128 and the halvings, values spread over ten decades (float64 squares round,
    and a fused multiply-add would show), subnormals, zeros of both signs, inf, nan and overflow."""
    from nn.optim import squares_sums
    grad_norm = _grad_norm_kernel()
    rng = np.random.default_rng(11)
    for n in NORM_SIZES:
        a = (rng.standard_normal(n) * 10.0 ** rng.integers(-5, 5, n)).astype(dtype)
        assert grad_norm.squares_sums([a]) == squares_sums([a]), n
    tiny = np.finfo(dtype).tiny
    specials = [np.array([tiny / 4, -tiny / 2, 0.0, -0.0] * 5, dtype), np.full(300, np.finfo(dtype).max / 2, dtype),
                np.array([1.0, np.inf, 2.0] * 40, dtype), np.array([np.nan] + [1.0] * 200, dtype),
                rng.standard_normal((384, 128)).astype(dtype), rng.standard_normal((2, 3, 5)).astype(dtype)]
    for a in specials:                                          # the same bits and the same warnings (overflow)
        said = {}
        for name, fn in (("plain", squares_sums), ("kernel", grad_norm.squares_sums)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                said[name] = np.array(fn([a])).tobytes(), [str(w.message) for w in caught]
        assert said["kernel"] == said["plain"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        overflowed = grad_norm.squares_sums([specials[1]])
    assert (overflowed == [np.inf]) == (dtype == np.float64) == bool(caught)   # a float32 square never overflows


def test_clip_grad_norm_with_the_kernel_equals_the_plain_loop():
    """clip_grad_norm with the fast path on and off: the same total and the same clipped gradients (bits), over
    nanoGPT's parameter shapes in float32 and a few float64 ones; a broadcast (not C-contiguous) gradient and an
    integer-free mix go through the plain line inside the fast function too."""
    from tinygrad_like import dispatch, fast
    grad_norm = _grad_norm_kernel()
    assert dispatch.KERNELS["squares_sums"] is grad_norm.squares_sums
    rng = np.random.default_rng(12)
    shapes = [(65, 128), (64, 128), (128,), (384, 128), (128, 128), (512, 128), (128, 512), (7,)]
    grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads += [rng.standard_normal((33, 17)), np.broadcast_to(np.float32(0.5), (40, 30))]
    results = {}
    for on in (False, True):
        params = [Tensor(np.zeros(g.shape, g.dtype), requires_grad=True) for g in grads]
        for p, g in zip(params, grads):
            p.grad = Tensor(g)
        with fast.enabled(on):
            total = clip_grad_norm(params, 1.0)
        results[on] = total, [p.grad.numpy().tobytes() for p in params]
    assert results[True] == results[False] and results[True][0] > 1.0


def test_squares_sums_kernel_is_off_with_the_kernels(monkeypatch):
    """TINYGRAD_LIKE_KERNELS=off runs numpy's line, the library untouched (it may not even build)."""
    from tinygrad_like.fast import grad_norm
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", "off")
    monkeypatch.setattr(grad_norm, "library", lambda: (_ for _ in ()).throw(AssertionError("library asked for")))
    a = np.arange(10, dtype=np.float32)
    assert grad_norm.squares_sums([a]) == [285.0]
