"""The KV cache: what it saves when generating, and what it costs in memory.

What it teaches: a GPT generates one token at a time, and each new token attends to every earlier
token's key and value. Those keys and values never change (under the causal mask, earlier tokens do
not see later ones), so recomputing them at every step is wasted work:
  * without a cache, step t runs all t tokens of the context through every block: the work per new
    token grows with the context length (and attention's part of it with its square);
  * with a cache, each block keeps the keys and values it has computed (nn.attention.KVCache), and a
    step runs only the one new token through the blocks, attending over the stored keys: the work
    per token is nearly flat in the context length (the attention over the cache is the only part
    that grows, and for a small model it is dwarfed by the fixed per-op overhead).
The price is memory: 2 (keys and values) · n_layer · tokens · n_embd numbers per sequence, which the
demo reads from the cache objects and checks against models.arithmetic.kv_cache_bytes.

The model is a small random GPT (4 layers, 128 wide; timing does not depend on the weights). A decode
step is written out below with the model's own modules, so you can see exactly what the cache skips;
it is checked against the uncached forward, and GPT.generate is timed with and without its cache too.

Run:  python demos/kv_cache.py [--out DIR]      (default out/kv_cache/)
Writes kv_cache.png (time per generated token and cache memory against context length).
"""
from __future__ import annotations

import os

# Tiny matrices: one BLAS thread is faster than a pool of them (whose hand-offs dominate at this size,
# and turn ruinous on a busy machine). Set before numpy loads; override from the shell if you like.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time

import numpy as np
from matplotlib.ticker import NullLocator

import _common
from _common import plt
from models.arithmetic import kv_cache_bytes
from models.gpt import GPT, GPTConfig
from nn.attention import KVCache
from tinygrad_like import Tensor, no_grad


def next_logits(model: GPT, ids: np.ndarray, caches: list[KVCache] | None = None) -> np.ndarray:
    """Logits (B, vocab) for the token after ids (B, T): one decode step.

    Without caches, ids is the whole context and every token goes through every block. With caches
    (one per block, holding the keys and values of the caches[0].length tokens before ids), ids holds
    only the new tokens; each block appends their keys and values to its cache and attends over all.
    """
    start = caches[0].length if caches is not None else 0              # position of ids[:, 0]
    T = ids.shape[1]
    x = model.transformer.wte(ids) + model.transformer.wpe(np.arange(start, start + T))   # (B, T, C)
    for i, block in enumerate(model.transformer.h):
        x = block(x, kv_cache=caches[i] if caches is not None else None)                   # (B, T, C)
    x = model.transformer.ln_f(x[:, -1, :])                                                # (B, C) last token only
    return model.lm_head(x).numpy()                                                        # (B, vocab)


def time_step(fn, repeats: int) -> float:
    """Median seconds of `repeats` calls of fn() (the median shrugs off a stray slow call)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def measure(model: GPT, context: int, repeats: int, rng) -> dict:
    """Time per new token at this context length, without and with the cache, and the cache's bytes."""
    ids = rng.integers(0, model.config.vocab_size, size=(1, context))                     # (1, T)

    # without a cache: the whole context goes through the model for every new token
    no_cache_s = time_step(lambda: next_logits(model, ids), repeats)

    # with a cache: read the first T-1 tokens once (prefill), then time steps of one token each.
    # (Each timed step adds a token, so the context runs from T to T + repeats - 1.)
    caches = [KVCache() for _ in model.transformer.h]
    next_logits(model, ids[:, :-1], caches)
    cached = next_logits(model, ids[:, -1:], caches)                                      # context exactly T
    full = next_logits(model, ids)
    cache_bytes = sum(c.nbytes for c in caches)                                           # T tokens stored
    cache_s = time_step(lambda: next_logits(model, ids[:, -1:], caches), repeats)
    itemsize = np.dtype(model.config.dtype).itemsize
    return dict(context=context, no_cache_ms=1e3 * no_cache_s, cache_ms=1e3 * cache_s,
                cache_bytes=cache_bytes, formula_bytes=kv_cache_bytes(model.config, context, bytes_per_number=itemsize),
                max_abs_diff=float(np.abs(cached - full).max()))


def parse(argv):
    p = _common.parser("kv_cache", __doc__.splitlines()[0])
    p.add_argument("--contexts", type=_common.positive, nargs="+", default=[16, 32, 64, 128, 256, 512],
                   help="context lengths")
    p.add_argument("--n-layer", type=_common.positive, default=4)
    p.add_argument("--n-head", type=_common.positive, default=4)
    p.add_argument("--n-embd", type=_common.positive, default=128)
    p.add_argument("--vocab-size", type=_common.positive, default=256)
    p.add_argument("--repeats", type=_common.positive, default=15,
                   help="timed calls per measurement (the median is kept)")
    p.add_argument("--generate-tokens", type=int, default=128,
                   help="tokens GPT.generate makes from a 16-token prompt, with and without the cache (0: skip)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    _common.check_heads(p, args.n_embd, args.n_head)
    return args


def main(argv=None) -> dict:
    args = parse(argv)
    out = _common.out_dir(args.out)
    Tensor.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    block_size = max(args.contexts) + args.repeats + max(args.generate_tokens, 0) + 16
    config = GPTConfig(vocab_size=args.vocab_size, block_size=block_size, n_layer=args.n_layer,
                       n_head=args.n_head, n_embd=args.n_embd)
    model = GPT(config)
    model.eval()
    print(f"GPT: {args.n_layer} layers, {args.n_embd} wide, {args.n_head} heads, {model.num_params():,} parameters "
          f"({config.dtype}); one sequence (batch 1)\n")
    print(f"{'context':>8} {'no cache ms/token':>18} {'cache ms/token':>15} {'speed-up':>9} "
          f"{'cache bytes':>12} {'formula bytes':>14} {'cached = full':>14}")
    rows = []
    with no_grad():
        for context in args.contexts:
            r = measure(model, context, args.repeats, rng)
            rows.append(r)
            print(f"{r['context']:>8} {r['no_cache_ms']:>18.2f} {r['cache_ms']:>15.2f} "
                  f"{r['no_cache_ms'] / r['cache_ms']:>8.1f}x {r['cache_bytes']:>12,} {r['formula_bytes']:>14,} "
                  f"{r['max_abs_diff']:>14.1e}")
    print("(cache bytes: summed over the blocks' KVCache.nbytes; formula: models.arithmetic.kv_cache_bytes "
          f"= 2 · {args.n_layer} layers · tokens · {args.n_embd} · {np.dtype(config.dtype).itemsize} bytes;"
          "\n 'cached = full': largest difference between the cached step's logits and the full forward's)")

    generation = None
    if args.generate_tokens > 0:
        prompt = rng.integers(0, args.vocab_size, size=(1, 16))
        generation = {}
        for use_cache in (False, True):
            t0 = time.perf_counter()
            tokens = model.generate(prompt, args.generate_tokens, temperature=0.0, use_cache=use_cache)
            generation[use_cache] = (time.perf_counter() - t0, tokens)
        same = np.array_equal(generation[False][1], generation[True][1])
        print(f"\nGPT.generate, {args.generate_tokens} greedy tokens after a 16-token prompt: "
              f"{generation[False][0]:.2f} s without the cache, {generation[True][0]:.2f} s with it "
              f"(same tokens: {same})")
        generation = dict(tokens=args.generate_tokens, no_cache_s=generation[False][0],
                          cache_s=generation[True][0], same_tokens=same)

    path = plot(rows, config, out / "kv_cache.png")
    return dict(rows=rows, generation=generation, files=[path])


def plot(rows, config, path):
    ctx = np.array([r["context"] for r in rows])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    ax1.plot(ctx, [r["no_cache_ms"] for r in rows], "o-", label="without cache (re-read the context)")
    ax1.plot(ctx, [r["cache_ms"] for r in rows], "s-", label="with KV cache (one new token)")
    ax1.set(xscale="log", yscale="log", xlabel="context length (tokens)", ylabel="ms per generated token",
            title="time per token")
    ax1.xaxis.set_minor_locator(NullLocator())               # only the measured lengths as ticks
    ax1.set_xticks(ctx, [str(c) for c in ctx])
    ax1.legend(fontsize=8)
    ax2.plot(ctx, [r["formula_bytes"] / 1024 for r in rows], "-", color="gray", label="kv_cache_bytes formula")
    ax2.plot(ctx, [r["cache_bytes"] / 1024 for r in rows], "o", label="measured (KVCache.nbytes)")
    ax2.set(xlabel="context length (tokens)", ylabel="KiB per sequence",
            title=f"cache memory ({config.n_layer} layers, {config.n_embd} wide, {config.dtype})")
    ax2.legend(fontsize=8)
    return _common.save_figure(fig, path)


if __name__ == "__main__":
    main()
