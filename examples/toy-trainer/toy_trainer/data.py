"""Byte-level text dataset with a fixed, seed-independent batch order, so two runs (and
two branches) see exactly the same tokens at every step."""
from __future__ import annotations

import os

import torch


class ByteDataset:
    def __init__(self, path: str, seq_len: int, batch_size: int):
        if not os.path.isfile(path):
            raise FileNotFoundError(f"training.dataset_path '{path}' does not exist or is not a file")
        with open(path, "rb") as f:
            data = f.read()
        if len(data) < seq_len + 2:
            raise ValueError(f"dataset '{path}' has {len(data)} bytes; at least seq_len + 2 = {seq_len + 2} are needed")
        self.path = path
        self.tokens = torch.tensor(list(data), dtype=torch.long)
        self.seq_len = seq_len
        self.batch_size = batch_size
        # A stride co-prime with the number of windows walks every window before repeating.
        self.num_windows = len(data) - seq_len - 1
        self.stride = 7919 % self.num_windows or 1

    def batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(inputs, labels) for a 1-based training step, each [batch_size, seq_len]."""
        starts = [((step - 1) * self.batch_size + i) * self.stride % self.num_windows for i in range(self.batch_size)]
        windows = torch.stack([self.tokens[s : s + self.seq_len + 1] for s in starts])
        return windows[:, :-1], windows[:, 1:]
