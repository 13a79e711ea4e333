"""The engine's thread defaults (tinygrad_like/fast/pool.py), each checked in a fresh Python process:

- `import tinygrad_like` (and nn, models) changes nothing: numpy's BLAS keeps its threads, no thread starts;
- the first op that can share out work (a product) takes every core this process may use (its CPU
  affinity), as PyTorch does, and holds numpy's BLAS to one thread while the pool has more;
- TINYGRAD_LIKE_NUM_THREADS and set_num_threads override that, and 1 leaves BLAS as it was, with every
  task run inline: the single-threaded behaviour the library had before it chose for itself.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("threadpoolctl")
ROOT = Path(__file__).resolve().parents[1]
CORES = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
needs_affinity = pytest.mark.skipif(not CORES, reason="needs os.sched_getaffinity (Linux)")
needs_two_cores = pytest.mark.skipif(len(CORES) < 2, reason="needs two cores this process may use")

PROBE = """
import json, os, sys, threading
affinity = json.loads(sys.argv[1])
if affinity is not None:
    os.sched_setaffinity(0, affinity)
import numpy as np
from threadpoolctl import threadpool_info

def blas():
    return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")

before = dict(blas=blas(), threads=threading.active_count())
import tinygrad_like, nn, models
from tinygrad_like.fast import pool
after_import = dict(blas=blas(), threads=threading.active_count(), chosen=pool._threads)
exec(sys.argv[2])                                            # the test's own settings, if any
x = tinygrad_like.Tensor(np.ones((4, 4), np.float32), requires_grad=True)
(x @ x).sum().backward()                                     # a product: an op that can share out work
after_op = dict(blas=blas(), n=tinygrad_like.get_num_threads(), pool_started=bool(pool._workers))
print(json.dumps(dict(before=before, after_import=after_import, after_op=after_op)))
"""


def probe(affinity=None, env_threads=None, setup=""):
    """Run PROBE in a fresh process pinned to `affinity` (cpu ids; None: as it is), with
    TINYGRAD_LIKE_NUM_THREADS=env_threads (None: unset), and return what it saw."""
    env = {k: v for k, v in os.environ.items() if k != "TINYGRAD_LIKE_NUM_THREADS"}
    if env_threads is not None:
        env["TINYGRAD_LIKE_NUM_THREADS"] = str(env_threads)
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(affinity), setup], capture_output=True,
                         text=True, cwd=ROOT, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_changes_nothing():
    seen = probe()
    assert seen["after_import"] == dict(seen["before"], chosen=None)


@needs_affinity
def test_first_op_on_one_allowed_core_takes_one_thread_and_leaves_blas_alone():
    seen = probe(affinity=CORES[:1])
    assert seen["after_op"] == dict(blas=seen["before"]["blas"], n=1, pool_started=False)


@needs_two_cores
def test_first_op_takes_every_allowed_core_and_holds_blas_to_one():
    seen = probe(affinity=CORES[:2])
    assert seen["after_import"]["chosen"] is None
    assert seen["after_op"]["n"] == 2 and seen["after_op"]["blas"] == 1


@needs_two_cores
def test_environment_variable_1_overrides_the_cores():
    seen = probe(affinity=CORES[:2], env_threads=1)
    assert seen["after_op"] == dict(blas=seen["before"]["blas"], n=1, pool_started=False)


@needs_affinity
def test_environment_variable_overrides_the_affinity():
    seen = probe(affinity=CORES[:1], env_threads=3)
    assert seen["after_op"]["n"] == 3 and seen["after_op"]["blas"] == 1


@needs_two_cores
def test_set_num_threads_1_before_the_first_op_overrides_the_cores():
    seen = probe(affinity=CORES[:2], setup="tinygrad_like.set_num_threads(1)")
    assert seen["after_op"] == dict(blas=seen["before"]["blas"], n=1, pool_started=False)


@needs_affinity
def test_set_num_threads_overrides_the_environment_variable():
    seen = probe(affinity=CORES[:1], env_threads=1, setup="tinygrad_like.set_num_threads(3)")
    assert seen["after_op"]["n"] == 3 and seen["after_op"]["blas"] == 1


def test_a_bad_environment_variable_is_an_error_at_the_first_op_not_at_import():
    env = dict(os.environ, TINYGRAD_LIKE_NUM_THREADS="two", PYTHONPATH=str(ROOT))
    code = ("import numpy as np, tinygrad_like\nprint('imported')\n"
            "x = tinygrad_like.Tensor(np.ones((2, 2)))\nx @ x")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                         timeout=120)
    assert out.stdout.strip() == "imported"
    assert "TINYGRAD_LIKE_NUM_THREADS must be a whole number >= 1, got 'two'" in out.stderr


STEPS = """
import hashlib, sys
import numpy as np
import tinygrad_like
from models.gpt import GPT, GPTConfig
from nn.optim import AdamW
exec(sys.argv[1])
tinygrad_like.Tensor.manual_seed(0)
model = GPT(GPTConfig(vocab_size=128, block_size=64, n_layer=2, n_head=4, n_embd=128))
opt = AdamW(model.parameters(), lr=3e-4)
rng = np.random.default_rng(0)
x, y = (rng.integers(0, 128, (8, 64)) for _ in range(2))
for _ in range(2):
    opt.zero_grad()
    model(x, y)[1].backward()
    opt.step()
print(hashlib.sha256(b"".join(p.numpy().tobytes() for p in model.parameters())).hexdigest())
"""


@needs_two_cores
def test_one_thread_from_the_environment_or_set_num_threads_gives_the_same_bits():
    """Two AdamW steps of a GPT whose products are large enough for the pool: one thread asked for by the
    environment variable and by set_num_threads give the very same parameters."""
    def run(env_threads, setup):
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        env.pop("TINYGRAD_LIKE_NUM_THREADS", None)
        if env_threads is not None:
            env["TINYGRAD_LIKE_NUM_THREADS"] = str(env_threads)
        out = subprocess.run([sys.executable, "-c", STEPS, setup], capture_output=True, text=True, cwd=ROOT,
                             env=env, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout.strip()
    assert run(1, "") == run(None, "tinygrad_like.set_num_threads(1)")
