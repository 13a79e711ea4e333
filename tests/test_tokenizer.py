"""Tests for models/tokenizer.py: hand-computed ids, lossless round-trips, save/load, errors."""
import json
import re
from collections import Counter
from pydoc_data.topics import topics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models import tokenizer
from models.tokenizer import SPLIT_PATTERN, BPETokenizer, CharTokenizer

DOC_TEXT = "\n".join(topics.values())  # ~465 KB of English + code, ships with CPython
UNSEEN = ["héllo wörld, ça va? naïve café", "日本語のテキスト 中文", "emoji 🙂👍🏽 and 🇫🇷 flags",
          "tabs\tand\r\nnewlines\n\n  ", "   leading spaces", "x" * 300, "1234567890 3.14159", ""]


@pytest.fixture(scope="module")
def bpe():
    return BPETokenizer.train(DOC_TEXT, 512)


# ---------------- CharTokenizer ----------------

def test_char_known_ids():
    tok = CharTokenizer.from_text("hello")  # sorted vocab: e h l o
    assert tok.chars == ["e", "h", "l", "o"] and tok.vocab_size == 4
    assert tok.encode("hell") == [1, 0, 2, 2]
    assert tok.decode([3, 2, 0]) == "ole"


def test_char_round_trip():
    text = "To be, or not to be: that is the question.\n"
    tok = CharTokenizer.from_text(text)
    assert tok.decode(tok.encode(text)) == text


def test_char_unknown_character_is_an_error():
    tok = CharTokenizer.from_text("hello")
    with pytest.raises(ValueError, match="'z'"):
        tok.encode("hez")
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tok.decode([4])


def test_char_save_load(tmp_path):
    tok = CharTokenizer.from_text("héllo 🙂\n")
    tok.save(tmp_path / "char.json")
    for loaded in (CharTokenizer.load(tmp_path / "char.json"), tokenizer.load(tmp_path / "char.json")):
        assert isinstance(loaded, CharTokenizer)
        assert loaded.chars == tok.chars and loaded.encode("🙂 hé") == tok.encode("🙂 hé")


# ---------------- the pre-split ----------------

@pytest.mark.parametrize("text, chunks", [
    ("Hello world", ["Hello", " world"]),
    ("it's 42 dogs!!", ["it", "'s", " 42", " dogs", "!!"]),
    ("a   b", ["a", "  ", " b"]),          # the last space of a run goes with the word
    ("x_y\n\nz", ["x", "_", "y", "\n", "\n", "z"]),  # as GPT-2: the run gives up its last char
])
def test_split_pattern(text, chunks):
    assert re.findall(SPLIT_PATTERN, text) == chunks


# ---------------- BPETokenizer ----------------

def test_bpe_hand_checked_merges():
    # "aaaaaaaa" (97 is "a"): pair (97,97) -> 256 "aa"; then (256,256) -> 257 "aaaa"; then 258
    tok = BPETokenizer.train("aaaaaaaa", 259)
    assert tok.merges == [(97, 97), (256, 256), (257, 257)]
    assert tok.vocab[256:] == [b"aa", b"aaaa", b"aaaaaaaa"]
    assert tok.encode("aaaaaaaa") == [258]
    assert tok.encode("aaa") == [256, 97]
    assert tok.encode("aaaaaaa") == [257, 256, 97]


def test_bpe_merges_never_cross_chunks():
    # chunks "ab", " ab", " ab": (97,98) x3 -> 256, then (32,256) x2 -> 257; (98,32) never counted
    tok = BPETokenizer.train("ab ab ab", 1000)
    assert tok.merges == [(97, 98), (32, 256)]
    assert tok.vocab_size == 258  # stops early: no pair left to merge
    assert tok.encode("ab ab") == [256, 257]


def test_bpe_each_merge_was_the_most_frequent_pair():
    # checks the incremental pair counts of train() against a full recount at every step
    text = DOC_TEXT[:20_000]
    tok = BPETokenizer.train(text, 256 + 60)
    chunks = Counter(re.findall(SPLIT_PATTERN, text))
    for r, merged in enumerate(tok.merges):
        partial = BPETokenizer(tok.merges[:r])
        counts = Counter()
        for chunk, n in chunks.items():
            ids = partial.encode(chunk)
            for pair in zip(ids, ids[1:]):
                counts[pair] += n
        assert counts[merged] == max(counts.values()), f"merge {r} {merged}"


def test_bpe_vocab_size_respected(bpe):
    assert bpe.vocab_size == 512 and len(bpe.merges) == 256 and len(bpe.vocab) == 512
    ids = bpe.encode(DOC_TEXT)
    assert max(ids) < 512 and max(ids) >= 256


def test_bpe_round_trip_training_text_and_compresses(bpe):
    ids = bpe.encode(DOC_TEXT)
    assert bpe.decode(ids) == DOC_TEXT
    assert len(ids) < 0.6 * len(DOC_TEXT.encode("utf-8"))  # measured: ~2.15 bytes per token


def test_bpe_encodes_1mb_merging_each_distinct_chunk_once(bpe, monkeypatch):
    """A megabyte of text costs one merge loop per distinct chunk, not per occurrence (how fast that is
    belongs to a benchmark, not to a test): the chunk cache is what keeps encoding a corpus cheap."""
    text = (DOC_TEXT + "".join(UNSEEN)) * 3  # ~1.4 MB
    bpe.cache.clear()
    merged = []
    encode_chunk = bpe._encode_chunk
    monkeypatch.setattr(bpe, "_encode_chunk", lambda chunk: merged.append(chunk) or encode_chunk(chunk))
    ids = bpe.encode(text)
    chunks = bpe.regex.findall(text)
    assert sorted(merged) == sorted(set(chunks)) and len(merged) < len(chunks) // 10
    assert bpe.decode(ids) == text


@pytest.mark.parametrize("text", UNSEEN)
def test_bpe_round_trip_unseen(bpe, text):
    assert bpe.decode(bpe.encode(text)) == text


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_bpe_round_trip_any_text(text):
    tok = BPETokenizer.train("the quick brown fox jumps over the lazy dog " * 3, 300)
    assert tok.decode(tok.encode(text)) == text


def test_bpe_unseen_characters_fall_back_to_bytes(bpe):
    assert bpe.encode("🙂") == list("🙂".encode("utf-8")) == [240, 159, 153, 130]
    assert bpe.encode("") == [] and bpe.decode([]) == ""


def test_bpe_decode_invalid_utf8_replaces():
    tok = BPETokenizer([])
    assert tok.decode([0x80]) == "\ufffd"                # lone continuation byte
    assert tok.decode([104, 0xF0, 0x9F, 105]) == "h\ufffdi"  # emoji cut short
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tok.decode([256])


def test_bpe_bad_vocab_size():
    with pytest.raises(ValueError, match="at least 256"):
        BPETokenizer.train("hello", 100)


def test_bpe_save_load(bpe, tmp_path):
    path = tmp_path / "bpe.json"
    bpe.save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["type"] == "bpe" and len(data["merges"]) == 256 and data["merges"][0] == list(bpe.merges[0])
    sample = DOC_TEXT[:5000] + "".join(UNSEEN)
    for loaded in (BPETokenizer.load(path), tokenizer.load(path)):
        assert isinstance(loaded, BPETokenizer) and loaded.vocab_size == 512
        assert loaded.encode(sample) == bpe.encode(sample)


# ---------------- loading files that are not tokenizers ----------------

@pytest.mark.parametrize("content", ["not json at all", "[1, 2, 3]", '{"type": "gpt"}', '{"merges": []}'])
def test_load_rejects_non_tokenizer_files(tmp_path, content):
    path = tmp_path / "x.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match="not a tokenizer file"):
        tokenizer.load(path)


def test_load_wrong_class(tmp_path):
    CharTokenizer.from_text("abc").save(tmp_path / "c.json")
    with pytest.raises(ValueError, match="'char' tokenizer, not 'bpe'"):
        BPETokenizer.load(tmp_path / "c.json")
