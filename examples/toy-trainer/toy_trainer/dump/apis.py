"""Which torch APIs the dumper hooks, under msprobe's prefixes.

DUMPED calls get dump.json entries (forward and, when they build a graph, backward).
STRUCTURE_ONLY calls are view/shape operations: the real msprobe 26 hooks them and names
them in construct.json, but writes no dump.json entry (seen in the real fixture:
Tensor.reshape/transpose/chunk appear only in construct.json).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

FUNCTIONAL = (
    "linear", "layer_norm", "gelu", "softmax", "log_softmax", "cross_entropy", "nll_loss",
    "embedding", "dropout", "relu", "silu", "scaled_dot_product_attention",
)
TORCH = (
    "matmul", "bmm", "add", "sub", "mul", "div", "softmax", "tanh", "exp", "sum", "mean",
    "cat", "stack", "norm", "sqrt", "rsqrt", "clamp", "arange", "where", "sigmoid",
)
TENSOR = (
    "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
    "__truediv__", "__rtruediv__", "__matmul__", "add", "add_", "sub", "mul", "mul_", "div",
    "div_", "addcmul_", "addcdiv_", "sqrt", "lerp_", "masked_fill", "softmax", "sum", "mean",
    "pow", "exp", "sigmoid", "rsqrt",
)
TENSOR_STRUCTURE_ONLY = ("reshape", "transpose", "permute", "chunk", "split", "flatten", "unsqueeze", "squeeze")


def targets():
    """Yields (owner object, attribute name, msprobe prefix, structure_only)."""
    for name in FUNCTIONAL:
        if hasattr(F, name):
            yield F, name, "Functional", False
    for name in TORCH:
        if hasattr(torch, name):
            yield torch, name, "Torch", False
    for name in TENSOR:
        if hasattr(torch.Tensor, name):
            yield torch.Tensor, name, "Tensor", False
    for name in TENSOR_STRUCTURE_ONLY:
        if hasattr(torch.Tensor, name):
            yield torch.Tensor, name, "Tensor", True
