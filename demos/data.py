"""The data side of `train_gpt.py`: the text, its train/validation split, token ids, random batches,
and the unigram baseline every language model has to beat.

    text ──split 90/10──> train text, val text ──tokenizer──> train ids (N,), val ids (M,)
    batch: B random windows of T+1 consecutive ids; x = window[:T], y = window[1:]   (B, T) each

The default text needs no download: the Python reference documentation shipped with every CPython
(`pydoc_data.topics`, about 465 KB of English prose and code examples), its topics joined in sorted
order so the text is the same on every machine with the same Python.
"""
from __future__ import annotations

import math
import pathlib

import numpy as np

from models.tokenizer import BPETokenizer, CharTokenizer

DEFAULT_SOURCE = "pydoc_data.topics"


def default_text() -> str:
    """The CPython reference topics (`help("if")`, `help("FORMATTING")`, ...) as one string."""
    from pydoc_data.topics import topics
    return "\n\n".join(topics[key] for key in sorted(topics))


def load_text(path=None) -> tuple[str, str]:
    """(text, where it came from): the UTF-8 file at `path`, or the default text when path is None.
    OSError for a missing file or a folder, ValueError for an empty or undecodable one; each message names the path."""
    if path is None:
        return default_text(), DEFAULT_SOURCE
    path = pathlib.Path(path)
    if not path.exists():
        raise FileNotFoundError(f"--text: no such file {str(path)!r}")
    if path.is_dir():
        raise IsADirectoryError(f"--text: {str(path)!r} is a folder, not a text file")
    try:
        text = path.read_text(encoding="utf-8")  # also reads what is not a regular file (/dev/stdin)
    except UnicodeDecodeError as e:
        raise ValueError(f"--text: {str(path)!r} is not UTF-8 text ({e})") from None
    if not text.strip():
        raise ValueError(f"--text: {str(path)!r} is empty" + (" (only white space)" if text else ""))
    return text, str(path)


def split_text(text: str, train_fraction: float = 0.9) -> tuple[str, str]:
    """The first `train_fraction` of the characters for training, the rest for validation.

    A contiguous cut (not random lines) so that validation text is text the model has never seen,
    not neighbours of training lines.
    """
    if not 0.0 < train_fraction < 1.0:
        raise ValueError(f"train_fraction must be in (0, 1), got {train_fraction}")
    cut = int(len(text) * train_fraction)
    return text[:cut], text[cut:]


def build_tokenizer(kind: str, train_text: str, full_text: str, vocab_size: int = 512):
    """A tokenizer for the run.

    "char": one id per character of the *whole* text, so every validation character can be encoded
    (a character set carries no statistics; the unigram baseline smooths over it the same way).
    "bpe": byte-level BPE trained on the training split only, with `vocab_size` ids.
    """
    if kind == "char":
        return CharTokenizer.from_text(full_text)
    if kind == "bpe":
        return BPETokenizer.train(train_text, vocab_size)
    raise ValueError(f"--tokenizer must be 'char' or 'bpe', got {kind!r}")


def encode(tokenizer, text: str) -> np.ndarray:
    """Token ids of `text` as an int64 array (N,)."""
    return np.asarray(tokenizer.encode(text), dtype=np.int64)


def get_batch(data: np.ndarray, batch_size: int, block_size: int, rng: np.random.Generator):
    """B random windows of the id stream: inputs x and next-token targets y, both (B, T) int64.

    y[b, t] = x[b, t + 1] inside the window, so one window trains T predictions at once.
    `rng` decides the offsets; pass the library's generator (tinygrad_like.random.rng()) so that a
    checkpoint, which saves that generator's state, resumes with exactly the same batches.
    """
    if len(data) < block_size + 1:
        raise ValueError(f"get_batch: the data has {len(data)} tokens, fewer than block_size + 1 = "
                         f"{block_size + 1}; use a smaller --block-size or a longer text")
    starts = rng.integers(0, len(data) - block_size, size=batch_size)        # (B,)
    offsets = starts[:, None] + np.arange(block_size + 1)                      # (B, T+1)
    windows = data[offsets]                                                    # (B, T+1)
    return windows[:, :-1], windows[:, 1:]


def unigram_loss(train_ids: np.ndarray, val_ids: np.ndarray, vocab_size: int, alpha: float = 1.0) -> float:
    """Cross-entropy on val, in nats per token, of the best model that ignores context.

        p(v) = (count_train(v) + α) / (N_train + α·V)       (add-α smoothing: unseen ids keep p > 0)
        loss = −(1/M) Σ_i log p(val_i)

    A language model that does not clearly beat this has learned nothing beyond token frequencies.
    """
    counts = np.bincount(train_ids, minlength=vocab_size).astype(np.float64)   # (V,)
    log_p = np.log(counts + alpha) - math.log(len(train_ids) + alpha * vocab_size)
    return float(-log_p[val_ids].mean())
