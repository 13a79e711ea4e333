"""Shared by the facade's parity tests: the same PyTorch-style model built twice, once on real PyTorch and
once on tinygrad_like.torch, with the same weights (copied by load_state_dict), compared by loss and by
every parameter's gradient. `python tests/torch_parity.py` prints the largest relative differences.

Each model is written once, as a function of the `torch` module it runs on, so both frameworks run the
very same code. Relative difference of arrays, `rel`: ‖ours − theirs‖ / ‖theirs‖ (L2 norms over the whole
array; a scalar: |a − b| / |b|), the usual measure of a vector's error; `rel_max` is the stricter
max|ours − theirs| / max|theirs|, which the report prints beside it. Float32 sits near its noise floor
here: PyTorch's own float32 gradients differ from its float64 ones by about 1e-6 in rel_max.
"""
from __future__ import annotations

import contextlib
import importlib.util
import pathlib
import sys

import numpy as np

import tinygrad_like.torch as facade

GPT_SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "demos" / "torch_scripts" / "gpt_char.py"


def load_script(path: pathlib.Path, on_facade: bool):
    """Import a PyTorch script as a module whose `import torch` is real PyTorch or the facade."""
    name = f"_parity_{path.stem}_{'facade' if on_facade else 'torch'}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    with (installed() if on_facade else contextlib.nullcontext()):
        spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def installed():
    """`import torch` gives the facade inside."""
    facade.install()
    try:
        yield
    finally:
        facade.uninstall()


def rel(ours, theirs) -> float:
    """‖ours − theirs‖ / ‖theirs‖ (0 when both are zero)."""
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    scale = np.linalg.norm(theirs.ravel())
    return float(np.linalg.norm((ours - theirs).ravel()) / scale) if scale else float(np.abs(ours).max(initial=0))


def rel_max(ours, theirs) -> float:
    """max|ours − theirs| / max|theirs| (0 when both are zero)."""
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    scale = np.max(np.abs(theirs), initial=0)
    return float(np.max(np.abs(ours - theirs), initial=0) / scale) if scale else float(np.abs(ours).max(initial=0))


# ---------------------------------------------------------------- the models, written once

def makemore_mlp(torch, vocab=27, block=3, n_embd=10, n_hidden=64):
    """The course's MLP language model: C[X], view, Linear, BatchNorm1d, tanh, Linear, cross-entropy."""
    nn, F = torch.nn, torch.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.C = nn.Parameter(torch.randn(vocab, n_embd))
            self.lin1 = nn.Linear(n_embd * block, n_hidden, bias=False)
            self.bn = nn.BatchNorm1d(n_hidden)
            self.lin2 = nn.Linear(n_hidden, vocab)

        def forward(self, X, Y):
            emb = self.C[X]                                   # (B, block, n_embd)
            x = emb.view(emb.shape[0], -1)                    # (B, block·n_embd)
            h = torch.tanh(self.bn(self.lin1(x)))             # (B, n_hidden)
            return F.cross_entropy(self.lin2(h), Y)

    return MLP()


def micrograd_mlp(torch):
    """micrograd's demo: a 2-16-16-1 ReLU net, SVM max-margin loss plus L2 regularisation."""
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))

        def forward(self, X, y):
            scores = self.net(X).view(-1)
            data_loss = torch.relu(1 - y * scores).mean()
            reg_loss = 1e-4 * sum((p * p).sum() for p in self.parameters())
            return data_loss + reg_loss

    return Net()


def gpt(torch, vocab=40, n_embd=64, n_head=4, n_layer=2, block_size=32):
    module = load_script(GPT_SCRIPT, on_facade=torch is facade)
    model = module.GPT(vocab, n_embd, n_head, n_layer, block_size, dropout=0.0)

    return _LossOf(model)


class _LossOf:
    """model(X, Y) -> loss for a model that returns (logits, loss); keeps the model's own names."""

    def __init__(self, model):
        self.model = model

    def __getattr__(self, name):
        return getattr(self.model, name)

    def __call__(self, X, Y):
        return self.model(X, Y)[1]


def batches(name: str, n: int, seed: int = 0, batch: int = 16):
    """n batches (X, Y) as numpy arrays for model `name`."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        if name == "makemore_mlp":
            X = rng.integers(0, 27, (32, 3))
            yield X, X[:, -1]                                 # learnable: the next character repeats the last
        elif name == "micrograd_mlp":
            X = rng.standard_normal((batch * 4, 2))
            yield X, np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
        else:
            X = rng.integers(0, 40, (4, 8) if name == "gpt_small" else (batch, 32))
            yield X, np.roll(X, 1, axis=1)                    # learnable: the next token is the one before


def gpt_small(torch):
    """The same GPT at width 16, context 8 (2 layers, 4 heads): for the 200-step runs in the tests."""
    return gpt(torch, n_embd=16, block_size=8)


MODELS = {"makemore_mlp": makemore_mlp, "micrograd_mlp": micrograd_mlp, "gpt": gpt, "gpt_small": gpt_small}


def twins(name: str, dtype: str, real_torch, seed: int = 0):
    """(theirs, ours): the model on PyTorch and on the facade, ours holding a copy of theirs' weights."""
    real_torch.manual_seed(seed)
    theirs = MODELS[name](real_torch)
    ours = MODELS[name](facade)
    if dtype == "float64":
        theirs.double()
        ours.double()
    ours.load_state_dict(theirs.state_dict())
    return theirs, ours


def _inputs(torch, X, Y, dtype):
    float_dtype = torch.float64 if dtype == "float64" else torch.float32
    X = torch.tensor(X) if X.dtype.kind in "iu" else torch.tensor(X, dtype=float_dtype)
    Y = torch.tensor(Y) if Y.dtype.kind in "iu" else torch.tensor(Y, dtype=float_dtype)
    return X, Y


def gradient_differences(name: str, dtype: str, real_torch, measure=rel) -> dict:
    """{"loss": rel diff, parameter name: rel diff of its gradient} after one forward and backward."""
    theirs, ours = twins(name, dtype, real_torch)
    X, Y = next(batches(name, 1))
    loss_t = theirs(*_inputs(real_torch, X, Y, dtype))
    loss_o = ours(*_inputs(facade, X, Y, dtype))
    loss_t.backward()
    loss_o.backward()
    out = {"loss": measure(loss_o.item(), loss_t.item())}
    grads_t = {k: p.grad.numpy() for k, p in theirs.named_parameters()}
    grads_o = dict(ours.named_parameters())
    if list(grads_t) != list(grads_o):
        raise AssertionError(f"{name}: parameter names differ: {list(grads_t)} vs {list(grads_o)}")
    out.update({k: measure(grads_o[k].grad.numpy(), g) for k, g in grads_t.items()})
    return out


def adamw_losses(name: str, steps: int, real_torch, lr: float = 1e-3) -> tuple[list, list]:
    """Per-step losses of `steps` AdamW steps in float64 from the same weights on the same batches, at
    PyTorch's default lr=1e-3. (At lr=1e-2 the GPT's training is chaotic: a rounding difference of 1e-16
    grows about tenfold every 7 steps, to 3e-7 after 200, as it would between any two summation orders.)"""
    theirs, ours = twins(name, "float64", real_torch)
    curves = []
    for torch, model in ((real_torch, theirs), (facade, ours)):
        opt = torch.optim.AdamW(model.parameters(), lr=lr)
        losses = []
        for X, Y in batches(name, steps):
            loss = model(*_inputs(torch, X, Y, "float64"))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        curves.append(losses)
    return curves[0], curves[1]


if __name__ == "__main__":
    import torch as real_torch
    sys.stdout.reconfigure(line_buffering=True)
    real_torch.set_num_threads(1)
    for model_name in MODELS:
        for dt in ("float32", "float64") if model_name != "gpt_small" else ():
            for measure in (rel, rel_max):
                diffs = gradient_differences(model_name, dt, real_torch, measure)
                worst = max((k for k in diffs if k != "loss"), key=diffs.get)
                print(f"{model_name:14s} {dt} {measure.__name__:7s}: loss {diffs['loss']:.2e}, worst gradient "
                      f"{diffs[worst]:.2e} ({worst}), {len(diffs) - 1} parameters")
        a, b = adamw_losses(model_name, 200, real_torch)
        worst_step = max(rel(x, y) for x, y in zip(b, a))
        print(f"{model_name:14s} 200 AdamW steps float64: worst loss rel diff {worst_step:.2e}")
