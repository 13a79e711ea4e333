"""The losses and distances of torch.nn and torch.nn.functional added for issue 26, through the facade:
value and every input's gradient against PyTorch on the same float64 inputs, for each reduction (skipped
without PyTorch); the modules against their functions; PyTorch's deprecated size_average/reduce; extreme
inputs without numpy warnings; known answers from math; and the errors for bad shapes.
"""
import math
import warnings

import numpy as np
import pytest

import tinygrad_like.torch as tl

tF = tl.nn.functional
rng = np.random.default_rng(0)
A, B, C = rng.standard_normal((3, 4, 5))                      # three (4, 5) inputs
V = rng.uniform(0.1, 2.0, (4, 5))                             # positive: variances, rates
P = rng.dirichlet(np.ones(5), 4)                              # rows of probabilities
P0 = P.copy()
P0[0, 1] = 0.0                                                # a zero probability: kl_div's limit
SIGNS = np.array([1.0, -1.0, 1.0, -1.0])
SIGNS45 = np.where(rng.standard_normal((4, 5)) > 0, 1.0, -1.0)
LABELS = np.array([2, 0, 4, 1])
MULTILABEL = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [4, -1, 0, 0, 0], [-1, 1, 2, 3, 4]])
COUNTS = np.floor(V * 3)                                       # Poisson counts 0..5
W5 = np.array([0.5, 1.0, 2.0, 0.1, 3.0])
W45 = rng.uniform(0, 2, (4, 5))

# (id, inputs: {name: (array, differentiable)}, call(F, **tensors)) — the same call runs on both sides
CASES = [
    ("l1_loss", dict(x=(A, 1), y=(B, 1)), lambda F, x, y, r: F.l1_loss(x, y, reduction=r)),
    ("l1_loss weight", dict(x=(A, 1), y=(B, 0), w=(W45, 0)),
     lambda F, x, y, w, r: F.l1_loss(x, y, reduction=r, weight=w)),
    ("huber_loss weight", dict(x=(A, 1), y=(B, 0), w=(W45, 0)),
     lambda F, x, y, w, r: F.huber_loss(x, y, reduction=r, weight=w)),
    ("mse_loss weight", dict(x=(A, 1), y=(B, 1), w=(W45, 0)),
     lambda F, x, y, w, r: F.mse_loss(x, y, reduction=r, weight=w)),
    ("smooth_l1_loss", dict(x=(A, 1), y=(B, 1)), lambda F, x, y, r: F.smooth_l1_loss(x, y, reduction=r, beta=0.7)),
    ("smooth_l1_loss beta0", dict(x=(A, 1), y=(B, 1)), lambda F, x, y, r: F.smooth_l1_loss(x, y, reduction=r, beta=0)),
    ("huber_loss", dict(x=(A, 1), y=(B, 1)), lambda F, x, y, r: F.huber_loss(x, y, reduction=r, delta=0.7)),
    # at target 0 the target's gradient is log 0 = −∞; PyTorch gives NaN there, we 0: compared where target > 0
    ("kl_div", dict(x=(np.log(P), 1), y=(P, 1)), lambda F, x, y, r: F.kl_div(x, y, reduction=r)),
    ("kl_div zero target", dict(x=(np.log(P), 1), y=(P0, 0)), lambda F, x, y, r: F.kl_div(x, y, reduction=r)),
    ("kl_div log_target", dict(x=(np.log(P), 1), y=(A, 1)),
     lambda F, x, y, r: F.kl_div(x, y, reduction=r, log_target=True)),
    ("gaussian_nll_loss", dict(x=(A, 1), y=(B, 1), v=(V, 1)),
     lambda F, x, y, v, r: F.gaussian_nll_loss(x, y, v, reduction=r)),
    ("gaussian_nll_loss full row-var", dict(x=(A, 1), y=(B, 1), v=(V[:, 0] * 1e-7, 1)),
     lambda F, x, y, v, r: F.gaussian_nll_loss(x, y, v, full=True, reduction=r)),
    ("poisson_nll_loss", dict(x=(A, 1), y=(COUNTS, 0)), lambda F, x, y, r: F.poisson_nll_loss(x, y, reduction=r)),
    ("poisson_nll_loss rate full", dict(x=(V, 1), y=(COUNTS + 1.5, 1)),
     lambda F, x, y, r: F.poisson_nll_loss(x, y, log_input=False, full=True, reduction=r)),
    # PyTorch's target gradient is NaN where target = 0 (0·log 0 before its mask); ours is 0, the masked term's
    ("poisson_nll_loss rate full zero counts", dict(x=(V, 1), y=(COUNTS, 0)),
     lambda F, x, y, r: F.poisson_nll_loss(x, y, log_input=False, full=True, reduction=r)),
    ("margin_ranking_loss", dict(a=(A[:, 0], 1), b=(B[:, 0], 1), y=(SIGNS, 0)),
     lambda F, a, b, y, r: F.margin_ranking_loss(a, b, y, margin=0.3, reduction=r)),
    ("hinge_embedding_loss", dict(x=(V, 1), y=(SIGNS45, 0)),
     lambda F, x, y, r: F.hinge_embedding_loss(x, y, margin=1.2, reduction=r)),
    ("cosine_embedding_loss", dict(a=(A, 1), b=(B, 1), y=(SIGNS, 0)),
     lambda F, a, b, y, r: F.cosine_embedding_loss(a, b, y, margin=-0.2, reduction=r)),
    ("soft_margin_loss", dict(x=(A * 30, 1), y=(SIGNS45, 0)), lambda F, x, y, r: F.soft_margin_loss(x, y, reduction=r)),
    ("multilabel_soft_margin_loss", dict(x=(A * 30, 1), y=((SIGNS45 + 1) / 2, 0), w=(W5, 0)),
     lambda F, x, y, w, r: F.multilabel_soft_margin_loss(x, y, weight=w, reduction=r)),
    ("multilabel_margin_loss", dict(x=(A, 1), y=(MULTILABEL, 0)),
     lambda F, x, y, r: F.multilabel_margin_loss(x, y, reduction=r)),
    ("multi_margin_loss", dict(x=(A, 1), y=(LABELS, 0)), lambda F, x, y, r: F.multi_margin_loss(x, y, reduction=r)),
    ("multi_margin_loss p2 weight", dict(x=(A, 1), y=(LABELS, 0), w=(W5, 0)),
     lambda F, x, y, w, r: F.multi_margin_loss(x, y, p=2, margin=0.5, weight=w, reduction=r)),
    ("triplet_margin_loss", dict(a=(A, 1), p=(B, 1), n=(C, 1)),
     lambda F, a, p, n, r: F.triplet_margin_loss(a, p, n, margin=2.0, reduction=r)),
    ("triplet_margin_loss p1 swap", dict(a=(A, 1), p=(B, 1), n=(A + 0.1 * C, 1)),
     lambda F, a, p, n, r: F.triplet_margin_loss(a, p, n, p=1, swap=True, reduction=r)),
    ("triplet_margin_with_distance_loss", dict(a=(A, 1), p=(B, 1), n=(C, 1)),
     lambda F, a, p, n, r: F.triplet_margin_with_distance_loss(
         a, p, n, distance_function=lambda u, v: 1 - F.cosine_similarity(u, v), margin=0.5, reduction=r)),
    ("nll_loss weight", dict(x=(A, 1), y=(LABELS, 0), w=(W5, 0)),
     lambda F, x, y, w, r: F.nll_loss(F.log_softmax(x, dim=1), y, weight=w, reduction=r)),
    ("nll_loss weight ignore 4d", dict(x=(rng.standard_normal((2, 5, 3, 2)), 1), y=(np.array(
        [[[1, 4], [-100, 0], [2, 2]], [[3, 3], [0, -100], [1, 4]]]), 0), w=(W5, 0)),
     lambda F, x, y, w, r: F.nll_loss(x, y, weight=w, reduction=r)),
    ("cross_entropy weight smoothing", dict(x=(A, 1), y=(np.array([2, -100, 4, 1]), 0), w=(W5, 0)),
     lambda F, x, y, w, r: F.cross_entropy(x, y, weight=w, label_smoothing=0.2, reduction=r)),
    ("cross_entropy weight probabilities", dict(x=(A, 1), y=(P, 0), w=(W5, 0)),
     lambda F, x, y, w, r: F.cross_entropy(x, y, weight=w, label_smoothing=0.1, reduction=r)),
    ("bce_with_logits pos_weight extreme", dict(x=(A * 1e4, 1), y=((SIGNS45 + 1) / 2, 1), w=(W5, 0)),
     lambda F, x, y, w, r: F.binary_cross_entropy_with_logits(x, y, pos_weight=w, reduction=r)),
]
DISTANCES = [
    ("cosine_similarity", dict(a=(A, 1), b=(B[:1], 1)), lambda F, a, b: F.cosine_similarity(a, b)),
    ("cosine_similarity zero", dict(a=(np.zeros((2, 3)), 1), b=(B[:2, :3], 1)),
     lambda F, a, b: F.cosine_similarity(a, b, dim=-1)),
    ("pairwise_distance", dict(a=(A, 1), b=(B, 1)), lambda F, a, b: F.pairwise_distance(a, b)),
    ("pairwise_distance p3 keepdim", dict(a=(A, 1), b=(B, 1)),
     lambda F, a, b: F.pairwise_distance(a, b, 3, keepdim=True)),
    ("pairwise_distance inf", dict(a=(A, 1), b=(B, 1)), lambda F, a, b: F.pairwise_distance(a, b, float("inf"))),
    ("pdist", dict(a=(A, 1)), lambda F, a: F.pdist(a)),
    ("pdist p1.5", dict(a=(A, 1)), lambda F, a: F.pdist(a, 1.5)),
]


def run_both(torch, inputs, call, *extra):
    """(ours, theirs, our tensors, their tensors): call on the facade and on PyTorch."""
    theirs_t = {k: torch.tensor(a, requires_grad=bool(d) and a.dtype.kind == "f") for k, (a, d) in inputs.items()}
    ours_t = {k: tl.tensor(a, requires_grad=bool(d) and a.dtype.kind == "f") for k, (a, d) in inputs.items()}
    theirs = call(torch.nn.functional, **theirs_t, **({"r": extra[0]} if extra else {}))
    with warnings.catch_warnings(), np.errstate(over="raise", divide="raise", invalid="raise"):
        warnings.simplefilter("error")
        ours = call(tF, **ours_t, **({"r": extra[0]} if extra else {}))
        seed = np.linspace(0.5, 1.5, max(ours.numel(), 1)).reshape(ours.shape)
        ours.backward(tl.tensor(seed))
    theirs.backward(torch.tensor(seed))
    return ours, theirs, ours_t, theirs_t


def assert_same(ours, theirs, ours_t, theirs_t, rtol=1e-10):
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=rtol, atol=1e-12)
    for k, t in theirs_t.items():
        if t.requires_grad:
            np.testing.assert_allclose(ours_t[k].grad.numpy(), t.grad.numpy(), rtol=rtol, atol=1e-12, err_msg=k)


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss")    # PyTorch's, about kl_div
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name, inputs, call", CASES, ids=[c[0] for c in CASES])
def test_loss_and_gradients_match_pytorch(name, inputs, call, reduction):
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    assert_same(*run_both(torch, inputs, call, reduction))


@pytest.mark.parametrize("name, inputs, call", DISTANCES, ids=[c[0] for c in DISTANCES])
def test_distances_and_gradients_match_pytorch(name, inputs, call):
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    assert_same(*run_both(torch, inputs, call))


def test_kl_div_batchmean_is_the_kl_divergence_of_each_row_averaged():
    p, q = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]), np.array([[0.25, 0.25, 0.5], [0.2, 0.3, 0.5]])
    expected = (0.5 * math.log(2) * 2 + 0) / 2                          # KL(p‖q) of each row, averaged
    ours = tF.kl_div(tl.tensor(np.log(q)), tl.tensor(p), reduction="batchmean")
    assert ours.item() == pytest.approx(expected, rel=1e-6)
    assert tl.nn.KLDivLoss(reduction="batchmean")(tl.tensor(np.log(q)), tl.tensor(p)).item() == pytest.approx(expected)


def test_known_answers_from_math():
    x, y = tl.tensor([0.0, 3.0]), tl.tensor([0.5, 0.0])
    assert tF.huber_loss(x, y, reduction="none").tolist() == [0.125, 2.5]               # ½d² inside, δ(|d| − δ/2)
    assert tF.smooth_l1_loss(x, y, reduction="none", beta=2.0).tolist() == [0.0625, 2.0]
    assert tF.l1_loss(x, y).item() == 1.75
    assert tF.margin_ranking_loss(tl.tensor([1.0]), tl.tensor([2.0]), tl.tensor([1.0]), margin=0.5).item() == 1.5
    assert tF.soft_margin_loss(tl.tensor([0.0]), tl.tensor([1.0])).item() == pytest.approx(math.log(2))
    assert tF.gaussian_nll_loss(tl.tensor([1.0]), tl.tensor([1.0]), tl.tensor([1.0]), full=True).item() == \
        pytest.approx(0.5 * math.log(2 * math.pi))                                    # −log N(0; 0, 1)
    assert tF.poisson_nll_loss(tl.tensor([0.0]), tl.tensor([2.0])).item() == 1.0       # e^0 − 2·0
    assert tF.pdist(tl.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])).tolist() == pytest.approx([5.0, 1.0, 3 * 2 ** 0.5])
    assert tF.pdist(tl.tensor([[0.0, 1.0], [0.0, 2.0]]), 0).tolist() == [1.0]
    assert tF.cosine_similarity(tl.tensor([[1.0, 0.0]]), tl.tensor([[0.0, 2.0], [3.0, 0.0]])).tolist() == [0.0, 1.0]
    assert tF.multi_margin_loss(tl.tensor([[0.0, 1.0, 0.5]]), tl.tensor([1])).item() == pytest.approx(0.5 / 3)
    # targets 0 and 3 (then −1): pairs (0, 1), (0, 2), (3, 1), (3, 2) of 1 − x[j] + x[i], over 4 classes
    assert tF.multilabel_margin_loss(tl.tensor([0.1, 0.2, 0.4, 0.8]), tl.tensor([3, 0, -1, 1])).item() == \
        pytest.approx((1.1 + 1.3 + 0.4 + 0.6) / 4)


def test_extreme_logits_stay_finite_and_exact():
    big = tl.tensor([1e4, -1e4, 800.0], requires_grad=True)
    with warnings.catch_warnings(), np.errstate(over="raise", divide="raise", invalid="raise"):
        warnings.simplefilter("error")
        loss = tF.soft_margin_loss(big, tl.tensor([-1.0, 1.0, 1.0]), reduction="none")
        loss.sum().backward()
        logsig = tF.logsigmoid(big)
    assert loss.tolist() == [1e4, 1e4, 0.0] and big.grad.tolist() == [1.0, -1.0, 0.0]
    assert logsig.tolist() == [0.0, -1e4, 0.0]


def test_loss_modules_call_their_functions_with_pytorchs_arguments():
    x, y = tl.tensor(A), tl.tensor(B)
    nn = tl.nn
    assert nn.L1Loss(reduction="sum")(x, y).item() == tF.l1_loss(x, y, reduction="sum").item()
    assert nn.L1Loss(size_average=False)(x, y).item() == tF.l1_loss(x, y, reduction="sum").item()  # PyTorch's old pair
    assert nn.MSELoss(reduce=False)(x, y).shape == (4, 5)
    assert tF.mse_loss(x, y, False).item() == nn.MSELoss(reduction="sum")(x, y).item() == ((A - B) ** 2).sum()
    assert nn.SmoothL1Loss(beta=0.5)(x, y).item() == tF.smooth_l1_loss(x, y, beta=0.5).item()
    assert nn.HuberLoss(delta=0.5)(x, y).item() == tF.huber_loss(x, y, delta=0.5).item()
    var = tl.tensor(V)
    assert nn.GaussianNLLLoss(full=True)(x, y, var).item() == tF.gaussian_nll_loss(x, y, var, True).item()
    assert nn.PoissonNLLLoss()(x, tl.tensor(COUNTS)).item() == tF.poisson_nll_loss(x, tl.tensor(COUNTS)).item()
    labels, w = tl.tensor(LABELS), tl.tensor(W5)
    assert nn.NLLLoss(w)(x.log_softmax(1), labels).item() == tF.nll_loss(x.log_softmax(1), labels, w).item()
    assert nn.NLLLoss2d is nn.NLLLoss
    assert nn.CrossEntropyLoss(w, label_smoothing=0.1)(x, labels).item() == tF.cross_entropy(
        x, labels, w, label_smoothing=0.1).item()
    assert nn.CrossEntropyLoss(reduction="none")(x, labels).shape == (4,)
    probs, s = tl.tensor(P), tl.tensor(SIGNS)
    assert nn.BCELoss(reduction="sum")(probs, probs).item() == tF.binary_cross_entropy(probs, probs,
                                                                                      reduction="sum").item()
    assert nn.BCEWithLogitsLoss(pos_weight=w)(x, probs).item() == tF.binary_cross_entropy_with_logits(
        x, probs, pos_weight=w).item()
    x0, y0 = x[:, 0], y[:, 0]
    assert nn.MarginRankingLoss(0.2)(x0, y0, s).item() == tF.margin_ranking_loss(x0, y0, s, 0.2).item()
    assert nn.CosineEmbeddingLoss(0.1)(x, y, s).item() == tF.cosine_embedding_loss(x, y, s, 0.1).item()
    assert nn.TripletMarginLoss(p=1.0, swap=True)(x, y, x * 2).item() == tF.triplet_margin_loss(
        x, y, x * 2, p=1.0, swap=True).item()
    assert nn.MultiMarginLoss(p=2)(x, labels).item() == tF.multi_margin_loss(x, labels, p=2).item()
    assert nn.CosineSimilarity(dim=0)(x, y).shape == (5,) and nn.PairwiseDistance(keepdim=True)(x, y).shape == (4, 1)
    assert repr(nn.L1Loss(reduction="none")) == "L1Loss(reduction='none')"


def test_loss_errors_name_the_op_and_the_shapes():
    x = tl.zeros(4, 5)
    with pytest.raises(ValueError, match="l1_loss: input \\(4, 5\\) and target \\(5,\\) must have the same shape"):
        tF.l1_loss(x, tl.zeros(5))
    with pytest.raises(ValueError, match="huber_loss: reduction must be 'mean', 'sum' or 'none', got 'avg'"):
        tF.huber_loss(x, x, reduction="avg")
    with pytest.raises(ValueError, match="gaussian_nll_loss: var has a negative entry"):
        tF.gaussian_nll_loss(x, x, -tl.ones(4, 5))
    with pytest.raises(ValueError, match="gaussian_nll_loss: var \\(3,\\) must have input's shape"):
        tF.gaussian_nll_loss(x, x, tl.ones(3))
    with pytest.raises(ValueError, match="nll_loss: weight \\(3,\\) must hold one weight per class \\(5,\\)"):
        tF.nll_loss(x, tl.tensor(LABELS), weight=tl.ones(3))
    with pytest.raises(ValueError, match="multi_margin_loss: p must be 1 or 2"):
        tF.multi_margin_loss(x, tl.tensor(LABELS), p=3)
    with pytest.raises(IndexError, match="multi_margin_loss: target 7 is outside \\[0, 5\\)"):
        tF.multi_margin_loss(x, tl.tensor([7, 0, 0, 0]))
    with pytest.raises(ValueError, match="triplet_margin_loss: anchor \\(4, 5\\), positive \\(4, 5\\) and negative"):
        tF.triplet_margin_loss(x, x, tl.zeros(3, 5))
    with pytest.raises(ValueError, match="cosine_similarity: x1 \\(4, 5\\) and x2 \\(3, 5\\) do not broadcast"):
        tF.cosine_similarity(x, tl.zeros(3, 5))
    with pytest.raises(ValueError, match="pdist: input must be a matrix"):
        tF.pdist(tl.zeros(5))
    with pytest.raises(ValueError, match="margin_ranking_loss: input1 \\(4,\\), input2 \\(4,\\) and target \\(3,\\)"):
        tF.margin_ranking_loss(tl.zeros(4), tl.zeros(4), tl.zeros(3))
