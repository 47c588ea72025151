"""A small GPT: token + position embeddings, pre-norm transformer blocks (LayerNorm,
causal softmax attention, GELU MLP, residual adds) and a linear head.

Every operation goes through torch / torch.nn.functional / Tensor calls that an
msprobe-style dumper can hook, so a numerics change shows up at a named API.
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from toy_trainer.config_registry import ModelArgs

# Additive causal mask value: finite, so dumped statistics stay finite, and large enough
# that softmax gives exactly 0 for masked positions.
_MASKED = -1e9


class Attention(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.n_heads = args.n_heads
        self.head_dim = args.dim // args.n_heads
        self.wq = nn.Linear(args.dim, args.dim, bias=False)
        self.wk = nn.Linear(args.dim, args.dim, bias=False)
        self.wv = nn.Linear(args.dim, args.dim, bias=False)
        self.wo = nn.Linear(args.dim, args.dim, bias=False)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        bs, seqlen, dim = x.shape
        xq = self.wq(x).view(bs, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        xk = self.wk(x).view(bs, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        xv = self.wv(x).view(bs, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(xq, xk.transpose(-2, -1)) / math.sqrt(self.head_dim)
        scores = scores + mask
        probs = F.softmax(scores, dim=-1)
        out = torch.matmul(probs, xv).transpose(1, 2).reshape(bs, seqlen, dim)
        return self.wo(out)


class FeedForward(nn.Module):
    def __init__(self, args: ModelArgs, tp_degree: int):
        super().__init__()
        hidden = args.ffn_multiplier * args.dim
        if hidden % tp_degree:
            raise ValueError(f"ffn hidden size {hidden} is not divisible by tensor_parallel_degree {tp_degree}")
        self.tp_degree = tp_degree
        self.w1 = nn.Linear(args.dim, hidden)
        self.w2 = nn.Linear(hidden, args.dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.tp_degree > 1:
            return self._row_parallel_forward(x)
        return self.w2(F.gelu(self.w1(x)))

    def _row_parallel_forward(self, x: torch.Tensor) -> torch.Tensor:
        # Column-parallel w1 and row-parallel w2 as tensor parallelism shards them; the
        # partial sums are reduced shard by shard, as an all-reduce would.
        w1_shards = self.w1.weight.chunk(self.tp_degree, dim=0)
        b1_shards = self.w1.bias.chunk(self.tp_degree, dim=0)
        w2_shards = self.w2.weight.chunk(self.tp_degree, dim=1)
        out = None
        for w1, b1, w2 in zip(w1_shards, b1_shards, w2_shards):
            partial = F.linear(F.gelu(F.linear(x, w1, b1)), w2)
            out = partial if out is None else torch.add(out, partial)
        return torch.add(out, self.w2.bias)


class TransformerBlock(nn.Module):
    def __init__(self, layer_id: int, args: ModelArgs, tp_degree: int):
        super().__init__()
        self.layer_id = layer_id
        self.attention_norm = nn.LayerNorm(args.dim, eps=args.norm_eps)
        self.attention = Attention(args)
        self.ffn_norm = nn.LayerNorm(args.dim, eps=args.norm_eps)
        self.feed_forward = FeedForward(args, tp_degree)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = torch.add(x, self.attention(self.attention_norm(x), mask))
        return torch.add(h, self.feed_forward(self.ffn_norm(h)))


class Transformer(nn.Module):
    def __init__(self, args: ModelArgs, tp_degree: int = 1):
        super().__init__()
        self.args = args
        self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
        self.pos_embeddings = nn.Embedding(args.max_seq_len, args.dim)
        self.layers = nn.ModuleList(TransformerBlock(i, args, tp_degree) for i in range(args.n_layers))
        self.norm = nn.LayerNorm(args.dim, eps=args.norm_eps)
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)
        causal = torch.triu(torch.ones(args.max_seq_len, args.max_seq_len, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", torch.zeros(causal.shape).masked_fill(causal, _MASKED), persistent=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        seqlen = tokens.shape[1]
        positions = torch.arange(seqlen, device=tokens.device)
        h = torch.add(self.tok_embeddings(tokens), self.pos_embeddings(positions))
        mask = self.mask[:seqlen, :seqlen]
        for layer in self.layers:
            h = layer(h, mask)
        return self.output(self.norm(h))


def init_weights(model: Transformer) -> None:
    """GPT-2 style initialisation, drawn from the global RNG in module order."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)


def num_flops_per_token(model: Transformer, seq_len: int) -> int:
    """torchtitan's estimate: 6 * parameters (excluding embeddings) + attention term."""
    args = model.args
    nparams = sum(p.numel() for p in model.parameters())
    nparams_embedding = sum(p.numel() for p in model.tok_embeddings.parameters())
    nparams_embedding += sum(p.numel() for p in model.pos_embeddings.parameters())
    head_dim = args.dim // args.n_heads
    return 6 * (nparams - nparams_embedding) + 12 * args.n_layers * args.n_heads * head_dim * seq_len


def cross_entropy_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.flatten(0, 1), labels.flatten(0, 1))
