"""The draws on which tinygrad_like.pytorch_streams must give PyTorch's numbers, written once and run two ways:
on our TorchGenerator (`draw_ours`) and on real PyTorch (`draw_torch`, given the torch module).

Each case seeds a fresh generator, makes one draw, then draws rand(3) (float32) so the number of words the
draw consumed is checked too. tests/make_torch_streams.py stores PyTorch's answers (a SHA-256 of the bytes
and the first numbers) in tests/torch_streams.json, so the suite checks the streams without PyTorch.
Sizes straddle the normal fill's block of 16 and the twister's 624 words.
"""
from __future__ import annotations

import hashlib

import numpy as np

SEEDS = (0, 42, 2147483647, 2 ** 40 + 7)          # the last one: only its low 32 bits seed the twister
SIZES = (1, 2, 3, 15, 16, 17, 31, 33, 100, 623, 624, 625, 1000, 1249, 10000)
FEW_SIZES = (1, 2, 17, 100, 1000)
FLOATS = ("float32", "float64")


def cases() -> list[tuple]:
    """(kind, seed, dtype, size, *arguments) for every draw we reproduce."""
    out = []
    for seed in SEEDS:
        for dtype in FLOATS:
            for size in SIZES:
                out += [("rand", seed, dtype, size), ("randn", seed, dtype, size), ("randn_twice", seed, dtype, size),
                        ("normal_", seed, dtype, size, 0.5, 0.02), ("uniform_", seed, dtype, size, -0.37, 0.81)]
            for size in FEW_SIZES:
                out += [("exponential_", seed, dtype, size, 1.5), ("bernoulli_probs", seed, dtype, size),
                        ("random_", seed, dtype, size)]
                out += [("multinomial", seed, dtype, (rows, size), samples, replacement)
                        for rows in (1, 3) for samples, replacement in ((1, True), (1, False), (5, True), (5, False))
                        if replacement or samples <= size]
        for size in SIZES:
            out += [("randint", seed, "int64", size, -5, 27), ("randint", seed, "int64", size, 0, 2 ** 40),
                    ("randperm", seed, "int64", size)]
        for size in FEW_SIZES:
            out += [("bernoulli_", seed, "float32", size, 0.3), ("random_", seed, "int64", size),
                    ("random_", seed, "int32", size)]
    return out


def key(case: tuple) -> str:
    return " ".join(str(part) for part in case)


def digest(arrays: list[np.ndarray]) -> dict:
    """What tests/torch_streams.json stores per case: the first 16 hex digits of a SHA-256 of every array's
    bytes (64 bits: a chance match is out of the question) and the first numbers, for a readable failure."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return {"sha256": h.hexdigest()[:16], "first": [float(v) for v in arrays[0].reshape(-1)[:4]]}


def draw_ours(case: tuple) -> list[np.ndarray]:
    from tinygrad_like.pytorch_streams.generator import TorchGenerator
    kind, seed, dtype, size, *args = case
    g = TorchGenerator(seed)
    shape = size if isinstance(size, tuple) else (size,)
    if kind == "rand":
        out = [g.uniform(shape, dtype)]
    elif kind == "randn":
        out = [g.normal(shape, dtype)]
    elif kind == "randn_twice":
        out = [g.normal(shape, dtype), g.normal(shape, dtype)]
    elif kind == "normal_":
        out = [g.normal(shape, dtype, *args)]
    elif kind == "uniform_":
        out = [g.uniform(shape, dtype, *args)]
    elif kind == "exponential_":
        out = [g.exponential(shape, dtype, *args)]
    elif kind == "bernoulli_probs":
        probs = g.uniform(shape, dtype)
        out = [g.bernoulli(probs).astype(dtype)]
    elif kind == "bernoulli_":
        out = [g.bernoulli(args[0], shape).astype(dtype)]
    elif kind == "random_":
        out = [g.random(shape, dtype)]
    elif kind == "multinomial":
        weights = g.uniform(shape, dtype)
        out = [g.multinomial(weights, *args)]
    elif kind == "randint":
        out = [g.integers(args[0], args[1], shape)]
    elif kind == "randperm":
        out = [g.permutation(size)]
    else:
        raise ValueError(kind)
    return out + [g.uniform((3,), "float32")]


def draw_torch(case: tuple, torch) -> list[np.ndarray]:
    kind, seed, dtype, size, *args = case
    g = torch.Generator().manual_seed(seed)
    dt = getattr(torch, dtype)
    shape = size if isinstance(size, tuple) else (size,)
    if kind == "rand":
        out = [torch.rand(shape, generator=g, dtype=dt)]
    elif kind == "randn":
        out = [torch.randn(shape, generator=g, dtype=dt)]
    elif kind == "randn_twice":
        out = [torch.randn(shape, generator=g, dtype=dt), torch.randn(shape, generator=g, dtype=dt)]
    elif kind == "normal_":
        out = [torch.empty(shape, dtype=dt).normal_(*args, generator=g)]
    elif kind == "uniform_":
        out = [torch.empty(shape, dtype=dt).uniform_(*args, generator=g)]
    elif kind == "exponential_":
        out = [torch.empty(shape, dtype=dt).exponential_(*args, generator=g)]
    elif kind == "bernoulli_probs":
        probs = torch.rand(shape, generator=g, dtype=dt)
        out = [torch.bernoulli(probs, generator=g)]
    elif kind == "bernoulli_":
        out = [torch.empty(shape, dtype=dt).bernoulli_(args[0], generator=g)]
    elif kind == "random_":
        out = [torch.empty(shape, dtype=dt).random_(generator=g)]
    elif kind == "multinomial":
        weights = torch.rand(shape, generator=g, dtype=dt)
        out = [torch.multinomial(weights, *args, generator=g)]
    elif kind == "randint":
        out = [torch.randint(args[0], args[1], shape, generator=g)]
    elif kind == "randperm":
        out = [torch.randperm(size, generator=g)]
    else:
        raise ValueError(kind)
    return [t.numpy() for t in out] + [torch.rand(3, generator=g).numpy()]


# ---------------------------------------------------------------- whole programs through the facade
def _global_draws(T) -> list:
    T.manual_seed(1337)
    out = [T.randn(5), T.rand(20, dtype=T.float64), T.randint(0, 65, (4, 8)), T.randn(3, 40), T.randperm(10),
           T.normal(0.0, 2.0, (33,)), T.bernoulli(T.full((50,), 0.3)), T.randn_like(T.zeros(17)),
           T.rand_like(T.zeros(5, dtype=T.float64)), T.randint_like(T.zeros(6), 3, 9), T.empty(30).exponential_(),
           T.empty(9).random_(), T.empty(9).random_(3, 11), T.empty(40, dtype=T.float64).normal_(0.5, 0.02)]
    return out + [T.tensor([T.initial_seed()])]


def _generator_draws(T) -> list:
    T.manual_seed(11)
    g = T.Generator().manual_seed(2147483647)
    out = [T.randn((27, 27), generator=g), T.multinomial(T.tensor([0.1, 0.5, 0.4]), 5, True, generator=g),
           T.multinomial(T.rand(3, 10, generator=g), 4, False, generator=g), T.randint(-4, 4, (7,), generator=g),
           T.randperm(30, generator=g), T.empty(33).normal_(1.0, 0.5, generator=g),
           T.empty(5, dtype=T.float64).uniform_(-1, 2, generator=g), T.rand(3)]     # the last: global, untouched
    return out


def _layers(T) -> list:
    nn = T.nn
    T.manual_seed(42)
    model = nn.Sequential(nn.Embedding(65, 32), nn.Linear(32, 64), nn.LayerNorm(64), nn.Linear(64, 65, bias=False),
                          nn.Linear(5, 3, dtype=T.float64))
    w, k, kn, x, n = T.empty(20, 30), T.empty(8, 9), T.empty(6, 7), T.empty(10, 12), T.empty(40)
    nn.init.xavier_uniform_(w)
    nn.init.kaiming_uniform_(k, a=0.1)
    nn.init.kaiming_normal_(kn, mode="fan_out", nonlinearity="relu")
    nn.init.xavier_normal_(x, gain=1.3)
    nn.init.normal_(n, mean=0.0, std=0.02)
    dropped = nn.Dropout(0.2)(T.ones(4, 50))
    dropped_f = nn.functional.dropout(T.full((3, 33), 2.5), 0.37)
    return [p.detach() for p in model.parameters()] + [w, k, kn, x, n, dropped.detach(), dropped_f, T.rand(3)]


def _batches(T) -> list:
    T.manual_seed(7)
    data = T.utils.data.TensorDataset(T.arange(23))
    out = []
    for shuffle, generator in ((True, None), (False, None), (True, T.Generator().manual_seed(3))):
        loader = T.utils.data.DataLoader(data, batch_size=5, shuffle=shuffle, generator=generator)
        out += [batch[0] for epoch in range(2) for batch in loader]
    samplers = T.utils.data
    for sampler in (samplers.RandomSampler(data, replacement=True, num_samples=70),
                    samplers.RandomSampler(data, num_samples=50), samplers.SubsetRandomSampler(list(range(5, 20))),
                    samplers.WeightedRandomSampler([0.1, 0.5, 0.2, 0.2], 12),
                    samplers.WeightedRandomSampler([0.1, 0.5, 0.2, 0.2], 3, replacement=False)):
        out.append(T.tensor(list(sampler)))
    endless = T.utils.data.DataLoader(data, batch_size=4, sampler=samplers.RandomSampler(
        data, replacement=True, num_samples=int(1e10)))                       # minGPT's trainer
    batches = iter(endless)
    out += [next(batches)[0] for _ in range(3)]
    train, test = T.utils.data.random_split(data, [15, 8])
    out += [T.tensor(list(train.indices)), T.tensor(list(test.indices))]
    return out + [T.rand(3)]


def _strided(T) -> list:
    T.manual_seed(3)
    w, u, big, b3, x, s = T.zeros(6, 5), T.zeros(4, 6), T.zeros(8, 9), T.zeros(2, 3, 20), T.zeros(7, 8), T.zeros(10, 4)
    with T.no_grad():
        w.T.normal_()
        u.T.uniform_(-1, 1)
        big.T.normal_()
        b3.permute(2, 0, 1).normal_(0.1, 3.0)
        T.nn.init.normal_(x.T, std=0.02)
        T.nn.init.uniform_(x.T[1:3], -0.5, 0.5)
        s[::2].exponential_()
        s[:, 1].bernoulli_(0.4)
    return [w, u, big, b3, x, s, T.rand(3)]


def _state(T) -> list:
    T.manual_seed(5)
    T.randn(3)                                     # leaves a normal cached
    T.rand(700)
    state = T.get_rng_state()
    first = T.randn(5)
    T.set_rng_state(state)
    return [state, first, T.randn(5), T.get_rng_state()]


PROGRAMS = {"global draws": _global_draws, "generator draws": _generator_draws, "layers and init": _layers,
            "DataLoader batches": _batches, "strided outputs": _strided, "rng state": _state}


def run_program(name: str, T) -> list[np.ndarray]:
    """A facade program's arrays (T is PyTorch or tinygrad_like.torch)."""
    return [np.asarray(t.numpy()) for t in PROGRAMS[name](T)]
