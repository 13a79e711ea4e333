"""A character-level GPT written in plain PyTorch, the way the course writes it: one nn.Linear per head
for key, query and value, a `tril` buffer with masked_fill, F.softmax(dim=-1), blocks in nn.Sequential,
Dropout and LayerNorm, trained with AdamW on random windows of a text.

Nothing here knows about tinygrad_like. The same file runs under PyTorch and on the engine:
    python demos/torch_scripts/gpt_char.py --max_iters 200
    python -m tinygrad_like.torch demos/torch_scripts/gpt_char.py --max_iters 200
The text is the CPython reference topics (pydoc_data.topics, shipped with Python), so nothing is
downloaded. --log FILE writes the losses and the time per step as JSON (demos/bring_your_torch.py
reads it to draw both frameworks' curves side by side).
"""
import argparse
import json
import time

import torch
import torch.nn as nn
from torch.nn import functional as F


class Head(nn.Module):
    """One head of causal self-attention."""

    def __init__(self, n_embd, head_size, block_size, dropout):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)                                                  # (B, T, hs)
        q = self.query(x)                                                # (B, T, hs)
        wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5              # (B, T, T)
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))     # no looking ahead
        wei = F.softmax(wei, dim=-1)
        wei = self.dropout(wei)
        v = self.value(x)                                                # (B, T, hs)
        return wei @ v                                                   # (B, T, hs)


class MultiHeadAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout):
        super().__init__()
        head_size = n_embd // n_head
        self.heads = nn.ModuleList([Head(n_embd, head_size, block_size, dropout) for _ in range(n_head)])
        self.proj = nn.Linear(n_embd, n_embd)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        out = torch.cat([h(x) for h in self.heads], dim=-1)             # (B, T, C)
        return self.dropout(self.proj(out))


class FeedForward(nn.Module):
    def __init__(self, n_embd, dropout):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_embd, 4 * n_embd),
            nn.ReLU(),
            nn.Linear(4 * n_embd, n_embd),
            nn.Dropout(dropout),
        )

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    """Communication (attention) then computation (feed-forward), each on a normed copy added back."""

    def __init__(self, n_embd, n_head, block_size, dropout):
        super().__init__()
        self.sa = MultiHeadAttention(n_embd, n_head, block_size, dropout)
        self.ffwd = FeedForward(n_embd, dropout)
        self.ln1 = nn.LayerNorm(n_embd)
        self.ln2 = nn.LayerNorm(n_embd)

    def forward(self, x):
        x = x + self.sa(self.ln1(x))
        x = x + self.ffwd(self.ln2(x))
        return x


class GPT(nn.Module):
    def __init__(self, vocab_size, n_embd=64, n_head=4, n_layer=2, block_size=32, dropout=0.0):
        super().__init__()
        self.block_size = block_size
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
        self.position_embedding_table = nn.Embedding(block_size, n_embd)
        self.blocks = nn.Sequential(*[Block(n_embd, n_head, block_size, dropout) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size)
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        tok_emb = self.token_embedding_table(idx)                        # (B, T, C)
        pos_emb = self.position_embedding_table(torch.arange(T))         # (T, C)
        x = tok_emb + pos_emb
        x = self.blocks(x)
        x = self.ln_f(x)
        logits = self.lm_head(x)                                         # (B, T, vocab)
        if targets is None:
            return logits, None
        B, T, C = logits.shape
        loss = F.cross_entropy(logits.view(B * T, C), targets.view(B * T))
        return logits, loss

    @torch.no_grad()
    def generate(self, idx, max_new_tokens):
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -self.block_size:])
            probs = F.softmax(logits[:, -1, :], dim=-1)                  # (B, vocab)
            idx_next = torch.multinomial(probs, num_samples=1)           # (B, 1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


def load_text():
    from pydoc_data.topics import topics
    return "\n\n".join(topics[key] for key in sorted(topics))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n_layer", type=int, default=2)
    parser.add_argument("--n_head", type=int, default=4)
    parser.add_argument("--n_embd", type=int, default=64)
    parser.add_argument("--block_size", type=int, default=32)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--max_iters", type=int, default=300)
    parser.add_argument("--eval_interval", type=int, default=100)
    parser.add_argument("--eval_iters", type=int, default=10)
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=1337)
    parser.add_argument("--chars", type=int, default=200_000, help="use the first CHARS characters of the text")
    parser.add_argument("--sample", type=int, default=200, help="characters to generate at the end (0: none)")
    parser.add_argument("--log", help="write the losses and timings as JSON to this file")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    text = load_text()[:args.chars]
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    n = int(0.9 * len(data))
    train_data, val_data = data[:n], data[n:]

    def get_batch(split):
        d = train_data if split == "train" else val_data
        ix = torch.randint(len(d) - args.block_size, (args.batch_size,))
        x = torch.stack([d[i:i + args.block_size] for i in ix])
        y = torch.stack([d[i + 1:i + args.block_size + 1] for i in ix])
        return x, y

    @torch.no_grad()
    def estimate_loss():
        out = {}
        model.eval()
        for split in ("train", "val"):
            losses = [model(*get_batch(split))[1].item() for _ in range(args.eval_iters)]
            out[split] = sum(losses) / len(losses)
        model.train()
        return out

    model = GPT(len(chars), args.n_embd, args.n_head, args.n_layer, args.block_size, args.dropout)
    print(f"{sum(p.numel() for p in model.parameters())} parameters")
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)

    log = {"losses": [], "evals": [], "step_seconds": []}
    for it in range(args.max_iters):
        if it % args.eval_interval == 0 or it == args.max_iters - 1:
            losses = estimate_loss()
            print(f"step {it}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
            log["evals"].append([it, losses["train"], losses["val"]])
        start = time.perf_counter()
        xb, yb = get_batch("train")
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        log["step_seconds"].append(time.perf_counter() - start)
        log["losses"].append(loss.item())

    if args.sample:
        context = torch.zeros((1, 1), dtype=torch.long)
        print("".join(itos[i] for i in model.generate(context, args.sample)[0].tolist()))
    if args.log:
        with open(args.log, "w") as f:
            json.dump(log, f)


if __name__ == "__main__":
    main()
