"""Adding numbers with a small GPT: long addition, learned from examples alone.

What it teaches: the same recipe as demos/sort.py (one sequence holds problem and answer, loss only
on the answer, greedy decoding, exact match on held-out problems), and how much the *format* of the
data matters. The sequence for 457 + 668 = 1125 with 3-digit numbers is

    4 5 7 6 6 8 | 5 2 1 1      the two numbers (zero-padded), then the sum's digits REVERSED

Why reversed: we add from the right, ones digit first, carrying into the next column. A model that
writes the sum left to right must know every carry before it writes the first digit, i.e. do the
whole addition "in its head" inside one step. Written ones-digit first, each new digit depends only
on two input digits and the carry of the column it has just written, which it can see: one simple
rule repeated, which a small transformer learns quickly. (The answer has one digit more than the
numbers, for the last carry; the demo un-reverses it for printing.)

There are 10**6 problems with 3-digit numbers; the validation and test problems are drawn first and
never appear in training. Training stops when validation reaches --target (99.9%, a margin above the
99% goal); the accuracy reported is the separate test set's. --digits 2 (10,000 problems) is faster.

Run:  python demos/add.py [--out DIR]      (default out/add/)
Writes loss.png (training loss and validation accuracy against steps).
"""
from __future__ import annotations

import os

# Tiny matrices: one BLAS thread is faster than a pool of them (whose hand-offs dominate at this size,
# and turn ruinous on a busy machine). Set before numpy loads; override from the shell if you like.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time

import numpy as np

import _common
from models.gpt import GPT, GPTConfig
from sort import accuracy, greedy_complete, held_out_split, plot, task_parser, train_until, training_ids
from tinygrad_like import Tensor

# ---------------------------------------------------------------- the data

def digits_of(numbers: np.ndarray, n_digits: int) -> np.ndarray:
    """(N,) integers -> (N, n_digits) decimal digits, most significant first, zero-padded."""
    powers = 10 ** np.arange(n_digits - 1, -1, -1)
    return (np.asarray(numbers)[:, None] // powers) % 10


def problems(ids: np.ndarray, n_digits: int) -> tuple[np.ndarray, np.ndarray]:
    """Problem number -> (prompt digits (N, 2·n_digits), answer digits (N, n_digits + 1)).

    Problem id = a · 10**n_digits + b. The prompt is a's digits then b's; the answer is the digits of
    a + b, zero-padded to n_digits + 1 and reversed (ones digit first, see the module docstring).
    """
    a, b = np.divmod(np.asarray(ids), 10 ** n_digits)
    prompt = np.concatenate([digits_of(a, n_digits), digits_of(b, n_digits)], axis=1)
    answer = digits_of(a + b, n_digits + 1)[:, ::-1]           # reversed: ones digit first
    return prompt, np.ascontiguousarray(answer)


def sequences(prompt: np.ndarray, answer: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) for next-token training, (N, T) each with T = len(prompt) + len(answer) - 1; targets
    on the prompt (which cannot be predicted: the numbers are random) are -1, i.e. no loss."""
    full = np.concatenate([prompt, answer], axis=1)
    x, y = full[:, :-1], full[:, 1:].copy()
    y[:, :prompt.shape[1] - 1] = -1
    return x, y


def as_number(answer_digits) -> int:
    """Reversed digits (ones first) back to the integer they spell."""
    return int("".join(str(d) for d in reversed(list(answer_digits))))


# ---------------------------------------------------------------- the demo

def parse(argv):
    p = task_parser("add", __doc__.splitlines()[0], steps=3000, eval_every=50)
    p.add_argument("--digits", type=_common.positive, default=3, help="digits per number")
    args = p.parse_args(argv)
    _common.check_heads(p, args.n_embd, args.n_head)
    return args


def main(argv=None) -> dict:
    args = parse(argv)
    out = _common.out_dir(args.out)
    start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    Tensor.manual_seed(args.seed)
    d, n_total = args.digits, 10 ** (2 * args.digits)

    val_ids, test_ids = held_out_split(n_total, args.n_val, args.n_test, rng)
    held_out = np.concatenate([val_ids, test_ids])
    val_in, val_out = problems(val_ids, d)
    test_in, test_out = problems(test_ids, d)

    config = GPTConfig(vocab_size=10, block_size=3 * d, n_layer=args.n_layer, n_head=args.n_head,
                       n_embd=args.n_embd)
    model = GPT(config)
    print(f"adding two {d}-digit numbers: {n_total:,} problems, {len(held_out):,} held out; "
          f"GPT with {model.num_params():,} parameters ({args.n_layer} layers, {args.n_head} heads, "
          f"{args.n_embd} wide)")
    a, b = divmod(int(val_ids[0]), 10 ** d)
    x, y = sequences(*problems(val_ids[:1], d))
    head = f"{a} + {b} = {a + b} is the sequence  "
    print(f"{head}x = {x[0].tolist()}\n{' ' * len(head)}y = {y[0].tolist()}  (answer reversed; -1: no loss)")

    def next_batch():
        return sequences(*problems(training_ids(args.batch_size, n_total, held_out, rng), d))

    losses, evals, train_time = train_until(model, next_batch, val_in, val_out, args)

    test_acc = accuracy(model, test_in, test_out)
    wall = time.perf_counter() - start
    print(f"\ntest exact match on {len(test_ids)} held-out sums: {test_acc:.4f} after {len(losses)} steps "
          f"({train_time:.1f} s training, {wall:.1f} s in all)")
    model.eval()
    shown = greedy_complete(model, test_in[:5], d + 1)
    for ident, got in zip(test_ids[:5], shown):
        a, b = divmod(int(ident), 10 ** d)
        print(f"  {a:>{d}} + {b:>{d}} = {as_number(got):>{d + 1}}  {'ok' if as_number(got) == a + b else 'WRONG'}")

    path = plot(losses, evals, args.target, out / "loss.png")
    return dict(test_accuracy=test_acc, val_accuracy=evals[-1][1], steps=len(losses), train_time_s=train_time,
                wall_time_s=wall, losses=losses, evals=evals, num_params=model.num_params(), files=[path])


if __name__ == "__main__":
    main()
