"""Store PyTorch's answers to the cases and programs of tests/torch_stream_cases.py in tests/torch_streams.json,
so that tests/test_torch_generator.py and tests/test_torch_streams_facade.py check our streams against
PyTorch's when PyTorch is not installed.

    PYTHONPATH=$PWD python tests/make_torch_streams.py     # needs torch; rewrites the file atomically
"""
from __future__ import annotations

import json
import os
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import torch  # noqa: E402

from torch_stream_cases import PROGRAMS, cases, digest, draw_torch, key, run_program  # noqa: E402

PATH = pathlib.Path(__file__).resolve().parent / "torch_streams.json"


def main() -> None:
    answers = {key(case): digest(draw_torch(case, torch)) for case in cases()}
    answers.update({f"program: {name}": digest(run_program(name, torch)) for name in PROGRAMS})
    made_by = {"torch_version": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    lines = [f"{json.dumps(name)}: {json.dumps(answer)}" for name, answer in answers.items()]   # one case a line
    text = '{"made_by": ' + json.dumps(made_by) + ',\n"answers": {\n' + ",\n".join(lines) + "\n}}\n"
    fd, tmp = tempfile.mkstemp(dir=PATH.parent, suffix=".json")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, PATH)
    print(f"{len(answers)} cases from PyTorch {torch.__version__} written to {PATH.name}")


if __name__ == "__main__":
    main()
