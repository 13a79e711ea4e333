"""The guide in docs/ points at things that exist, and its examples print what they promise.

For every Markdown file in docs/:
- every backticked repository path (`nn/attention.py`, `demos/why_sqrt_d.py`) is a file;
- every code name after a path (`nn/attention.py: Attention.forward`, `models/arithmetic.py:
  count_params, kv_cache_bytes`) is defined there (found by parsing the file, not by line number);
- every test reference (`tests/test_attention.py::test_gradcheck`) names a test function in that file;
- every relative link and image (`![..](img/why_sqrt_d.png)`) resolves to a file, images inside docs/;
- every ```python block with `# prints` comments runs and prints exactly that (as tests/test_readme.py
  does for the README), so the numbers the guide quotes are the code's, not typed in.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import printed_examples

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
TOP = ("tinygrad_like/", "nn/", "models/", "demos/", "tests/", "docs/", "benchmarks/")

# `path`, `path: Name.attr, other`, `path::test_name` (optionally `::test_name[param-id]`)
SPAN = re.compile(r"`([^`\n]+)`")
REF = re.compile(r"^(?P<path>[\w./-]+\.(?:py|md|txt|json|toml|png|svg))"
                 r"(?:(?P<test>::\w+(?:\[[^\]]*\])?)|:\s+(?P<names>[\w.]+(?:,\s*[\w.]+)*))?$")


def spans(page: Path) -> list[str]:
    """Backticked spans outside fenced code blocks."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return SPAN.findall(text)


def references() -> list[tuple[str, re.Match]]:
    found = {}
    for page in PAGES:
        for span in spans(page):
            m = REF.match(span.strip())
            if m and m["path"].startswith(TOP):
                found.setdefault(f"{page.name}: {span.strip()}", m)  # each distinct reference once
    return list(found.items())


def defined(tree: ast.Module, dotted: str) -> bool:
    """Is `A.b.c` a class/function/assignment at module level, then nested inside it?"""
    body = tree.body
    for part in dotted.split("."):
        match = None
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == part:
                match = node
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == part for t in targets):
                    match = node
        if match is None:
            return False
        body = getattr(match, "body", [])
    return True


def test_the_guide_exists_and_references_code_and_tests():
    assert (DOCS / "guide.md").is_file()
    refs = [m for _, m in references()]
    assert sum(1 for m in refs if m["test"]) >= 30, "the guide names the tests that check each idea"
    assert sum(1 for m in refs if m["names"]) >= 20, "the guide names the functions that implement each idea"


@pytest.mark.parametrize("where, m", references(), ids=[w for w, _ in references()])
def test_reference_exists(where, m):
    path = ROOT / m["path"]
    assert path.is_file(), f"{where}: {m['path']} does not exist"
    if m["test"] or m["names"]:
        tree = ast.parse(path.read_text())
    if m["test"]:
        name = m["test"][2:].split("[", 1)[0]
        assert name.startswith("test_") and defined_anywhere(tree, name), f"{where}: no test {name} in {m['path']}"
    if m["names"]:
        for name in re.split(r",\s*", m["names"]):
            assert defined(tree, name), f"{where}: {name} is not defined in {m['path']}"


def defined_anywhere(tree: ast.Module, name: str) -> bool:
    """A test function at module level or inside a test class."""
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in ast.walk(tree))


LINK = re.compile(r"(!?)\[[^\]]*\]\(([^)\s]+)\)")


def links() -> list[tuple[str, Path, bool]]:
    found = {}
    for page in PAGES:
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        for bang, target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue  # web links and anchors
            found[f"{page.name}: {target}"] = ((page.parent / target.split("#")[0]).resolve(), bool(bang))
    return [(where, path, image) for where, (path, image) in found.items()]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_anchor_links_point_at_headings():
    for page in PAGES:
        text = page.read_text()
        for target in re.findall(r"\]\(([^)\s]*#[^)\s]+)\)", text):
            file, anchor = target.split("#", 1)
            other = (page.parent / file) if file else page
            if other.suffix == ".md" and other.resolve().parent == DOCS:
                headings = re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", other.read_text(), flags=re.S), re.M)
                assert anchor in {slug(h) for h in headings}, f"{page.name}: no heading for #{anchor} in {other.name}"


@pytest.mark.parametrize("where, path, image", links(), ids=[w for w, _, _ in links()])
def test_link_resolves(where, path, image):
    assert path.exists(), f"{where} does not resolve ({path})"
    if image:
        assert path.is_relative_to(DOCS), f"{where}: pictures live in docs/"
        assert path.suffix in (".png", ".svg"), where


def test_every_picture_is_used_and_the_folder_stays_small():
    images = sorted((DOCS / "img").glob("*")) if (DOCS / "img").is_dir() else []
    used = {path for _, path, image in links() if image}
    assert images, "the guide shows the demos' pictures"
    assert [p.name for p in images if p.resolve() not in used] == [], "every picture in docs/img is shown"
    assert sum(p.stat().st_size for p in images) < 2_000_000


def python_blocks() -> list[tuple[str, str]]:
    return [(f"{page.stem}-{i}", code) for page in PAGES for i, code in enumerate(printed_examples.python_blocks(page))]


# Examples that make numpy warn on purpose, and the warnings they must give: engine.md's detect_anomaly example
# takes log 0 and sqrt(-1) to show the op being named (its text says numpy warns too). Any other warning stays loud.
EXPECTED_WARNINGS = {"with detect_anomaly():": ("divide by zero encountered in log",
                                                "divide by zero encountered in divide",
                                                "invalid value encountered in sqrt")}


@pytest.mark.parametrize("name, code", python_blocks(), ids=[n for n, _ in python_blocks()])
def test_example_prints_what_it_promises(name, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    expected = next((w for marker, w in EXPECTED_WARNINGS.items() if marker in code), ())
    if not expected:
        printed_examples.check_prints(code, f"docs block {name}")
        return
    with pytest.warns(RuntimeWarning) as caught:
        printed_examples.check_prints(code, f"docs block {name}")
    messages = sorted({str(w.message) for w in caught})
    assert messages == sorted(expected), f"docs block {name} warned {messages}, expected {sorted(expected)}"
