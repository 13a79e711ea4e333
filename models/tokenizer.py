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
import json
import re
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
