"""demos/induction.py: the measures on hand-made inputs, then one training run that must find an
induction head (score above 0.5 after training, chance before) whose ablation undoes the copying."""
import math
import pathlib
import sys

import numpy as np
import pytest

DEMOS = pathlib.Path(__file__).resolve().parents[1] / "demos"
if str(DEMOS) not in sys.path:
    sys.path.append(str(DEMOS))
import induction  # noqa: E402


def test_repeated_sequences_and_targets():
    seq = induction.repeated(np.random.default_rng(0), 3, 5, 10)
    assert seq.shape == (3, 10) and np.array_equal(seq[:, :5], seq[:, 5:])
    y = induction.targets_of(seq)
    assert np.array_equal(y[:, :-1], seq[:, 1:]) and np.all(y[:, -1] == -1)


def test_induction_score_of_a_perfect_and_a_uniform_pattern():
    L, T = 6, 12
    perfect = np.zeros((1, 2, T, T))
    for t in range(T):
        perfect[0, 0, t, t - L + 1 if t >= L else t] = 1.0         # head 0: the induction stripe
        perfect[0, 1, t, max(t - 1, 0)] = 1.0                        # head 1: previous token
    uniform = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    cache = {"transformer.h.0.attn.pattern": perfect,
             "transformer.h.1.attn.pattern": np.broadcast_to(uniform, (1, 2, T, T))}
    scores = induction.induction_scores(cache, 2, L)
    np.testing.assert_allclose(scores[0], [1.0, 0.0])
    np.testing.assert_allclose(scores[1], np.mean(1 / np.arange(L + 1, 2 * L)))   # chance: 1/(position + 1)
    np.testing.assert_allclose(induction.previous_token_scores(cache, 2)[0, 1], 1.0)


def test_half_losses_of_uniform_and_perfect_logits():
    seq = induction.repeated(np.random.default_rng(1), 4, 8, 16)
    first, second, per_position = induction.half_losses(np.zeros((4, 16, 16)), seq)
    assert first == pytest.approx(math.log(16)) and second == pytest.approx(math.log(16))
    perfect = np.full((4, 16, 16), -1e9)
    np.put_along_axis(perfect[:, :-1], seq[:, 1:, None], 0.0, axis=-1)
    assert induction.half_losses(perfect, seq)[:2] == (0.0, 0.0) and per_position.shape == (15,)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """The demo's own configuration, trained just past the step where its induction head forms."""
    import contextlib
    import io
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = induction.main(["--out", str(tmp_path_factory.mktemp("induction")), "--steps", "1600",
                                 "--log-every", "400"])
    return {**result, "printed": printed.getvalue()}


def test_the_scores_are_labelled_before_and_after_training_not_by_layer(trained):
    """"before layer 0 ... after layer 1" read as before and after a layer; the lines name the training."""
    lines = [line.strip() for line in trained["printed"].splitlines() if " layer " in line and ": H0 " in line]
    assert [line.split(": H0")[0] for line in lines[:4]] == [
        "before training, layer 0", "before training, layer 1", "after training,  layer 0", "after training,  layer 1"]


def test_an_induction_head_forms_and_copying_works(trained):
    before, after = trained["before"], trained["after"]
    chance = np.mean(1 / np.arange(25, 48))                          # halves of 24: positions 24..46
    assert np.abs(before["scores"] - chance).max() < 0.02            # untrained: spread evenly over the past
    best = trained["best"]
    assert after["scores"][best] > 0.5 and best[0] == 1               # an induction head, in layer 1
    assert after["previous"][0].max() > 0.3                           # fed by a previous-token head in layer 0
    assert abs(before["first"] - math.log(64)) < 0.1 and abs(before["second"] - math.log(64)) < 0.1
    assert after["second"] < 1.0 < math.log(64) - 0.5 < after["first"]


def test_ablating_the_induction_head_undoes_the_copying(trained):
    after, ablated = trained["after"], trained["ablated"]
    assert ablated[trained["best"]] - after["second"] > 2.0          # the repeat is unpredictable again
    assert ablated[trained["other"]] - after["second"] < 0.5         # another head: hardly matters
