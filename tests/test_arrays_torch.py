"""Issue 26's linear algebra, indexing, shapes and statistics surface, against PyTorch itself: each row is one
call written once, as a function of the `torch` module it runs on, and run on real PyTorch and on
tinygrad_like.torch with the same float64 inputs; values, dtypes and shapes must agree. Gradients:
tests/test_arrays_gradcheck.py; errors and the cases PyTorch is not needed for: tests/test_arrays.py."""
import numpy as np
import pytest

import tinygrad_like.torch as facade

pytestmark = pytest.mark.filterwarnings("ignore:.*(deprecated|chain_matmul).*:UserWarning")

torch = pytest.importorskip("torch", reason="compares each name with PyTorch's own")

RNG = np.random.default_rng(26)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4, 5))
V3 = RNG.standard_normal((2, 3))
W3 = RNG.standard_normal((2, 3))
C = RNG.standard_normal((2, 3, 4))
D = RNG.standard_normal((2, 4, 5))
U = RNG.standard_normal(4)
S = RNG.standard_normal((3, 3))
TIES = np.array([[1.0, 3, 3, 2, 3, 1], [2, 2, 1, 1, 5, 5], [0, 0, 0, 0, 0, 0]])

SAME = {
    # linear algebra
    "mm": lambda T, t: T.mm(t(A), t(B)),
    "mv": lambda T, t: T.mv(t(A), t(U)),
    "addmm": lambda T, t: T.addmm(t(U[:1]), t(A), t(B[:, :1]), beta=0.5, alpha=2),
    "addmm_beta0_ignores_nan": lambda T, t: T.addmm(t(np.full((3, 5), np.nan)), t(A), t(B), beta=0),
    "addmv": lambda T, t: T.addmv(t(A[:, 0]), t(A), t(U), alpha=-1),
    "addr": lambda T, t: T.addr(t(A), t(A[:, 1]), t(U), beta=2),
    "baddbmm": lambda T, t: T.baddbmm(t(U[:1]), t(C), t(D), alpha=0.5),
    "addbmm": lambda T, t: T.addbmm(t(np.ones((3, 5))), t(C), t(D)),
    "Tensor.addmm_": lambda T, t: t(np.zeros((3, 5))).addmm_(t(A), t(B), beta=3, alpha=0.25),
    "inner": lambda T, t: T.inner(t(C), t(A)),
    "inner_0d": lambda T, t: T.inner(t(np.array(2.5)), t(A)),
    "vdot": lambda T, t: T.vdot(t(U), t(A[0])),
    "kron": lambda T, t: T.kron(t(A), t(S[:2])),
    "kron_ranks": lambda T, t: T.kron(t(C), t(U)),
    "cross": lambda T, t: T.cross(t(V3), t(W3), dim=1),
    "cross_broadcast": lambda T, t: T.cross(t(V3), t(W3[:1]), dim=-1),
    "cross_default_dim": lambda T, t: T.cross(t(S), t(S.T)),
    "tensordot": lambda T, t: T.tensordot(t(C), t(D), dims=([0, 2], [0, 1])),
    "tensordot_int": lambda T, t: T.tensordot(t(C), t(B), dims=1),
    "tensordot_0": lambda T, t: T.tensordot(t(U), t(A), dims=0),
    "chain_matmul": lambda T, t: T.chain_matmul(t(A), t(B), t(B.T)),
    "trace": lambda T, t: T.trace(t(A)),
    "adjoint": lambda T, t: T.adjoint(t(C)),
    "Tensor.mH": lambda T, t: t(C).mH,
    "Tensor.H": lambda T, t: t(A).H,
    "diag": lambda T, t: T.diag(t(U), -1),
    "diagonal": lambda T, t: T.diagonal(t(C), 1, 2, 0),
    "diagflat": lambda T, t: T.diagflat(t(A[:2, :2]), 2),
    "diag_embed": lambda T, t: T.diag_embed(t(A)),
    "block_diag": lambda T, t: T.block_diag(t(A), t(np.array(5.0)), t(U)),
    "cdist": lambda T, t: T.cdist(t(C), t(C[:, :2] + 1)),
    "cdist_p1": lambda T, t: T.cdist(t(A), t(A), p=1),
    "cdist_p0.5": lambda T, t: T.cdist(t(A), t(A[::-1]), p=0.5),
    "cdist_p0": lambda T, t: T.cdist(t(A), t(np.round(A)), p=0),
    "cdist_pinf": lambda T, t: T.cdist(t(A), t(A[::-1]), p=float("inf")),
    "dist": lambda T, t: T.dist(t(A), t(A[0])),
    "dist_p3": lambda T, t: T.dist(t(A), t(A[0]), 3),
    "vander": lambda T, t: T.vander(t(U)),
    "vander_N_increasing": lambda T, t: T.vander(t(np.array([0.0, 2, -1])), N=5, increasing=True),
    "vander_int": lambda T, t: T.vander(t(np.array([1, 2, 3]))),
    "cartesian_prod": lambda T, t: T.cartesian_prod(t(U[:2]), t(U), t(U[:3])),
    "combinations": lambda T, t: T.combinations(t(U), 3),
    "combinations_repl": lambda T, t: T.combinations(t(U[:3]), with_replacement=True),
    "combinations_too_many": lambda T, t: T.combinations(t(U[:2]), 3),
    "tril_indices": lambda T, t: T.tril_indices(4, 3, -1),
    "triu_indices": lambda T, t: T.triu_indices(3, 5, 1),
    # shapes
    "broadcast_to": lambda T, t: T.broadcast_to(t(U), (3, 4)),
    "broadcast_tensors": lambda T, t: T.broadcast_tensors(t(U), t(A[:, :1]), t(np.array(1.0))),
    "meshgrid_ij": lambda T, t: T.meshgrid(t(U), t(U[:3]), indexing="ij"),
    "meshgrid_xy": lambda T, t: T.meshgrid(t(U), t(U[:3]), t(U[:2]), indexing="xy"),
    "atleast_1d": lambda T, t: T.atleast_1d(t(np.array(3.0))),
    "atleast_2d": lambda T, t: T.atleast_2d(t(U), t(np.array(1.0)), t(C)),
    "atleast_3d": lambda T, t: T.atleast_3d([t(U), t(A), t(np.array(2.0))]),
    "hstack": lambda T, t: T.hstack([t(A), t(A[:, :1])]),
    "hstack_vectors": lambda T, t: T.hstack((t(U), t(U[:2]))),
    "vstack": lambda T, t: T.vstack([t(A), t(U)]),
    "row_stack": lambda T, t: T.row_stack([t(U), t(U)]),
    "dstack": lambda T, t: T.dstack([t(A), t(A)]),
    "column_stack": lambda T, t: T.column_stack([t(U), t(A.T), t(U)]),
    "tensor_split_int": lambda T, t: T.tensor_split(t(np.arange(7.0)), 3),
    "tensor_split_indices": lambda T, t: T.tensor_split(t(A), [1, 6], dim=1),
    "tensor_split_tensor": lambda T, t: T.tensor_split(t(A), t(np.array([-1])), dim=0),
    "hsplit": lambda T, t: T.hsplit(t(A), 2),
    "hsplit_vector": lambda T, t: T.hsplit(t(U), [1, 3]),
    "vsplit": lambda T, t: T.vsplit(t(C), [1]),
    "dsplit": lambda T, t: T.dsplit(t(C), 4),
    "split_with_sizes": lambda T, t: T.split_with_sizes(t(A), [1, 0, 3], 1),
    "unsafe_split": lambda T, t: T.unsafe_split(t(A), 2, 1),
    "unsafe_chunk": lambda T, t: T.unsafe_chunk(t(A), 2, 0),
    "unsafe_split_with_sizes": lambda T, t: T.unsafe_split_with_sizes(t(A), [2, 1]),
    "unbind": lambda T, t: T.unbind(t(C), 1),
    "movedim": lambda T, t: T.movedim(t(C), 0, -1),
    "moveaxis": lambda T, t: T.moveaxis(t(C), (0, 1), (2, 0)),
    "swapaxes": lambda T, t: T.swapaxes(t(C), 0, 2),
    "swapdims": lambda T, t: T.swapdims(t(C), -1, 1),
    "t": lambda T, t: T.t(t(A)),
    "narrow": lambda T, t: T.narrow(t(C), -1, 1, 2),
    "narrow_copy": lambda T, t: T.narrow_copy(t(C), 1, 1, 2),
    "ravel": lambda T, t: T.ravel(t(C)),
    "rot90": lambda T, t: T.rot90(t(C), 1, (0, 2)),
    "rot90_2": lambda T, t: T.rot90(t(A), 2),
    "rot90_minus1": lambda T, t: T.rot90(t(A), -1, [1, 0]),
    "fliplr": lambda T, t: T.fliplr(t(A)),
    "flipud": lambda T, t: T.flipud(t(A)),
    "tile": lambda T, t: T.tile(t(A), (2, 1, 2)),
    "select": lambda T, t: T.select(t(C), 2, -1),
    "Tensor.unfold": lambda T, t: t(C).unfold(2, 2, 1),
    "Tensor.unfold_step": lambda T, t: t(np.arange(10.0)).unfold(0, 3, 4),
    "Tensor.unfold_whole": lambda T, t: t(C).unfold(0, 2, 1),
    "Tensor.sum_to_size": lambda T, t: t(C).sum_to_size(3, 1),
    "Tensor.sum_to_size_same": lambda T, t: t(C).sum_to_size((2, 3, 4)),
    "count_nonzero": lambda T, t: T.count_nonzero(t(np.round(A))),
    "nanmean": lambda T, t: T.nanmean(t(np.where(A > 0, A, np.nan)), 1),
    "nansum": lambda T, t: T.nansum(t(np.where(A > 0, A, np.nan))),
    "argsort": lambda T, t: T.argsort(t(TIES), dim=1, stable=True),
    "diff": lambda T, t: T.diff(t(A), n=2, dim=1, prepend=t(A[:, :1]), append=t(A[:, :2])),
}


def _answers(module, call):
    out = call(module, lambda a: module.tensor(np.array(a)))
    out = out if isinstance(out, (tuple, list)) else [out]
    return [o.numpy() if hasattr(o, "numpy") else np.asarray(o) for o in out]


@pytest.mark.parametrize("name", SAME)
def test_same_answer_as_pytorch(name):
    ours, theirs = _answers(facade, SAME[name]), _answers(torch, SAME[name])
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert o.shape == t.shape and o.dtype == t.dtype, (o.shape, t.shape, o.dtype, t.dtype)
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-12)


def test_shape_changes_in_place_keep_the_tensor_and_its_memory():
    for name, args in [("transpose_", (0, 2)), ("swapaxes_", (1, 2)), ("swapdims_", (0, 1)), ("squeeze_", ()),
                       ("unsqueeze_", (1,))]:
        data = C[:, :1].copy() if name == "squeeze_" else C.copy()
        ours, theirs = facade.tensor(data), torch.tensor(data)
        array = ours.numpy()
        assert getattr(ours, name)(*args) is ours
        getattr(theirs, name)(*args)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        assert np.shares_memory(ours.numpy(), array)
    ours = facade.tensor(A.copy())
    assert ours.t_() is ours and ours.shape == (4, 3)
