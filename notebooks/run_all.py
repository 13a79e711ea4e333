"""Run the lecture notebooks top to bottom in a fresh kernel and store their outputs in place.

    python notebooks/run_all.py                        # every notebook in notebooks/
    python notebooks/run_all.py 2_attention_by_hand    # only those whose file name starts so

A maintainer tool: the notebooks are kept in git with their outputs, so that they read on a web page
without running; after editing one, run this and commit the result. tests/test_notebooks.py runs
them the same way (`execute` below) and fails when a stored output no longer matches a fresh run.

The kernel is this interpreter (`sys.executable`), whatever Jupyter kernels are installed, so the
notebooks run against the library and packages you run this script with. Each notebook runs with
notebooks/ as its working folder, as Jupyter does.
"""
from __future__ import annotations

import os
import pathlib
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from tinygrad_like.atomic_file import write_atomic  # noqa: E402

TIMEOUT = 600  # seconds per cell; every notebook as a whole is meant to take under 2 minutes


def notebooks(prefixes=()) -> list[pathlib.Path]:
    """The notebooks in this folder, in their numbered order (only those starting with a prefix, if given)."""
    found = sorted(HERE.glob("[0-9]*.ipynb"))
    return [p for p in found if not prefixes or any(p.name.startswith(x) for x in prefixes)]


def execute(path, timeout: int = TIMEOUT):
    """Run the notebook at `path` in a fresh kernel of this interpreter; returns the executed notebook
    (nbformat.NotebookNode). Raises nbclient's CellExecutionError naming the cell on any error."""
    import nbformat
    from ipykernel.kernelspec import write_kernel_spec
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    path = pathlib.Path(path)
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as kernels:
        write_kernel_spec(os.path.join(kernels, "python3"))  # argv: [sys.executable, -m, ipykernel_launcher, ...]
        km = KernelManager(kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[kernels]))
        client = NotebookClient(nb, km=km, timeout=timeout, record_timing=False,
                                resources={"metadata": {"path": str(path.parent)}})
        client.execute()
    return nb


def save(nb, path) -> None:
    """Write the notebook atomically (tinygrad_like/atomic_file.py): no reader sees half a notebook."""
    import nbformat
    write_atomic(path, nbformat.writes(nb))


def main(argv=None) -> None:
    paths = notebooks(argv if argv is not None else sys.argv[1:])
    if not paths:
        raise SystemExit(f"run_all.py: no notebook in {HERE} matches {sys.argv[1:]}")
    for path in paths:
        t0 = time.perf_counter()
        nb = execute(path)
        save(nb, path)
        print(f"{path.name}: {time.perf_counter() - t0:.1f} s, {path.stat().st_size / 1024:.0f} KB", flush=True)


if __name__ == "__main__":
    main()
