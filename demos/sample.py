"""Generate text from a model saved by train_gpt.py.

    python demos/sample.py out/train_gpt --prompt "def" [--max-new-tokens 300 --temperature 0.8
                                                           --top-k 40 --top-p 0.95 --seed 0]

CHECKPOINT is the run's folder or its ckpt.safetensors; config.json (the GPTConfig) and
tokenizer.json are read from the same folder. Each new token is drawn from
softmax(logits / temperature), keeping only the top_k most likely tokens and/or the smallest set
whose probability reaches top_p (models/gpt.py, GPT.generate). temperature 0 picks the most likely
token every time. Without --seed every run differs; the seed used is printed so a sample can be redone.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np

import _common
from _common import UsageError
from models import tokenizer as tokenizers
from models.gpt import GPT, GPTConfig
from nn import state as checkpoint


def build_parser():
    p = _common.parser("sample", __doc__.splitlines()[0], out=False)
    p.add_argument("checkpoint", help="a train_gpt.py output folder, or the ckpt.safetensors in it")
    p.add_argument("--prompt", default="\n", help="text to continue")
    p.add_argument("--max-new-tokens", type=int, metavar="N", default=300)
    p.add_argument("--temperature", type=float, metavar="T", default=0.8, help="0: always the most likely token")
    p.add_argument("--top-k", type=int, metavar="K", help="sample among the k most likely tokens only (default: all)")
    p.add_argument("--top-p", type=float, metavar="P",
                   help="nucleus: the most likely tokens up to mass p, in (0, 1] (default: 1, all)")
    p.add_argument("--num-samples", type=int, metavar="N", default=1)
    p.add_argument("--seed", type=int, help="default: a fresh random seed (printed)")
    return p


def load_model(path) -> tuple[GPT, object]:
    """(model with the checkpoint's weights, tokenizer) from a run folder or its checkpoint file."""
    path = pathlib.Path(path)
    ckpt = path / "ckpt.safetensors" if path.is_dir() else path
    folder = ckpt.parent
    for needed in (ckpt, folder / "config.json", folder / "tokenizer.json"):
        if not needed.is_file():
            raise UsageError(f"{needed} is missing (expected the output folder of train_gpt.py)")
    config = GPTConfig.from_dict(json.loads((folder / "config.json").read_text())["model"])
    model = GPT(config)
    checkpoint.load(ckpt, model)
    return model, tokenizers.load(folder / "tokenizer.json")


def check_args(args):
    """UsageError for sampling settings GPT.generate cannot use."""
    if args.max_new_tokens < 0 or args.num_samples < 1:
        raise UsageError(f"--max-new-tokens must be >= 0 and --num-samples >= 1, got {args.max_new_tokens} "
                         f"and {args.num_samples}")
    if not args.temperature >= 0:
        raise UsageError(f"--temperature must be >= 0, got {args.temperature}")
    if args.top_k is not None and args.top_k < 1:
        raise UsageError(f"--top-k must be >= 1, got {args.top_k}")
    if args.top_p is not None and not 0 < args.top_p <= 1:
        raise UsageError(f"--top-p must be in (0, 1], got {args.top_p}")


def main(argv=None) -> list[str]:
    """Print and return `num_samples` continuations of the prompt (each includes the prompt)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_args(args)
        model, tokenizer = load_model(args.checkpoint)
        try:
            prompt_ids = tokenizer.encode(args.prompt)
        except ValueError as e:
            raise UsageError(f"cannot encode the prompt: {e} (a char tokenizer knows only the characters of "
                             "its training text)") from None
        if not prompt_ids:
            raise UsageError("the prompt is empty; give at least one character, e.g. --prompt $'\\n'")
    except UsageError as e:
        parser.error(str(e))
    seed = args.seed if args.seed is not None else int(np.random.default_rng().integers(2**31))
    texts = []
    for i in range(args.num_samples):
        ids = model.generate(np.asarray([prompt_ids], dtype=np.int64), args.max_new_tokens,
                             temperature=args.temperature, top_k=args.top_k, top_p=args.top_p, seed=seed + i)
        texts.append(tokenizer.decode(ids[0].tolist()))
        print(f"--- sample {i + 1} (seed {seed + i}) ---\n{texts[-1]}")
    return texts


if __name__ == "__main__":
    main()
