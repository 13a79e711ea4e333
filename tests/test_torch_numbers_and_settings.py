"""torch's dtypes and numbers (dtype, finfo, iinfo, promote_types, result_type, can_cast, typename), more ways
to make a tensor (scalar_tensor, asarray, frombuffer, range, logspace, empty_permuted), the random draws that
only numpy's stream gives, the global settings real programs set, and torch.utils.data's ChainDataset,
StackDataset and default_convert (issue 26). Against PyTorch where it is installed, else against math."""
import math

import numpy as np
import pytest

import tinygrad_like.torch as facade
from tinygrad_like import Tensor
from tinygrad_like.function import state

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64"]


@pytest.fixture
def torch():
    return pytest.importorskip("torch", reason="compares with PyTorch's own answer")


def test_dtype_is_what_isinstance_checks_against():
    for name in DTYPES + ["float16", "bfloat16", "half", "long", "double"]:
        assert isinstance(getattr(facade, name), facade.dtype), name
    assert not isinstance("float32", facade.dtype) and not isinstance(np.float32, facade.dtype)
    with pytest.raises(TypeError, match="cannot create torch.dtype"):
        facade.dtype()


def test_finfo_and_iinfo_give_the_formats_limits():
    f = facade.finfo(facade.float32)
    assert (f.bits, f.eps, f.max, f.min, f.tiny, f.dtype) == (32, 2.0 ** -23, float(np.finfo(np.float32).max),
                                                              -float(np.finfo(np.float32).max), 2.0 ** -126, "float32")
    assert facade.finfo().dtype == "float32" and facade.finfo(facade.float64).eps == 2.0 ** -52
    assert facade.finfo(facade.bfloat16).eps == 2.0 ** -7 and facade.finfo(facade.float16).max == 65504
    i = facade.iinfo(facade.int64)
    assert (i.bits, i.min, i.max, i.dtype) == (64, -2 ** 63, 2 ** 63 - 1, "int64")
    assert facade.iinfo(facade.uint8).max == 255
    with pytest.raises(TypeError, match="finfo: needs a floating point dtype"):
        facade.finfo(facade.int32)
    with pytest.raises(TypeError, match="iinfo: needs an integer dtype"):
        facade.iinfo(facade.float32)


def test_finfo_and_iinfo_equal_pytorchs(torch):
    for name in ("float32", "float64", "float16", "bfloat16"):
        ours, theirs = facade.finfo(getattr(facade, name)), torch.finfo(getattr(torch, name))
        for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
            assert getattr(ours, field) == pytest.approx(getattr(theirs, field), rel=1e-15), (name, field)
        assert ours.dtype == theirs.dtype and repr(ours) == repr(theirs)
    for name in ("uint8", "int8", "int16", "int32", "int64"):
        ours, theirs = facade.iinfo(getattr(facade, name)), torch.iinfo(getattr(torch, name))
        assert (ours.bits, ours.min, ours.max, ours.dtype, repr(ours)) == (theirs.bits, theirs.min, theirs.max,
                                                                          theirs.dtype, repr(theirs))


def test_promote_types_and_can_cast_equal_pytorchs_for_every_pair(torch):
    for a in DTYPES:
        for b in DTYPES:
            ours = facade.promote_types(getattr(facade, a), getattr(facade, b))
            assert str(ours) == str(torch.promote_types(getattr(torch, a), getattr(torch, b))).removeprefix(
                "torch."), (a, b)
            assert facade.can_cast(getattr(facade, a), getattr(facade, b)) == torch.can_cast(
                getattr(torch, a), getattr(torch, b)), (a, b)


def test_result_type_equals_pytorchs(torch):
    cases = [(lambda t: t.tensor([1], dtype=t.int32), lambda t: t.tensor(1.0, dtype=t.float64)),
             (lambda t: t.tensor([1.0], dtype=t.float32), lambda t: t.tensor([1], dtype=t.int64)),
             (lambda t: t.tensor([1], dtype=t.uint8), lambda t: 2.5), (lambda t: 2, lambda t: 3.0),
             (lambda t: True, lambda t: 2), (lambda t: t.tensor([True]), lambda t: 7),
             (lambda t: t.tensor([1], dtype=t.int8), lambda t: t.tensor([1], dtype=t.uint8))]
    for a, b in cases:
        assert str(facade.result_type(a(facade), b(facade))) == str(torch.result_type(a(torch), b(torch))).removeprefix(
            "torch.")


def test_promotion_of_a_dtype_the_engine_does_not_compute_in_says_why():
    with pytest.raises(TypeError, match="float16 is not in this engine"):
        facade.promote_types(facade.float16, facade.float32)


def test_typename(torch):
    for make in (lambda t: t.zeros(2), lambda t: t.zeros(2, dtype=t.int64), lambda t: t.zeros(1, dtype=t.bool)):
        assert facade.typename(make(facade)) == torch.typename(make(torch))
    for obj in (3, [1], "a", int, 2.5):
        assert facade.typename(obj) == torch.typename(obj)
    assert facade.typename(facade.nn.Linear(2, 2)).endswith(".Linear")


@pytest.mark.filterwarnings("ignore:torch.range is deprecated")      # PyTorch's own warning, on its side
def test_new_ways_to_make_a_tensor_equal_pytorchs(torch):
    def same(call):
        ours, theirs = call(facade), call(torch)
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.") and ours.shape == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-7)

    same(lambda t: t.scalar_tensor(3))
    same(lambda t: t.scalar_tensor(2.5, dtype=t.float64))
    same(lambda t: t.asarray([1, 2]))
    same(lambda t: t.asarray([1.5, 2]))
    same(lambda t: t.asarray([[True], [False]]))
    same(lambda t: t.asarray(np.arange(3, dtype=np.int16)))
    same(lambda t: t.range(0, 1, 0.25))
    same(lambda t: t.range(1, 4))
    same(lambda t: t.range(5, 0, -1.5))
    same(lambda t: t.logspace(0, 2, 3))
    same(lambda t: t.logspace(-10, 10, 21, dtype=t.float64))
    same(lambda t: t.logspace(0, 3, 4, base=2))
    same(lambda t: t.empty_permuted((2, 3, 4), (0, 2, 1)).zero_())
    same(lambda t: t.frombuffer(bytearray(np.array([1, -2, 3], np.int32).tobytes()), dtype=t.int32))
    same(lambda t: t.frombuffer(bytearray(np.arange(6, dtype=np.float64).tobytes()), dtype=t.float64, count=2,
                                offset=16))
    assert facade.newaxis is None and facade.zeros(3)[:, facade.newaxis].shape == (3, 1)


def test_asarray_shares_memory_unless_told_to_copy():
    a = np.zeros(3, dtype=np.float32)
    shared = facade.asarray(a)
    a[0] = 5
    assert shared.tolist()[0] == 5
    copied = facade.asarray(a, copy=True)
    a[1] = 7
    assert copied.tolist()[1] == 0
    t = facade.tensor([1.0, 2.0])
    assert facade.asarray(t) is t
    with pytest.raises(ValueError, match="copy=False"):
        facade.asarray(a, dtype=facade.float64, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        facade.asarray([1, 2], copy=False)
    buffer = bytearray(8)
    over = facade.frombuffer(buffer, dtype=facade.int32)
    buffer[0] = 9
    assert over.tolist() == [9, 0]
    with pytest.raises(ValueError, match="range: step"):
        facade.range(0, 3, -1)
    with pytest.raises(ValueError, match="physical_layout must be a permutation"):
        facade.empty_permuted((2, 3), (0, 0))


def test_draws_only_numpys_stream_gives():
    Tensor.manual_seed(5)
    cauchy = facade.zeros(1000, dtype=facade.float64).cauchy_(2.0, 0.5)
    lognormal = facade.zeros(1000, dtype=facade.float64).log_normal_(0.5, 0.25)
    geometric = facade.zeros(1000, dtype=facade.int64).geometric_(0.25)
    binomial = facade.binomial(facade.full((1000,), 10.0), facade.full((1000,), 0.3))
    poisson = facade.poisson(facade.full((1000,), 4.0))
    rng = np.random.default_rng(5)                                 # the same stream, drawn with numpy itself
    np.testing.assert_array_equal(cauchy.numpy(), 2.0 + 0.5 * rng.standard_cauchy(1000))
    np.testing.assert_array_equal(lognormal.numpy(), rng.lognormal(0.5, 0.25, 1000))
    np.testing.assert_array_equal(geometric.numpy(), rng.geometric(0.25, 1000))
    np.testing.assert_array_equal(binomial.numpy(), rng.binomial(np.full(1000, 10), np.full(1000, 0.3)))
    np.testing.assert_array_equal(poisson.numpy(), rng.poisson(np.full(1000, 4.0)))
    assert binomial.dtype == np.float32 and geometric.min().item() >= 1
    assert abs(np.median(cauchy.numpy()) - 2.0) < 0.1 and abs(np.log(lognormal.numpy()).std() - 0.25) < 0.02


def test_under_pytorchs_stream_those_draws_say_why():
    facade.manual_seed(0)
    try:
        for draw in (lambda: facade.zeros(3).cauchy_(), lambda: facade.zeros(3).log_normal_(),
                     lambda: facade.zeros(3).geometric_(0.5), lambda: facade.poisson(facade.ones(3)),
                     lambda: facade.binomial(facade.ones(3), facade.ones(3) * 0.5)):
            with pytest.raises(NotImplementedError, match="PyTorch's numbers for this draw are not reproduced"):
                draw()
        g = np.random.default_rng(3)                             # a numpy generator= is numpy's stream
        assert facade.zeros(4).cauchy_(generator=g).shape == (4,)
    finally:
        Tensor.manual_seed(0)


def test_bernoulli_as_a_method_equals_pytorchs_draw(torch):
    facade.manual_seed(11)
    torch.manual_seed(11)
    try:
        for dtype in (np.float32, np.float64):
            p = np.random.default_rng(1).uniform(0, 1, (40, 30)).astype(dtype)
            ours, theirs = facade.tensor(p).bernoulli(), torch.tensor(p).bernoulli()
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
            assert ours.dtype == dtype
        np.testing.assert_array_equal(facade.tensor(p).bernoulli(0.5).numpy(), torch.tensor(p).bernoulli(0.5).numpy())
    finally:
        Tensor.manual_seed(0)


def test_anomaly_switches_are_the_engines_detect_anomaly():
    assert not facade.is_anomaly_enabled() and facade.is_anomaly_check_nan_enabled()
    facade.set_anomaly_enabled(True)
    try:
        assert facade.is_anomaly_enabled() and state.detect_anomaly
        x = facade.tensor([0.0], requires_grad=True)
        with pytest.raises(FloatingPointError, match="detect_anomaly"), np.errstate(divide="ignore"):
            x.sqrt().log().sum().backward()                      # d log(√x) at 0: an inf, caught and named
    finally:
        facade.set_anomaly_enabled(False)
    assert not state.detect_anomaly
    with pytest.raises(NotImplementedError, match="check_nan=False"):
        facade.set_anomaly_enabled(True, check_nan=False)


def test_torch_autograds_anomaly_context_managers():
    x = facade.tensor([0.0], requires_grad=True)
    with facade.autograd.detect_anomaly():
        assert facade.is_anomaly_enabled()
        with pytest.raises(FloatingPointError, match="detect_anomaly"), np.errstate(divide="ignore"):
            x.sqrt().log().sum().backward()
    assert not facade.is_anomaly_enabled()

    @facade.autograd.detect_anomaly()
    def inside():
        return facade.is_anomaly_enabled()
    assert inside() and not facade.is_anomaly_enabled()
    with facade.autograd.set_detect_anomaly(True):
        assert facade.is_anomaly_enabled()
    assert not facade.is_anomaly_enabled()
    facade.autograd.set_detect_anomaly(True)
    try:
        assert state.detect_anomaly
    finally:
        facade.autograd.set_detect_anomaly(False)
    assert not state.detect_anomaly
    with pytest.raises(NotImplementedError, match="check_nan=False"):
        facade.autograd.detect_anomaly(check_nan=False)


def test_determinism_and_precision_switches_are_recorded_and_answered(torch):
    try:
        for t in (facade, torch):
            assert not t.are_deterministic_algorithms_enabled() and t.get_deterministic_debug_mode() == 0
            t.use_deterministic_algorithms(True, warn_only=True)
            assert t.are_deterministic_algorithms_enabled() and t.is_deterministic_algorithms_warn_only_enabled()
            assert t.get_deterministic_debug_mode() == 1
            t.set_deterministic_debug_mode("error")
            assert t.get_deterministic_debug_mode() == 2 and not t.is_deterministic_algorithms_warn_only_enabled()
            t.set_deterministic_debug_mode(0)
            assert not t.are_deterministic_algorithms_enabled()
            assert t.get_float32_matmul_precision() == "highest"
            t.set_float32_matmul_precision("high")
            assert t.get_float32_matmul_precision() == "high"
            t.set_float32_matmul_precision("highest")
            assert not t.is_warn_always_enabled()
            t.set_warn_always(True)
            assert t.is_warn_always_enabled()
            t.set_warn_always(False)
    finally:
        facade.use_deterministic_algorithms(False)
        facade.set_float32_matmul_precision("highest")
    with pytest.raises(ValueError, match="expected 'highest', 'high' or 'medium'"):
        facade.set_float32_matmul_precision("bad")
    with pytest.raises(RuntimeError, match="set_deterministic_debug_mode"):
        facade.set_deterministic_debug_mode(3)
    assert facade.set_flush_denormal(True) is False and facade.set_flush_denormal(False) is True
    assert facade.tensor([1e-310], dtype=facade.float64).item() == 1e-310            # kept, as answered


def test_inference_mode_queries():
    assert not facade.is_inference_mode_enabled()
    with facade.inference_mode():
        assert facade.is_inference_mode_enabled()
        with facade.inference_mode(False):
            assert not facade.is_inference_mode_enabled()
        assert facade.is_inference_mode_enabled()
        t = facade.ones(2)
    assert not facade.is_inference_mode_enabled()
    assert facade.is_inference(t) is False and t.is_inference() is False

    @facade.inference_mode()
    def inside():
        return facade.is_inference_mode_enabled()
    assert inside() and not facade.is_inference_mode_enabled()


def test_autocast_is_never_enabled():
    assert not facade.is_autocast_enabled() and not facade.is_autocast_cpu_enabled()
    with facade.autocast("cpu", enabled=False):
        assert not facade.is_autocast_enabled("cpu")


def test_default_tensor_type():
    facade.set_default_tensor_type(facade.FloatTensor)
    facade.set_default_tensor_type("torch.FloatTensor")
    with pytest.raises(NotImplementedError, match="float32"):
        facade.set_default_tensor_type(facade.DoubleTensor)


def test_module_level_names_of_pytorchs_cpp_runtime_are_refused_with_the_reason():
    for name, says in (("ModuleDict", "torch.nn.ModuleDict"), ("ParameterDict", "torch.nn.ParameterDict"),
                       ("BufferDict", "state_dict"), ("FatalError", "Python's own errors"),
                       ("PyTorchFileReader", "torch.load"), ("PyTorchFileWriter", "torch.save"),
                       ("SerializationStorageContext", "torch.save"), ("DeserializationStorageContext", "torch.load"),
                       ("cond", "Python's own if")):
        with pytest.raises(NotImplementedError, match=says):
            getattr(facade, name)


def test_chain_and_stack_datasets():
    from tinygrad_like.torch.utils.data import ChainDataset, DataLoader, IterableDataset, StackDataset, TensorDataset

    class Count(IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    chained = ChainDataset([Count(2), Count(3)])
    assert list(chained) == [0, 1, 0, 1, 2] and len(chained) == 5
    with pytest.raises(TypeError, match="only IterableDatasets"):
        list(ChainDataset([TensorDataset(facade.zeros(2))]))
    a, b = TensorDataset(facade.arange(4)), [10, 11, 12, 13]
    stacked = StackDataset(a, b)[2]
    assert stacked[0][0].item() == 2 and stacked[1] == 12 and len(StackDataset(a, b)) == 4
    named = StackDataset(x=b, y=b)
    assert named[1] == {"x": 11, "y": 11} and len(named) == 4
    batch = next(iter(DataLoader(StackDataset(x=b, y=[0, 1, 0, 1]), batch_size=4)))
    assert batch["x"].tolist() == b and batch["y"].tolist() == [0, 1, 0, 1]
    with pytest.raises(ValueError, match="lengths differ"):
        StackDataset(b, [1])
    with pytest.raises(ValueError, match="not both"):
        StackDataset(b, y=b)


def test_default_convert_equals_pytorchs(torch):
    from torch.utils.data import default_convert as theirs

    from tinygrad_like.torch.utils.data import default_convert as ours
    example = {"x": np.arange(3.0), "n": np.int64(4), "label": 2, "pair": (np.ones(2, np.float32), "s")}
    got, want = ours(example), theirs(example)
    assert got["x"].tolist() == want["x"].tolist() and got["x"].dtype == np.float64
    assert got["n"].item() == want["n"].item() and got["n"].shape == () and isinstance(got["n"], Tensor)
    assert got["label"] == want["label"] == 2
    assert isinstance(got["pair"], tuple) and got["pair"][1] == "s" and got["pair"][0].dtype == np.float32
    assert ours([np.array(["a"])])[0].dtype.kind == "U" == theirs([np.array(["a"])])[0].dtype.kind   # not numbers
    assert math.isnan(ours(float("nan")))
