"""Transformer arithmetic from a GPTConfig alone: parameters, active parameters, FLOPs, KV cache.

Nothing here allocates an array, so Mixtral 8x7B costs the same to count as a
3-layer toy. Everything is derived from one list, `named_shapes`, the name and
shape of every parameter in nanoGPT's naming (the names models/gpt.py uses):

    transformer.wte                      (vocab_size, d)
    transformer.wpe                      (block_size, d)              only when pos == "learned"
    transformer.h.{i}.ln_1               weight (d) [+ bias (d)]      LayerNorm with bias; RMSNorm: weight only
    transformer.h.{i}.attn.c_attn        ((n_head + 2 kv_heads) head_dim, d) [+ bias]   q, k, v stacked
    transformer.h.{i}.attn.c_proj        (d, d) [+ bias (d)]
    transformer.h.{i}.ln_2               as ln_1
    transformer.h.{i}.mlp.c_fc           (hidden, d), or (2 hidden, d) for SwiGLU [+ bias]
    transformer.h.{i}.mlp.c_proj         (d, hidden) [+ bias (d)]
      with n_expert > 0 the MLP becomes
    transformer.h.{i}.mlp.router         (n_expert, d), no bias
    transformer.h.{i}.mlp.experts.{e}.c_fc / .c_proj     one MLP as above per expert
    transformer.ln_f                     as ln_1
    lm_head                              (vocab_size, d), no bias; a parameter only when not tie_weights

GPT-2 small by hand (d = 768, 12 blocks, vocab 50,257, 1,024 positions):

    wte 50,257 * 768 = 38,597,376      wpe 1,024 * 768 = 786,432
    per block: attention 4 * 768^2 = 2,359,296 + 3,072 biases, MLP 2 * 768 * 3,072
    = 4,718,592 + 3,840 biases, two LayerNorms 4 * 768 = 3,072: 7,087,872
    12 blocks 85,054,464 + ln_f 1,536 + embeddings = 124,439,808

    >>> from models.config import GPTConfig
    >>> count_params(GPTConfig.gpt2_small())
    124439808
    >>> m = GPTConfig.mixtral_8x7b()
    >>> count_params(m), count_active_params(m)
    (46702792704, 12879925248)
"""
from math import prod

from models.config import GPTConfig

EMBEDDINGS = ("transformer.wte.weight", "transformer.wpe.weight", "lm_head.weight")


def named_shapes(config: GPTConfig, active_only: bool = False) -> list[tuple[str, tuple[int, ...]]]:
    """The (name, shape) of every parameter, in model order.

    active_only=True lists, in each mixture-of-experts block, only top_k experts:
    the parameters one token actually passes through (which experts they are
    changes per token, but not how many numbers they hold).
    """
    c = config
    shapes = [("transformer.wte.weight", (c.vocab_size, c.n_embd))]
    if c.pos == "learned":
        shapes.append(("transformer.wpe.weight", (c.block_size, c.n_embd)))
    n_listed = c.top_k if active_only else c.n_expert
    for i in range(c.n_layer):
        shapes += _block(c, f"transformer.h.{i}.", n_listed)
    shapes += _norm(c, "transformer.ln_f")
    if not c.tie_weights:
        shapes.append(("lm_head.weight", (c.vocab_size, c.n_embd)))
    return shapes


def _linear(prefix, n_out, n_in, bias):
    return [(f"{prefix}.weight", (n_out, n_in))] + ([(f"{prefix}.bias", (n_out,))] if bias else [])


def _norm(c, prefix):
    has_bias = c.bias and c.norm == "layernorm"  # RMSNorm only rescales: never a bias
    return [(f"{prefix}.weight", (c.n_embd,))] + ([(f"{prefix}.bias", (c.n_embd,))] if has_bias else [])


def _mlp(c, prefix):
    up = 2 * c.hidden if c.mlp == "swiglu" else c.hidden  # SwiGLU: gate and up projections stacked
    return _linear(f"{prefix}.c_fc", up, c.n_embd, c.bias) + _linear(f"{prefix}.c_proj", c.n_embd, c.hidden, c.bias)


def _block(c, p, n_experts_listed):
    qkv = (c.n_head + 2 * c.kv_heads) * c.head_dim
    shapes = _norm(c, p + "ln_1")
    shapes += _linear(p + "attn.c_attn", qkv, c.n_embd, c.bias)
    shapes += _linear(p + "attn.c_proj", c.n_embd, c.n_embd, c.bias)
    if c.attn_only:
        return shapes
    shapes += _norm(c, p + "ln_2")
    if c.n_expert == 0:
        shapes += _mlp(c, p + "mlp")
    else:
        shapes += _linear(p + "mlp.router", c.n_expert, c.n_embd, bias=False)
        for e in range(n_experts_listed):
            shapes += _mlp(c, f"{p}mlp.experts.{e}")
    return shapes


# -------------------------------------------------------------------- counts

def count_params(config: GPTConfig) -> int:
    """Parameters the model holds (tied embeddings counted once)."""
    return sum(prod(shape) for _, shape in named_shapes(config))


def count_active_params(config: GPTConfig) -> int:
    """Parameters one token passes through: with experts, the router and only
    top_k of the n_expert MLPs in each block; for a dense model, count_params."""
    return sum(prod(shape) for _, shape in named_shapes(config, active_only=True))


def embedding_params(config: GPTConfig) -> int:
    """The vocabulary and position tables: wte, wpe and an untied lm_head.
    Kaplan et al. (2020) leave these out of N, the size that predicts compute."""
    return sum(prod(shape) for name, shape in named_shapes(config) if name in EMBEDDINGS)


def breakdown(config: GPTConfig) -> dict:
    """Parameter counts by part, for teaching and the docs.

    Keys: wte, wpe, lm_head, ln_f; per_block (a dict: norm, attn_weights,
    attn_biases, router, mlp_weights, mlp_biases, total; every block is the
    same); blocks (n_layer * per_block total); embedding (wte + wpe + lm_head);
    non_embedding; total; active.

    >>> b = breakdown(GPTConfig.gpt2_small())
    >>> b["per_block"]["attn_weights"], b["per_block"]["mlp_biases"]
    (2359296, 3840)
    """
    c = config
    per_block = dict(norm=0, attn_weights=0, attn_biases=0, router=0, mlp_weights=0, mlp_biases=0)
    top = dict(wte=0, wpe=0, ln_f=0, lm_head=0)
    for name, shape in named_shapes(c):
        n = prod(shape)
        if name.startswith("transformer.h.0."):
            part = name[len("transformer.h.0."):]
            kind = "biases" if part.endswith(".bias") else "weights"
            if part.startswith("ln_"):
                per_block["norm"] += n
            elif part.startswith("attn."):
                per_block["attn_" + kind] += n
            elif part.startswith("mlp.router"):
                per_block["router"] += n
            else:
                per_block["mlp_" + kind] += n
        elif not name.startswith("transformer.h."):
            top[name.removeprefix("transformer.").split(".")[0]] += n
    per_block["total"] = sum(per_block.values())
    total = count_params(c)
    embedding = embedding_params(c)
    return dict(**top, per_block=per_block, blocks=c.n_layer * per_block["total"],
                embedding=embedding, non_embedding=total - embedding,
                total=total, active=count_active_params(c))


# -------------------------------------------------------------------- compute and memory

def flops_per_token(config: GPTConfig, n_ctx: int | None = None) -> int:
    """Training FLOPs per token (forward + backward), after Kaplan et al. 2020, Table 1:

        C = 6 N + 6 n_layer n_ctx d_attn

    N is the non-embedding active parameter count (count_active_params minus
    wte, wpe and an untied lm_head). Each weight costs a multiply and an add
    in the forward pass (2N), and the backward pass costs twice the forward
    (gradients for the inputs and for the weights), hence 6N. The second term
    is attention's own work, which has no weights: the scores QK^T and the
    mix of values, each n_ctx * d_attn multiply-adds per token per block over
    a full context. Kaplan counts 2 n_layer n_ctx d_attn for the forward pass,
    times 3 for training; d_attn = n_head * head_dim = n_embd. n_ctx defaults
    to block_size.

    The PaLM paper (Chowdhery et al. 2022, appendix B) writes 6N + 12 L H Q T,
    which counts both products over the full context: twice our second term.
    Under a causal mask a token sees on average half the context, so the
    smaller figure is the fairer one for a decoder. Either way, 6N dominates
    for short contexts; attention takes over once n_ctx is comparable to 12 d.
    """
    c = config
    n_ctx = c.block_size if n_ctx is None else n_ctx
    if isinstance(n_ctx, bool) or not isinstance(n_ctx, int) or n_ctx < 1:
        raise ValueError(f"n_ctx must be a positive integer, got {n_ctx!r}")
    n = count_active_params(c) - embedding_params(c)
    d_attn = c.n_head * c.head_dim
    return 6 * n + 6 * c.n_layer * n_ctx * d_attn


def kv_cache_bytes(config: GPTConfig, n_tokens: int, bytes_per_number: int = 2, batch: int = 1) -> int:
    """Memory for cached keys and values while generating:

        2 (keys and values) * n_layer * n_tokens * kv_heads * head_dim * bytes_per_number * batch

    Without grouping kv_heads * head_dim = n_embd; grouped-query attention
    divides the cache by n_head / n_kv_head. The chapter's case (n_layer 32, n_embd 4,096,
    8,192 tokens, 2-byte numbers) is 4,294,967,296 bytes, about 4.3 GB per conversation.
    """
    for name, value in (("n_tokens", n_tokens), ("bytes_per_number", bytes_per_number), ("batch", batch)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    c = config
    return 2 * c.n_layer * n_tokens * c.kv_heads * c.head_dim * bytes_per_number * batch
