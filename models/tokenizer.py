"""Tokenizers: turn text into the integer ids a language model reads, and back.

Two kinds, same interface (`encode`, `decode`, `save`, `load`, `vocab_size`):

- `CharTokenizer`: one id per character seen in the training text. Tiny
  vocabulary, long sequences, and it cannot encode a character it never saw.
- `BPETokenizer`: byte-level byte-pair encoding, as in GPT-2. Every string is
  first UTF-8 bytes (ids 0..255), so nothing is ever unknown; training then
  learns "merges" that fuse frequent neighbouring ids into new ids, which makes
  sequences shorter.

`load(path)` reads a saved JSON file and returns whichever kind it holds.

References: Sennrich et al. 2016, "Neural Machine Translation of Rare Words
with Subword Units" (https://arxiv.org/abs/1508.07909); Radford et al. 2019,
"Language Models are Unsupervised Multitask Learners" (GPT-2, byte-level BPE).
"""
import functools
import json
import os
import re
import sys
from collections import Counter, defaultdict

# Pre-split text into chunks; BPE merges never cross a chunk boundary, so a
# token never glues the end of one word to the start of the next. In order:
# English contractions, a word with an optional leading space (a letter is
# [^\W\d_]: a word character that is not a digit or "_"), a number, a run of
# punctuation (anything neither space nor letter nor digit), then whitespace.
# "\s+(?!\S)" makes a whitespace run stop one short of the next word, so "  b"
# splits as " ", " b" (as in GPT-2). The alternatives cover every character:
# joining the chunks gives the text back exactly.
SPLIT_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+"""

# Python's re and the regex engine of Hugging Face `tokenizers` (Oniguruma) disagree on what a letter,
# a digit and a space are: for re, "²" and "½" are letters ([^\W\d_]: alphanumeric, not decimal) and
# \x1c-\x1f are whitespace; for Oniguruma they are not. So the exported tokenizer.json carries the
# pattern with each class spelled out as the code points re puts in it on this Python
# (`spelled_pattern`): Oniguruma running that and re running SPLIT_PATTERN cut every text into the
# same chunks. re keeps running SPLIT_PATTERN itself: the spelled form gives it the same chunks
# (tests/test_hf_export.py checks every code point) but splits more slowly.
_SPELLED = ("'(?:[sdmt]|ll|ve|re)| ?[{L}]+| ?[{D}]+| ?[^{S}{L}{D}]+|[{S}]+(?![^{S}])|[{S}]+")


class CharTokenizer:
    """One token per character; ids follow the sorted order of the characters.

    >>> CharTokenizer.from_text("hello").encode("hell")  # vocab e,h,l,o
    [1, 0, 2, 2]
    """

    def __init__(self, chars):
        self.chars = list(chars)
        self.stoi = {c: i for i, c in enumerate(self.chars)}
        self.vocab_size = len(self.chars)

    @classmethod
    def from_text(cls, text):
        return cls(sorted(set(text)))

    def encode(self, text):
        try:
            return [self.stoi[c] for c in text]
        except KeyError as e:
            raise ValueError(f"character {e.args[0]!r} is not in the vocabulary") from None

    def decode(self, ids):
        return "".join(self.chars[_check_id(i, self.vocab_size)] for i in ids)

    def save(self, path):
        _write(path, {"type": "char", "chars": "".join(self.chars)})

    @classmethod
    def load(cls, path):
        return cls(_read(path, "char")["chars"])

    # ------------------------------------------------------------ Hugging Face `tokenizers`
    def to_hf_json(self):
        """This tokenizer as a Hugging Face `tokenizer.json` dict: every character is its own piece
        (Split by a one-character regex), a WordLevel model maps it to our id, and the Fuse decoder
        joins the pieces back with nothing between them. A character not in the vocabulary is an
        error there too (the model's unk_token is not in the vocabulary), never a silent id."""
        unk = "<unk>"
        while unk in self.stoi:
            unk = "<" + unk + ">"
        return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
                "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "[\\s\\S]"}, "behavior": "Isolated",
                                  "invert": False},
                "post_processor": None, "decoder": {"type": "Fuse"},
                "model": {"type": "WordLevel", "vocab": dict(self.stoi), "unk_token": unk}}

    def to_hf_files(self, model_max_length=None):
        """{file name: text}: tokenizer.json, and tokenizer_config.json for AutoTokenizer (see _hf_files)."""
        return _hf_files(self.to_hf_json(), model_max_length)

    def save_hf(self, directory, model_max_length=None):
        """Write tokenizer.json + tokenizer_config.json into `directory` (each file atomically)."""
        _save_hf(self.to_hf_files(model_max_length), directory)



class BPETokenizer:
    """Byte-level BPE: UTF-8 bytes, then learned merges of frequent pairs.

    The idea: start with the 256 byte values as the vocabulary. Count every
    pair of neighbouring ids in the training text, give the most frequent pair
    a new id (256, 257, ...) and replace it everywhere; repeat until the
    vocabulary has `vocab_size` ids. Each new id stands for the bytes of its
    two parts, so common words end up as single tokens, rare words as a few
    pieces, and unseen characters (emoji, scripts never trained on) as their
    raw bytes: any string can be encoded and decoded losslessly.

    `merges[r]` is the pair merged at step r; it produces id 256 + r. Encoding
    replays the merges in that order (lowest rank first), which gives the same
    tokens as training would.

    >>> tok = BPETokenizer.train("aaaaaaaa", 259)  # 97 is the byte of "a"
    >>> tok.merges, tok.encode("aaaaaaaa"), tok.encode("aaa")
    ([(97, 97), (256, 256), (257, 257)], [258], [256, 97])
    """

    def __init__(self, merges, pattern=SPLIT_PATTERN):
        self.merges = [tuple(p) for p in merges]
        self.pattern = pattern
        self.regex = re.compile(pattern)
        self.ranks = {p: r for r, p in enumerate(self.merges)}
        self.vocab = [bytes([b]) for b in range(256)]  # id -> the bytes it stands for
        for a, b in self.merges:
            self.vocab.append(self.vocab[a] + self.vocab[b])
        self.vocab_size = len(self.vocab)
        self.cache = {}  # chunk -> its ids; text repeats its words, so this pays off

    @classmethod
    def train(cls, text, vocab_size, pattern=SPLIT_PATTERN):
        """Learn merges until `vocab_size` ids (or until no pair is left).

        For speed, work on unique chunks: "the" seen 5000 times is one entry
        with weight 5000. `counts` holds each pair's weighted count and
        `where` the chunks it may occur in, so a merge revisits only those.
        Ties go to the pair counted first, so training is deterministic.
        """
        if vocab_size < 256:
            raise ValueError(f"vocab_size must be at least 256 (the byte values), got {vocab_size}")
        chunk_counts = Counter(re.findall(pattern, text))
        words = [list(chunk.encode("utf-8")) for chunk in chunk_counts]
        freqs = list(chunk_counts.values())
        counts, where = Counter(), defaultdict(set)
        for i, ids in enumerate(words):
            for pair in zip(ids, ids[1:]):
                counts[pair] += freqs[i]
                where[pair].add(i)
        merges = []
        while 256 + len(merges) < vocab_size and counts:
            best = max(counts, key=counts.get)
            new_id = 256 + len(merges)
            merges.append(best)
            for i in where.pop(best):  # only chunks that held `best` change
                old, new = words[i], _merge(words[i], best, new_id)
                for pair in zip(old, old[1:]):
                    counts[pair] -= freqs[i]
                for pair in zip(new, new[1:]):
                    counts[pair] += freqs[i]
                    where[pair].add(i)
                for pair in zip(old, old[1:]):
                    if counts[pair] <= 0:
                        del counts[pair]  # Counter ignores missing keys
                words[i] = new
        return cls(merges, pattern)

    def encode(self, text):
        ids = []
        for chunk in self.regex.findall(text):
            if chunk not in self.cache:
                self.cache[chunk] = self._encode_chunk(chunk)
            ids.extend(self.cache[chunk])
        return ids

    def _encode_chunk(self, chunk):
        ids = list(chunk.encode("utf-8"))
        while len(ids) >= 2:
            # the earliest-learned merge present among the neighbours goes first
            pair = min(zip(ids, ids[1:]), key=lambda p: self.ranks.get(p, float("inf")))
            if pair not in self.ranks:
                break
            ids = _merge(ids, pair, 256 + self.ranks[pair])
        return ids

    def decode(self, ids):
        """Bytes of every token, joined. Ids may cut a character's bytes apart
        (a lone continuation byte); those show as U+FFFD instead of raising."""
        data = b"".join(self.vocab[_check_id(i, self.vocab_size)] for i in ids)
        return data.decode("utf-8", errors="replace")

    def save(self, path):
        readable = [self.vocab[256 + r].decode("utf-8", errors="replace") for r in range(len(self.merges))]
        _write(path, {"type": "bpe", "pattern": self.pattern, "merges": [list(p) for p in self.merges],
                      "merged_tokens": readable})  # merged_tokens: for people; load ignores it

    @classmethod
    def load(cls, path):
        data = _read(path, "bpe")
        return cls(data["merges"], data["pattern"])

    # ------------------------------------------------------------ Hugging Face `tokenizers`
    def to_hf_json(self):
        """This tokenizer as a Hugging Face `tokenizer.json` dict (write it with json.dump).

        normalizer none; pre-tokenizer: Split by our spelled-out pattern (each chunk its own piece),
        then ByteLevel without its own regex (bytes shown as GPT-2's printable characters); model: BPE
        with our ids (256 bytes, then one id per merge) and our merges in rank order; decoder
        ByteLevel; no special tokens, no post-processor (encode adds nothing). Hugging Face's BPE
        applies the lowest-ranked pair first, leftmost first, which is what `_encode_chunk` does.
        """
        pattern = spelled_pattern(self.pattern)
        if pattern == self.pattern and re.search(r"\\[wWdDsSb]", pattern):
            raise ValueError("to_hf_json: the pattern uses \\w, \\d, \\s or \\b, which Python's re and the "
                             "tokenizers regex engine read differently; spell those classes as code points")
        shown = _bytes_to_unicode()
        tokens = ["".join(shown[b] for b in token) for token in self.vocab]
        vocab = {}
        for i, t in enumerate(tokens):
            if t in vocab:
                raise ValueError(f"to_hf_json: ids {vocab[t]} and {i} stand for the same bytes {self.vocab[i]!r}; "
                                 "a Hugging Face vocabulary maps each string to one id")
            vocab[t] = i
        return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
                "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                    {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
                    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
                "post_processor": None,
                "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
                "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                          "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                          "ignore_merges": False, "vocab": vocab,
                          "merges": [[tokens[a], tokens[b]] for a, b in self.merges]}}

    def to_hf_files(self, model_max_length=None):
        """{file name: text}: tokenizer.json, and tokenizer_config.json for AutoTokenizer (see _hf_files)."""
        return _hf_files(self.to_hf_json(), model_max_length)

    def save_hf(self, directory, model_max_length=None):
        """Write tokenizer.json + tokenizer_config.json into `directory` (each file atomically)."""
        _save_hf(self.to_hf_files(model_max_length), directory)



def load(path):
    """Load a tokenizer saved by either class; the file's "type" says which."""
    return {"char": CharTokenizer, "bpe": BPETokenizer}[_read(path)["type"]].load(path)


def _merge(ids, pair, new_id):
    """Replace each non-overlapping occurrence of `pair`, left to right, by `new_id`."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def _check_id(i, vocab_size):
    if not 0 <= i < vocab_size:
        raise ValueError(f"token id {i} is outside the vocabulary (size {vocab_size})")
    return i


def _write(path, data):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)


def _read(path, expected_type=None):
    """Read a tokenizer JSON file; anything else is a ValueError that says why."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path} is not a tokenizer file (not JSON: {e})") from None
    kind = data.get("type") if isinstance(data, dict) else None
    if kind not in ("char", "bpe"):
        raise ValueError(f"{path} is not a tokenizer file (no \"type\" of 'char' or 'bpe')")
    if expected_type is not None and kind != expected_type:
        raise ValueError(f"{path} holds a {kind!r} tokenizer, not {expected_type!r}")
    return data


# ---------------------------------------------------------------- the classes of SPLIT_PATTERN, spelled out

@functools.cache
def _classes():
    """(letters, digits, spaces): the code points Python's re puts in [^\\W\\d_], \\d and \\s, as
    regex class bodies of ranges. Surrogates are left out (they are never in UTF-8 text)."""
    blocks = [(first, "".join(map(chr, range(first, last + 1))))
              for first, last in ((0, 0xD7FF), (0xE000, sys.maxunicode))]
    bodies = []
    for cls in (r"[^\W\d_]", r"\d", r"\s"):
        ranges = []
        for first, block in blocks:
            for m in re.finditer(cls + "+", block):          # a run of consecutive code points: one range
                a, b = first + m.start(), first + m.end() - 1
                ranges.append(_char(a) if a == b else f"{_char(a)}-{_char(b)}")
        bodies.append("".join(ranges))
    return tuple(bodies)


def _char(c):
    """One code point as both engines read it inside [...]: ASCII letters and digits as themselves,
    other ASCII as \\xHH, the rest as the literal character."""
    if c < 0x80:
        return chr(c) if chr(c).isalnum() else f"\\x{c:02x}"
    return chr(c)


def spelled_pattern(pattern):
    """SPLIT_PATTERN with its classes listed as code points (see _SPELLED); other patterns unchanged."""
    if pattern != SPLIT_PATTERN:
        return pattern
    letters, digits, spaces = _classes()
    return _SPELLED.format(L=letters, D=digits, S=spaces)


def _bytes_to_unicode():
    """GPT-2's byte -> printable character table, which Hugging Face's ByteLevel uses: the printable
    bytes !..~, ¡..¬, ®..ÿ stand for themselves, the other 68 bytes for U+0100, U+0101, ... in order."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table, n = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + n)
            n += 1
    return table


def _hf_files(tokenizer_json, model_max_length):
    """tokenizer.json, and tokenizer_config.json telling AutoTokenizer to use PreTrainedTokenizerFast
    with no clean-up of spaces on decode (it would turn " ." into ".") and no special tokens."""
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "clean_up_tokenization_spaces": False,
              "add_prefix_space": False, "model_max_length": model_max_length or 1_000_000_000}
    return {"tokenizer.json": json.dumps(tokenizer_json, ensure_ascii=False, indent=1) + "\n",
            "tokenizer_config.json": json.dumps(config, indent=1) + "\n"}


def _save_hf(files, directory):
    os.makedirs(directory, exist_ok=True)
    for name, text in files.items():
        path = os.path.join(directory, name)
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
