"""The task demos (sort, add, moe_router, kv_cache): their data, their measurements, and fast smoke runs.

Known answers come from independent computations: digits via str(), sums via Python ints, sorting via
sorted(), cache sizes from the formula 2 · n_layer · T · n_embd · 4 bytes written out here. Training to
99% is too slow for a unit test; the demos are run in full by hand (see the commit messages).
"""
import pathlib
import sys

import matplotlib.image
import numpy as np
import pytest

DEMOS = pathlib.Path(__file__).resolve().parents[1] / "demos"
sys.path.insert(0, str(DEMOS))

import add  # noqa: E402
import kv_cache  # noqa: E402
import moe_router  # noqa: E402
import sort  # noqa: E402


def decodes_as_png(path) -> bool:
    image = matplotlib.image.imread(path)
    return image.ndim == 3 and image.shape[0] > 50 and image.shape[1] > 50


# ---------------------------------------------------------------- sort: data

@pytest.mark.parametrize("length", [1, 3, 6])
def test_sort_problems_are_digits_and_their_sorted_order(length):
    ids = np.random.default_rng(length).integers(0, 10 ** length, size=50)
    inputs, outputs = sort.problems(ids, length)
    for i, row_in, row_out in zip(ids, inputs, outputs):
        digits = [int(c) for c in str(int(i)).zfill(length)]
        assert row_in.tolist() == digits
        assert row_out.tolist() == sorted(digits)


def test_sort_sequences_mask_the_input_and_shift_by_one():
    inputs, outputs = np.array([[3, 1, 2]]), np.array([[1, 2, 3]])
    x, y = sort.sequences(inputs, outputs)
    assert x.tolist() == [[3, 1, 2, 1, 2]]
    assert y.tolist() == [[-1, -1, 1, 2, 3]]       # loss only where the next token is an answer digit


def test_held_out_problems_never_reach_training():
    rng = np.random.default_rng(0)
    val, test = sort.held_out_split(100, 30, 30, rng)
    assert len(set(val.tolist()) | set(test.tolist())) == 60   # disjoint, no repeats
    held = np.concatenate([val, test])
    train = sort.training_ids(5000, 100, held, rng)
    assert not set(train.tolist()) & set(held.tolist())
    assert len(set(train.tolist())) == 40                     # every other problem is drawn


# ---------------------------------------------------------------- measuring accuracy

@pytest.mark.parametrize("predicted, expected, accuracy", [
    ([[1, 2], [3, 4]], [[1, 2], [3, 4]], 1.0),
    ([[2, 1], [4, 3]], [[1, 2], [3, 4]], 0.0),
    ([[1, 2], [3, 5], [0, 0], [9, 9]], [[1, 2], [3, 4], [0, 0], [9, 9]], 0.75),   # one wrong digit: row wrong
])
def test_exact_match(predicted, expected, accuracy):
    assert sort.exact_match(np.array(predicted), np.array(expected)) == accuracy


class Oracle:
    """A stand-in model whose generate() appends answer(prompt), or a wrong answer when told to."""

    def __init__(self, answer, wrong=False):
        self.answer, self.wrong = answer, wrong

    def generate(self, idx, max_new_tokens, temperature=1.0, **kw):
        assert temperature == 0.0                                 # greedy
        new = self.answer(np.asarray(idx))[:, :max_new_tokens]
        if self.wrong:
            new = (new + 1) % 10
        return np.concatenate([idx, new], axis=1)


@pytest.mark.parametrize("wrong, expected", [(False, 1.0), (True, 0.0)])
def test_accuracy_of_an_oracle_sorter_and_adder(wrong, expected):
    ids = np.arange(0, 10 ** 6, 997)
    inputs, outputs = sort.problems(ids, 6)
    sorter = Oracle(lambda idx: np.sort(idx, axis=1), wrong)
    assert sort.accuracy(sorter, inputs, outputs, batch=100) == expected

    prompt, answer = add.problems(np.arange(0, 10 ** 4, 37), 2)

    def add_digits(idx):  # from the prompt digits, written independently of add.problems
        total = [int("".join(map(str, r[:2]))) + int("".join(map(str, r[2:]))) for r in idx]
        return np.array([[int(c) for c in reversed(str(t).zfill(3))] for t in total])
    assert sort.accuracy(Oracle(add_digits, wrong), prompt, answer, batch=64) == expected


def test_greedy_complete_is_argmax_of_the_model_logits():
    """Our decoding (GPT.generate at temperature 0) against an argmax loop over full forwards."""
    from models.gpt import GPT, GPTConfig
    from tinygrad_like import Tensor, no_grad
    Tensor.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=10, block_size=11, n_layer=1, n_head=2, n_embd=16))
    prompts = np.random.default_rng(0).integers(0, 10, size=(7, 6))
    idx = prompts
    with no_grad():
        for _ in range(5):
            logits, _ = model(Tensor(idx))
            idx = np.concatenate([idx, logits.numpy()[:, -1].argmax(-1)[:, None]], axis=1)
    assert sort.greedy_complete(model, prompts, 5).tolist() == idx[:, 6:].tolist()


# ---------------------------------------------------------------- add: data

@pytest.mark.parametrize("n_digits", [1, 2, 3])
def test_add_problems_hold_both_numbers_and_the_reversed_sum(n_digits):
    ids = np.random.default_rng(n_digits).integers(0, 10 ** (2 * n_digits), size=50)
    prompt, answer = add.problems(ids, n_digits)
    assert prompt.shape == (50, 2 * n_digits) and answer.shape == (50, n_digits + 1)
    for i, p, s in zip(ids, prompt, answer):
        text = str(int(i)).zfill(2 * n_digits)                   # a's digits then b's
        a, b = int(text[:n_digits]), int(text[n_digits:])
        assert p.tolist() == [int(c) for c in text]
        assert s.tolist() == [int(c) for c in str(a + b).zfill(n_digits + 1)][::-1]
        assert add.as_number(s) == a + b


def test_add_sequences_mask_the_numbers():
    prompt, answer = add.problems(np.array([5768]), 2)           # 57 + 68 = 125, reversed 5 2 1
    x, y = add.sequences(prompt, answer)
    assert x.tolist() == [[5, 7, 6, 8, 5, 2]]
    assert y.tolist() == [[-1, -1, -1, 5, 2, 1]]


# ---------------------------------------------------------------- smoke runs (tiny settings)

TINY_GPT = ["--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--batch-size", "8", "--steps", "3",
            "--eval-every", "2", "--n-val", "20", "--n-test", "20"]


@pytest.mark.parametrize("demo", [sort, add])
def test_task_demo_runs_and_writes_its_plot(demo, tmp_path):
    r = demo.main(["--out", str(tmp_path)] + TINY_GPT)
    assert r["steps"] == 3 and len(r["losses"]) == 3 and all(np.isfinite(r["losses"]))
    assert [s for s, _ in r["evals"]] == [2, 3]
    assert 0.0 <= r["test_accuracy"] <= 1.0
    assert r["files"] == [tmp_path / "loss.png"] and decodes_as_png(r["files"][0])


def test_moe_router_records_shares_that_sum_to_one(tmp_path):
    r = moe_router.main(["--out", str(tmp_path), "--steps", "4", "--n-layer", "2", "--n-embd", "16",
                         "--expert-hidden", "16", "--block-size", "8", "--batch-size", "2", "--n-chars", "5000"])
    assert [run["coef"] for run in r["runs"]] == [0.0, 0.05]
    for run in r["runs"]:
        shares = run["shares"]
        assert shares.shape == (4, 2, 8)                          # (steps, blocks, experts)
        np.testing.assert_allclose(shares.sum(-1), 1.0)
        assert (shares >= 0).all()
        assert len(run["lm_loss"]) == 4 and np.isfinite(run["lm_loss"]).all()
    assert decodes_as_png(tmp_path / "expert_share.png")


@pytest.mark.parametrize("shares, max_share, top2, entropy, idle", [
    ([1 / 8] * 8, 1 / 8, 1 / 4, 3.0, 0),                         # even: log2(8) bits
    ([0.5, 0.5, 0, 0, 0, 0, 0, 0], 0.5, 1.0, 1.0, 6),            # collapsed onto two experts
    ([0.5, 0.25, 0.25, 0.0], 0.5, 0.75, 1.5, 1),
])
def test_collapse_stats(shares, max_share, top2, entropy, idle):
    s = moe_router.collapse_stats(np.array(shares))
    assert s["max_share"] == pytest.approx(max_share)
    assert s["top2_share"] == pytest.approx(top2)
    assert s["entropy_bits"] == pytest.approx(entropy)
    assert s["idle_experts"] == idle


def test_kv_cache_bytes_match_the_formula(tmp_path):
    n_layer, n_embd = 2, 16
    r = kv_cache.main(["--out", str(tmp_path), "--contexts", "4", "8", "12", "--n-layer", str(n_layer),
                       "--n-head", "2", "--n-embd", str(n_embd), "--vocab-size", "11", "--repeats", "1",
                       "--generate-tokens", "5"])
    assert [row["context"] for row in r["rows"]] == [4, 8, 12]
    for row in r["rows"]:
        by_hand = 2 * n_layer * row["context"] * n_embd * 4      # keys and values, float32
        assert row["cache_bytes"] == by_hand == row["formula_bytes"]
        assert row["max_abs_diff"] < 1e-5                         # the cached step gives the full forward's logits
        assert row["no_cache_ms"] > 0 and row["cache_ms"] > 0
    assert r["generation"]["same_tokens"]
    assert decodes_as_png(tmp_path / "kv_cache.png")
