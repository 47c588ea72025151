"""A small Llama-style model (`--module llama`): token embeddings scaled by a per-channel
table built in __init__, parallel blocks (RMSNorm, a linear mixer and a SwiGLU MLP both
added to the residual), a final RMSNorm and a linear head.

Its shapes differ from the GPT's on purpose: RMSNorm reads its epsilon as a scalar
(`+ self.eps`), the block's output is a three-term sum, the MLP calls F.silu, and the
table is state computed before training, which no dumped call produces.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from toy_trainer.config_registry import LlamaArgs


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class SwiGLU(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class ParallelBlock(nn.Module):
    def __init__(self, args: LlamaArgs):
        super().__init__()
        self.mix_norm = RMSNorm(args.dim, args.norm_eps)
        self.mix = nn.Linear(args.dim, args.dim, bias=False)
        self.ffn_norm = RMSNorm(args.dim, args.norm_eps)
        self.feed_forward = SwiGLU(args.dim, args.hidden_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.mix(self.mix_norm(x))
        b = self.feed_forward(self.ffn_norm(x))
        return (x + a) + b


class TinyLlama(nn.Module):
    def __init__(self, args: LlamaArgs, tp_degree: int = 1):
        super().__init__()
        if tp_degree != 1:
            raise ValueError(f"--module llama has no tensor parallelism; tensor_parallel_degree is {tp_degree}")
        self.args = args
        self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
        table = 1.0 / (args.table_base ** (torch.arange(0, args.dim, dtype=torch.float32) / args.dim))
        self.register_buffer("channel_scale", table, persistent=False)
        self.layers = nn.ModuleList(ParallelBlock(args) for _ in range(args.n_layers))
        self.norm = RMSNorm(args.dim, args.norm_eps)
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.tok_embeddings(tokens) * (1.0 + self.channel_scale)
        for layer in self.layers:
            h = layer(h)
        return self.output(self.norm(h))


def num_flops_per_token(model: TinyLlama, seq_len: int) -> int:
    """6 * parameters outside the embedding (no attention term: the blocks mix channels only)."""
    nparams = sum(p.numel() for p in model.parameters())
    return 6 * (nparams - model.tok_embeddings.weight.numel())
