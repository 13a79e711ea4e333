"""Store PyTorch's answers to the cases and programs of tests/torch_stream_cases.py in tests/torch_streams.json,
so that tests/test_torch_generator.py and tests/test_torch_streams_facade.py check our streams against
PyTorch's when PyTorch is not installed.

    PYTHONPATH=$PWD python tests/make_torch_streams.py     # needs torch; rewrites the file atomically
"""
from __future__ import annotations

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(1, str(pathlib.Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from tinygrad_like.atomic_file import write_atomic  # noqa: E402
from torch_stream_cases import PROGRAMS, cases, digest, draw_torch, key, run_program  # noqa: E402

PATH = pathlib.Path(__file__).resolve().parent / "torch_streams.json"


def main() -> None:
    answers = {key(case): digest(draw_torch(case, torch)) for case in cases()}
    answers.update({f"program: {name}": digest(run_program(name, torch)) for name in PROGRAMS})
    made_by = {"torch_version": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    lines = [f"{json.dumps(name)}: {json.dumps(answer)}" for name, answer in answers.items()]   # one case a line
    text = '{"made_by": ' + json.dumps(made_by) + ',\n"answers": {\n' + ",\n".join(lines) + "\n}}\n"
    write_atomic(PATH, text)
    print(f"{len(answers)} cases from PyTorch {torch.__version__} written to {PATH.name}")


if __name__ == "__main__":
    main()
