"""Same seed, same names: the opening cells of a bigram-model lecture, run on PyTorch and on this engine.

The cells are written the way the makemore lecture writes them: a 27×27 table of bigram counts, names
sampled from it with `torch.multinomial` and `torch.Generator().manual_seed(2147483647)`, the table's
loss, then a one-layer network `W = torch.randn((27, 27), generator=g)` trained by gradient descent on
the same loss, and names sampled from it. Because the facade draws PyTorch's random streams
(tinygrad_like/pytorch_streams/generator.py), both engines print the same names and the same losses.

    python demos/bigram_streams.py                    # names made up by this script
    python demos/bigram_streams.py --names names.txt  # one name per line, e.g. makemore's names.txt
"""
from __future__ import annotations

import importlib.util
import pathlib
import random

import _common
import tinygrad_like.torch as facade


def made_up_names(count: int = 3000, seed: int = 0) -> list[str]:
    """Names of one to three syllables; the syllables use all 26 letters, so the table has 27 rows in use."""
    syllables = ["ka", "li", "ma", "ro", "na", "el", "ja", "den", "so", "ri", "an", "ty", "bo", "lu", "mi", "za",
                 "xe", "quin", "vi", "fo", "gh", "wy", "ce", "pe", "ho", "ike"]
    rng = random.Random(seed)
    return ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 3))) for _ in range(count)]


def lecture(torch, words: list[str], steps: int = 20, samples: int = 5) -> list[str]:
    """The lecture's cells on the given `torch` module (PyTorch or tinygrad_like.torch); returns what they print."""
    printed = []
    chars = sorted(set("".join(words)))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    itos = {i: s for s, i in stoi.items()}

    N = torch.zeros((27, 27), dtype=torch.int32)
    for w in words:
        chs = ["."] + list(w) + ["."]
        for ch1, ch2 in zip(chs, chs[1:]):
            N[stoi[ch1], stoi[ch2]] += 1

    P = (N + 1).float()
    P /= P.sum(1, keepdims=True)

    g = torch.Generator().manual_seed(2147483647)
    for _ in range(samples):
        out, ix = [], 0
        while True:
            p = P[ix]
            ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
            out.append(itos[ix])
            if ix == 0:
                break
        printed.append("counts: " + "".join(out))

    log_likelihood, n = 0.0, 0
    for w in words:
        chs = ["."] + list(w) + ["."]
        for ch1, ch2 in zip(chs, chs[1:]):
            log_likelihood += torch.log(P[stoi[ch1], stoi[ch2]])
            n += 1
    printed.append(f"counts: nll/n {(-log_likelihood / n).item():.4f}")

    xs, ys = [], []
    for w in words:
        chs = ["."] + list(w) + ["."]
        for ch1, ch2 in zip(chs, chs[1:]):
            xs.append(stoi[ch1])
            ys.append(stoi[ch2])
    xs, ys = torch.tensor(xs), torch.tensor(ys)
    num = xs.nelement()

    g = torch.Generator().manual_seed(2147483647)
    W = torch.randn((27, 27), generator=g, requires_grad=True)
    for k in range(steps):
        xenc = torch.nn.functional.one_hot(xs, num_classes=27).float()
        logits = xenc @ W
        counts = logits.exp()
        probs = counts / counts.sum(1, keepdims=True)
        loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W ** 2).mean()
        if k in (0, 1, steps - 1):
            printed.append(f"network: step {k} loss {loss.item():.4f}")
        W.grad = None
        loss.backward()
        W.data += -50 * W.grad

    g = torch.Generator().manual_seed(2147483647)
    for _ in range(samples):
        out, ix = [], 0
        while True:
            xenc = torch.nn.functional.one_hot(torch.tensor([ix]), num_classes=27).float()
            p = (xenc @ W).exp()
            p = p / p.sum(1, keepdims=True)
            ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
            out.append(itos[ix])
            if ix == 0:
                break
        printed.append("network: " + "".join(out))
    return printed


def main(argv=None) -> dict:
    parser = _common.parser("bigram_streams", __doc__.splitlines()[0], out=False)
    parser.add_argument("--names", type=pathlib.Path, help="a file of names, one per line (default: names made up "
                        "here)")
    parser.add_argument("--steps", type=_common.positive, default=20, help="gradient descent steps")
    args = parser.parse_args(argv)
    words = args.names.read_text().split() if args.names else made_up_names()
    ours = lecture(facade, words, args.steps)
    theirs = None
    if importlib.util.find_spec("torch") is not None:
        import torch
        theirs = lecture(torch, words, args.steps)
    width = max(len(line) for line in ours) + 2
    print(f"{'tinygrad_like.torch':<{width}}{'PyTorch' if theirs else '(PyTorch is not installed)'}")
    for i, line in enumerate(ours):
        print(f"{line:<{width}}{theirs[i] if theirs else ''}")
    if theirs is not None:
        print("same lines:", sum(a == b for a, b in zip(ours, theirs)), "of", len(ours))
    return {"ours": ours, "theirs": theirs}


if __name__ == "__main__":
    main()
