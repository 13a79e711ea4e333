"""Explore a checkpoint in one HTML page: tokens, attention, logit lens, next-token odds, experts.

    python demos/explore.py out/train_gpt --prompt "def main"       [--new-tokens 16 --temperature 0]
    python demos/explore.py my_hf_dir --ids "5 9 2 7"                (a GPT.from_pretrained directory)

CHECKPOINT is a train_gpt.py output folder (ckpt.safetensors, config.json, tokenizer.json) or a
Hugging Face style directory (config.json + model.safetensors, read by GPT.from_pretrained; without a
tokenizer of ours, give the prompt as token ids with --ids). The prompt is continued by --new-tokens
tokens (greedy with --temperature 0, else sampled with --seed), then the whole sequence is run once
with the activation cache (models/inside.py) and the logit lens (models/lens.py), and everything the
page shows is stored in it. The page (default out/explore/explore.html) loads nothing from outside the
file and needs no server: open it in any browser, or mail it. It shows
  * the tokens as the tokenizer cut them (click one to choose the position for the next-token view);
  * attention for each layer and head as a heat map, or the average over heads (with GQA: which
    key/value head each query head reads);
  * the logit lens: for each layer and position the top token and its probability, the top 5 on hover;
  * the next-token distribution at any position, with a temperature slider that recomputes the
    softmax in the page from the stored logits;
  * with experts, which experts each token was routed to and with what weights;
  * under each view the formula behind it, with the numbers on hover.
"""
from __future__ import annotations

import base64
import json
import pathlib

import numpy as np

import _common
from _common import UsageError
from models.gpt import GPT
from models.lens import logit_lens
from models.tokenizer import load as load_tokenizer

TEMPLATE = pathlib.Path(__file__).with_name("explore.html")
TOP_NEXT = 20   # tokens per position whose names the page knows (the top 20 logits are the top 20 at any temperature)


def load(path) -> tuple[GPT, object | None]:
    """(model, tokenizer or None) from a train_gpt.py folder (or its ckpt file) or a from_pretrained directory."""
    path = pathlib.Path(path)
    if (path / "model.safetensors").is_file() and not (path / "ckpt.safetensors").is_file():
        model = GPT.from_pretrained(path)
        tok = path / "tokenizer.json"
        try:
            tokenizer = load_tokenizer(tok) if tok.is_file() else None
        except (KeyError, ValueError, TypeError):
            tokenizer = None   # a transformers tokenizer.json, not ours: the prompt must then be ids
        return model, tokenizer
    from sample import load_model  # the train_gpt.py folder layout lives there
    return load_model(path)


def token_text(tokenizer, i: int) -> str:
    """How one token reads: its text (spaces, newlines, tabs made visible), or #id without a tokenizer."""
    if tokenizer is None:
        return f"#{i}"
    try:
        text = tokenizer.decode([int(i)])
    except (ValueError, KeyError, IndexError):
        return f"#{i}"
    return text.replace(" ", "␣").replace("\n", "⏎").replace("\t", "⇥") or "∅"


def _f32(a: np.ndarray) -> str:
    """Little-endian float32 bytes as base64: exact values, a third of the size of JSON text."""
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f4").tobytes()).decode("ascii")


def page_data(model: GPT, ids: np.ndarray, n_prompt: int, tokenizer, title: str) -> dict:
    """Everything the page shows, for the sequence ids (T,) whose first n_prompt tokens are the prompt."""
    c = model.config
    idx = ids[None, :]
    targets = np.append(ids[1:], -1)[None, :]
    logits, cache = model.run_with_cache(idx)
    lens = logit_lens(model, idx, targets, k=5)
    T, V, L = len(ids), c.vocab_size, c.n_layer
    top_next = np.argsort(-logits[0], axis=-1, kind="stable")[:, :min(TOP_NEXT, V)]         # (T, 20)
    shown = set(ids.tolist()) | set(top_next.ravel().tolist()) | set(lens.top.ravel().tolist())
    data = dict(
        title=title, n_layer=L, n_head=c.n_head, n_kv_head=c.kv_heads, vocab_size=V, T=T, n_prompt=n_prompt,
        config={k: v for k, v in c.to_dict().items()}, ids=ids.tolist(),
        names={str(i): token_text(tokenizer, i) for i in sorted(shown)},
        attention=_f32(np.stack([cache[f"transformer.h.{i}.attn.pattern"][0] for i in range(L)])),  # (L, nh, T, T)
        logits=_f32(logits[0]),                                                                     # (T, V)
        top_next=top_next.tolist(),
        lens=dict(names=lens.names, top=lens.top[:, 0].tolist(), probs=lens.probs[:, 0].tolist(),
                  loss=None if lens.loss is None else lens.loss.tolist()),
        experts=None)
    if c.n_expert > 0:
        data["experts"] = dict(
            n_expert=c.n_expert, top_k=c.top_k,
            chosen=[cache[f"transformer.h.{i}.mlp.experts"][0].tolist() for i in range(L)],   # (L, T, k)
            weights=[cache[f"transformer.h.{i}.mlp.weights"][0].tolist() for i in range(L)],  # (L, T, k)
            probs=[cache[f"transformer.h.{i}.mlp.probs"][0].tolist() for i in range(L)])      # (L, T, E)
    return data


def write_page(data: dict, path) -> pathlib.Path:
    """The template with the data inlined as JSON ("</" escaped so no string can end the script)."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    html = TEMPLATE.read_text().replace("/*DATA*/null", text)
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(path)                                          # atomic: never a half-written page
    return path


def build_parser():
    p = _common.parser("explore", __doc__.splitlines()[0], out=False)
    p.add_argument("checkpoint", help="a train_gpt.py output folder, or a directory GPT.from_pretrained reads")
    p.add_argument("--prompt", default="\n", help="text to start from")
    p.add_argument("--ids", help="the prompt as token ids ('5 9 2'), for a model without our tokenizer "
                                  "(default: --prompt, encoded)")
    p.add_argument("--new-tokens", type=int, default=16, metavar="N", help="tokens to generate after the prompt")
    p.add_argument("--temperature", type=float, default=0.0, metavar="T", help="0: greedy continuation")
    p.add_argument("--seed", type=int, default=0, help="for a sampled continuation")
    p.add_argument("--out", metavar="FILE", default="out/explore/explore.html", help="the page to write")
    return p


def prompt_ids(args, tokenizer, vocab_size: int) -> list[int]:
    if args.ids is not None:
        try:
            ids = [int(t) for t in args.ids.replace(",", " ").split()]
        except ValueError:
            raise UsageError(f"--ids must be integers separated by spaces, got {args.ids!r}") from None
        if not ids or min(ids) < 0 or max(ids) >= vocab_size:
            raise UsageError(f"--ids must be 1 or more ids in 0..{vocab_size - 1}, got {args.ids!r}")
        return ids
    if tokenizer is None:
        raise UsageError("this checkpoint has no tokenizer of ours: give the prompt as token ids with --ids")
    try:
        ids = tokenizer.encode(args.prompt)
    except ValueError as e:
        raise UsageError(f"cannot encode the prompt: {e}") from None
    if not ids:
        raise UsageError("the prompt is empty")
    return ids


def main(argv=None) -> pathlib.Path:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.new_tokens < 0 or not args.temperature >= 0:
            raise UsageError(f"--new-tokens must be >= 0 and --temperature >= 0, got {args.new_tokens}, "
                             f"{args.temperature}")
        if not pathlib.Path(args.checkpoint).exists():
            raise UsageError(f"{args.checkpoint} does not exist")
        model, tokenizer = load(args.checkpoint)
        ids = prompt_ids(args, tokenizer, model.config.vocab_size)
    except UsageError as e:
        parser.error(str(e))
    block = model.config.block_size
    ids = ids[-block:]
    full = model.generate(np.asarray([ids]), args.new_tokens, temperature=args.temperature, seed=args.seed)[0]
    n_prompt = len(ids)
    if len(full) > block:                      # keep the window the model can read at once
        n_prompt, full = max(0, n_prompt - (len(full) - block)), full[-block:]
    title = f"{pathlib.Path(args.checkpoint).name}: {args.prompt if args.ids is None else args.ids!r}"
    path = write_page(page_data(model, full, n_prompt, tokenizer, title), args.out)
    text = "".join(token_text(tokenizer, i) for i in full)
    print(f"{len(full)} tokens ({n_prompt} of the prompt): {text}")
    print(f"  wrote {path}  ({path.stat().st_size:,} bytes)")
    return path


if __name__ == "__main__":
    main()
