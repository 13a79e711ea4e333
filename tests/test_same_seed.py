"""benchmarks/same_seed.py reads each program's printed losses by step: its patterns against lines as nanoGPT's
train.py and minGPT's adder print them, and the runs it compares (dropout off and on for both programs)."""
from __future__ import annotations

import pathlib
import re
import sys

BENCHMARKS = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))

import same_seed  # noqa: E402

NANO_OUTPUT = """step 0: train loss 4.2304, val loss 4.2301
iter 0: loss 4.2304, time 812.55ms, mfu -100.00%
iter 1: loss 4.1279, time 101.22ms, mfu 0.01%
iter 10: loss 3.9496, time 99.01ms, mfu 0.01%
"""
ADDER_OUTPUT = """iter_dt 0.00ms; iter 0: train loss 2.31454
iter_dt 35.12ms; iter 10: train loss 2.11316
"""


def test_the_patterns_read_every_logged_step():
    nano = {int(s): float(v) for s, v in re.findall(same_seed.NANO_LOSS, NANO_OUTPUT)}
    adder = {int(s): float(v) for s, v in re.findall(same_seed.ADDER_LOSS, ADDER_OUTPUT)}
    assert nano == {0: 4.2304, 1: 4.1279, 10: 3.9496}           # the iter lines, not the evaluation's
    assert adder == {0: 2.31454, 10: 2.11316}


def test_both_programs_run_with_dropout_off_and_on():
    runs = same_seed.programs(30)
    assert [name.split(",")[0] for name, *_ in runs] == ["nanoGPT", "nanoGPT", "minGPT adder", "minGPT adder"]
    nano_off, nano_on, adder_off, adder_on = (args for _, _, _, _, args, _ in runs)
    assert "--dropout=0.0" in nano_off and not any(a.startswith("--dropout") for a in nano_on)
    assert "--max_iters=30" in nano_off and "--trainer.max_iters=31" in adder_off   # the adder logs iter 30 too
    assert all(a in adder_off for a in same_seed.NO_DROPOUT_MINGPT)
    assert not any("pdrop" in a for a in adder_on)
