"""GPTConfig: every shape choice of a decoder (or encoder) transformer, in one dataclass.

One config describes GPT-2, a BERT-shaped embedding model and a Mixtral-shaped
mixture of experts, because they differ only in switches:

    norm        "layernorm" | "rmsnorm"          (RMSNorm has no bias, no mean)
    mlp         "gelu" | "relu" | "swiglu"       (SwiGLU's c_fc is twice as tall: gate and up)
    pos         "learned" | "rope"               (RoPE adds no parameters)
    prenorm     x + f(norm(x))  vs  norm(x + f(x))   (the 2017 original was post-norm)
    causal      mask the future (language model) or not (reading/embedding model)
    n_kv_head   fewer key/value heads than query heads (grouped-query attention)
    n_expert    > 0 replaces each block's MLP by n_expert MLPs and a router picking top_k
    attn_only   blocks without ln_2 and MLP: x = x + attn(ln_1(x)) only (the toy models in which
                Elhage et al. 2021 found induction heads; demos/induction.py)

Sizes are checked at construction, so a bad config fails here with the field's
name, not later with a reshape error. Parameter counts, FLOPs and KV-cache sizes
computed from a config live in models/arithmetic.py.

    >>> c = GPTConfig.gpt2_small()
    >>> c.head_dim, c.kv_heads, c.hidden
    (64, 12, 3072)
"""
from dataclasses import asdict, dataclass, fields
from numbers import Integral, Real

REQUIRED = ("vocab_size", "block_size", "n_layer", "n_head", "n_embd")
CHOICES = {
    "norm": ("layernorm", "rmsnorm"),
    "mlp": ("gelu", "relu", "swiglu"),
    "pos": ("learned", "rope"),
    "dtype": ("float32", "float64"),
}


@dataclass
class GPTConfig:
    vocab_size: int
    block_size: int            # longest sequence: rows of wpe, and the RoPE table
    n_layer: int
    n_head: int
    n_embd: int                # d, the width of the residual stream
    n_kv_head: int | None = None  # None: one key/value head per query head
    dropout: float = 0.0
    bias: bool = True          # biases in every Linear and LayerNorm (never in lm_head, router)
    norm: str = "layernorm"
    mlp: str = "gelu"
    mlp_hidden: int | None = None  # None: 4 * n_embd
    pos: str = "learned"
    prenorm: bool = True
    causal: bool = True
    tie_weights: bool = True   # lm_head shares transformer.wte's matrix
    n_expert: int = 0          # 0: a dense MLP per block
    top_k: int = 2             # experts used per token (only read when n_expert > 0)
    dtype: str = "float32"
    attn_only: bool = False    # no MLP (and no ln_2) in the blocks; mlp, mlp_hidden, n_expert unused

    def __post_init__(self):
        for name in REQUIRED:
            _check_int(name, getattr(self, name), minimum=1)
        for name in ("n_kv_head", "mlp_hidden"):
            if getattr(self, name) is not None:
                _check_int(name, getattr(self, name), minimum=1)
        _check_int("n_expert", self.n_expert, minimum=0)
        _check_int("top_k", self.top_k, minimum=1)
        for name, allowed in CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        for name in ("bias", "prenorm", "causal", "tie_weights", "attn_only"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if not (isinstance(self.dropout, Real) and 0.0 <= self.dropout < 1.0):
            raise ValueError(f"dropout must be a number in [0, 1), got {self.dropout!r}")
        # the shapes must fit together
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd={self.n_embd} is not divisible by n_head={self.n_head}")
        if self.n_head % self.kv_heads:
            raise ValueError(f"n_head={self.n_head} is not divisible by n_kv_head={self.n_kv_head}")
        if self.pos == "rope" and self.head_dim % 2:
            raise ValueError(f"pos='rope' rotates pairs of dimensions, so head_dim must be even, "
                             f"got head_dim={self.head_dim} (n_embd={self.n_embd}, n_head={self.n_head})")
        if self.n_expert > 0 and self.top_k > self.n_expert:
            raise ValueError(f"top_k={self.top_k} is larger than n_expert={self.n_expert}")
        if self.attn_only and self.n_expert > 0:
            raise ValueError(f"attn_only=True has no MLP to replace by experts, but n_expert={self.n_expert}")

    # ---------------------------------------------------------------- derived sizes

    @property
    def head_dim(self) -> int:
        """Width of one attention head: n_embd // n_head."""
        return self.n_embd // self.n_head

    @property
    def kv_heads(self) -> int:
        """Number of key/value heads: n_kv_head, or n_head when there is no grouping."""
        return self.n_kv_head or self.n_head

    @property
    def hidden(self) -> int:
        """Hidden width of the MLP: mlp_hidden, or 4 * n_embd."""
        return self.mlp_hidden or 4 * self.n_embd

    # ---------------------------------------------------------------- presets

    @classmethod
    def gpt2_small(cls, **overrides) -> "GPTConfig":
        """GPT-2 small (Radford et al. 2019): 124,439,808 parameters with tied embeddings."""
        return cls(**{**dict(vocab_size=50257, block_size=1024, n_layer=12, n_head=12, n_embd=768), **overrides})

    @classmethod
    def bge_small(cls, **overrides) -> "GPTConfig":
        """The shape of BAAI/bge-small-en-v1.5 (a BERT encoder): about 33 million parameters.

        Post-norm and bidirectional. The real model also has token-type embeddings,
        a LayerNorm on the embeddings and a pooler, which this architecture lacks.
        """
        return cls(**{**dict(vocab_size=30522, block_size=512, n_layer=12, n_head=12, n_embd=384,
                             mlp="gelu", mlp_hidden=1536, pos="learned", prenorm=False, causal=False,
                             tie_weights=True), **overrides})

    @classmethod
    def mixtral_8x7b(cls, **overrides) -> "GPTConfig":
        """The shape of Mixtral 8x7B (Jiang et al. 2024, arXiv:2401.04088).

        8 SwiGLU experts per block, 2 used per token, grouped-query attention with
        8 KV heads, RMSNorm, RoPE, no biases, untied embeddings: 46,702,792,704
        parameters held, 12,879,925,248 used per token. Never instantiate it.
        """
        return cls(**{**dict(vocab_size=32000, block_size=32768, n_layer=32, n_head=32, n_embd=4096,
                             n_kv_head=8, bias=False, norm="rmsnorm", mlp="swiglu", mlp_hidden=14336,
                             pos="rope", tie_weights=False, n_expert=8, top_k=2), **overrides})

    # ---------------------------------------------------------------- JSON round trip

    def to_dict(self) -> dict:
        """Plain dict of every field, ready for json.dumps (checkpoints store this)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "GPTConfig":
        """Inverse of to_dict. Unknown keys are an error, not silently dropped:
        a checkpoint from a different architecture should fail loudly."""
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(d) - set(known))
        if unknown:
            raise ValueError(f"unknown GPTConfig field(s) {unknown}; the fields are {known}")
        missing = [name for name in REQUIRED if name not in d]
        if missing:
            raise ValueError(f"GPTConfig.from_dict is missing required field(s) {missing}")
        return cls(**d)


def _check_int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
