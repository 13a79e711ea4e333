"""The README's examples run and print the numbers their comments promise."""
from pathlib import Path

import pytest

import printed_examples

README = Path(__file__).resolve().parents[1] / "README.md"
EXAMPLES = printed_examples.python_blocks(README)


def test_readme_has_examples_that_promise_output():
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_readme_example_prints_what_it_promises(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    printed_examples.check_prints(EXAMPLES[index], f"README block {index}")
