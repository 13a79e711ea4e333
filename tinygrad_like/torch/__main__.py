"""`python -m tinygrad_like.torch SCRIPT.py [ARGS...]`: run an unmodified PyTorch script on the engine.

Like `python -m cProfile script.py`: the script runs as __main__ with sys.argv = [SCRIPT.py, ARGS...]
and its directory first on sys.path, after install() has made `import torch` resolve to tinygrad_like.torch.
"""
from __future__ import annotations

import os
import runpy
import sys

from tinygrad_like.torch import install


def main(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        raise SystemExit(0 if argv else 2)
    script = argv[0]
    if not os.path.isfile(script):
        print(f"tinygrad_like.torch: no script at {script}", file=sys.stderr)
        raise SystemExit(2)
    install()
    print(f"tinygrad_like.torch: running {script} on tinygrad_like (numpy engine, CPU), not PyTorch",
          file=sys.stderr)
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
