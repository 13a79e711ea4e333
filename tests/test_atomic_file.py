"""The project's one file writer (tinygrad_like/atomic_file.py): whole files or nothing, and the file mode a
user expects (the old file's, or open()'s 0666 less the umask), never a temporary file's owner-only 0600."""
import os
import stat

import pytest

from tinygrad_like import atomic_file
from tinygrad_like.atomic_file import write_atomic


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_new_file_gets_the_mode_open_would_give(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "a.json", "{}\n")
        write_atomic(tmp_path / "b.bin", b"\x00\x01")
        os.umask(0o077)
        write_atomic(tmp_path / "private.txt", "x")
    finally:
        os.umask(old)
    assert mode(tmp_path / "a.json") == 0o644
    assert mode(tmp_path / "b.bin") == 0o644
    assert mode(tmp_path / "private.txt") == 0o600
    assert (tmp_path / "a.json").read_text() == "{}\n"
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"


def test_overwrite_keeps_the_old_files_mode_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "results.json"
    path.write_text("old")
    os.chmod(path, 0o640)
    write_atomic(path, "new")
    assert path.read_text() == "new"
    assert mode(path) == 0o640
    assert os.listdir(tmp_path) == ["results.json"]


def test_a_crash_mid_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "page.html"
    path.write_text("the old page")

    def crash_halfway(f, data):
        f.write(data[: len(data) // 2])
        raise OSError("disk full (simulated)")
    monkeypatch.setattr(atomic_file, "_write", crash_halfway)
    with pytest.raises(OSError, match="simulated"):
        write_atomic(path, "a new page, longer than the old one")
    assert path.read_text() == "the old page"
    assert os.listdir(tmp_path) == ["page.html"]


def test_a_missing_folder_is_an_error_naming_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_atomic(tmp_path / "nowhere" / "x.txt", "x")
    assert not (tmp_path / "nowhere").exists()
