"""Our documents say things in our own words: no run of 8 or more words from a chapter appears in them.

The chapters are the seed texts in shared/seeds/ beside the repository (as in CI) or beside the folder
that holds it (a git worktree). The check
covers docs/*.md, README.md, the Markdown cells of the notebooks in notebooks/ and every docstring
of every .py file. Words are compared in lower case,
with punctuation, symbols, bare numbers and line breaks ignored, so a quote reflowed or set in a block
quote is still found. The docs point to a chapter by its file name and section heading instead of quoting it.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEEDS = next((p / "shared" / "seeds" for p in ROOT.parents[:2] if (p / "shared" / "seeds").is_dir()),
             ROOT.parent / "shared" / "seeds")
RUN = 8


def words(text: str) -> list[str]:
    """The words of a text, lower case: runs of letters and digits holding at least one letter (numbers
    alone are facts we keep, such as the worked example's 0.284, not wording)."""
    return re.findall(r"\w*[^\W\d_]\w*", text.lower())


def runs(text: str) -> set[tuple[str, ...]]:
    """Every run of RUN consecutive words, within one line of a chapter (a paragraph or list item)."""
    found = set()
    for line in text.splitlines():
        w = words(line)
        found.update(tuple(w[i:i + RUN]) for i in range(len(w) - RUN + 1))
    return found


def docstrings(path: Path) -> list[tuple[str, str]]:
    """(where, text) for the module's docstring and every class's and function's."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return [(getattr(n, "name", "module docstring"), doc) for n in nodes if (doc := ast.get_docstring(n))]


def our_files() -> list[Path]:
    files = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"] + sorted((ROOT / "notebooks").glob("*.ipynb"))
    skip = {".venv", "out", "build"}
    return files + [p for p in sorted(ROOT.rglob("*.py")) if not skip & set(p.relative_to(ROOT).parts)]


def markdown_cells(path: Path) -> list[tuple[str, str]]:
    """(where, text) for every Markdown cell of a notebook."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(f"cell {i + 1}", "".join(c["source"])) for i, c in enumerate(cells) if c["cell_type"] == "markdown"]


def shared_runs(text: str, chapter_runs: set) -> list[str]:
    w = words(text)
    return sorted({" ".join(w[i:i + RUN]) for i in range(len(w) - RUN + 1) if tuple(w[i:i + RUN]) in chapter_runs})


def chapter_runs_of(folder: Path) -> set:
    found = set()
    for seed in sorted(folder.glob("*.txt")):
        found |= runs(seed.read_text(encoding="utf-8"))
    assert found, f"no text in {folder}"
    return found


def copied_in(path: Path, chapter_runs: set) -> dict[str, list[str]]:
    """{where in the file: the chapter's word runs it repeats}, empty when the file says everything its own way."""
    texts = (docstrings(path) if path.suffix == ".py" else markdown_cells(path) if path.suffix == ".ipynb"
             else [("text", path.read_text(encoding="utf-8"))])
    return {where: found for where, text in texts if (found := shared_runs(text, chapter_runs))}


def test_the_check_finds_a_quote(tmp_path):
    """The detector itself, on a made-up chapter: a chapter line reflowed into a block quote is found, in a
    Markdown file and in a docstring; the same idea in other words is not."""
    line = ("Each attention head compares the query of one token with the keys of all earlier tokens and then "
            "mixes their values by the resulting weights, so that information flows between positions.")
    (tmp_path / "chapter.txt").write_text("A heading\n\n" + line + "\n")
    chapter = chapter_runs_of(tmp_path)
    quoted = "> " + "\n> ".join(line[i:i + 60] for i in range(0, len(line), 60))
    (tmp_path / "page.md").write_text("# Attention\n\n" + quoted + "\n")
    (tmp_path / "code.py").write_text(f'def attend():\n    """{line.upper()}"""\n')
    (tmp_path / "fine.md").write_text("A head scores a token against the earlier ones and averages what they hold.\n")
    assert list(copied_in(tmp_path / "page.md", chapter)) == ["text"]
    assert list(copied_in(tmp_path / "code.py", chapter)) == ["attend"]
    assert copied_in(tmp_path / "fine.md", chapter) == {}


def test_no_chapter_sentence_is_copied():
    """Every document, notebook and docstring, in one test: one skip, with its reason, where no chapters are."""
    if not SEEDS.is_dir():
        pytest.skip(f"the textbook chapters are not beside the repository ({SEEDS} is missing), so there is "
                    "nothing to compare our documents with")
    chapter_runs = chapter_runs_of(SEEDS)
    copied = {str(path.relative_to(ROOT)): found for path in our_files() if (found := copied_in(path, chapter_runs))}
    assert not copied, f"these files repeat a chapter word for word (say it in our own words): {copied}"
