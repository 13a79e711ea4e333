"""The wheel a non-editable `pip install .` builds holds every module and C source of the packages.

pyproject.toml once named the packages by hand and left out tinygrad_like.fast, tinygrad_like.torch and
attention.c: an editable install (the README's) worked, setuptools warned that it would leave those
packages out, and a setuptools without its fallback did (an engine whose first op that shares out
work failed to import). Built from a copy of what the wheel is made of (no stale build/ directory can
fill a gap), with pip's build isolation (setuptools from the registry), as a user's install is.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("tinygrad_like", "nn", "models")


def test_the_wheel_holds_every_module_and_kernel_source(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path), str(source)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "absent from the `packages` configuration" not in done.stdout + done.stderr
    wheel, = tmp_path.glob("tinygrad_like-*.whl")
    inside = set(zipfile.ZipFile(wheel).namelist())
    wanted = {path.relative_to(ROOT).as_posix() for package in PACKAGES for path in (ROOT / package).rglob("*")
              if path.suffix in (".py", ".c", ".h") and "__pycache__" not in path.parts}
    assert {"tinygrad_like/fast/pool.py", "tinygrad_like/torch/__init__.py",
            "tinygrad_like/fast/kernels/attention.c", "tinygrad_like/fast/kernels/exp.h"} <= wanted
    assert wanted - inside == set()
