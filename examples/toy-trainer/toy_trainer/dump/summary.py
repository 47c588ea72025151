"""Converts Python/torch values to msprobe's dump.json leaves (statistics and md5 modes).

Tensor leaf keys, in msprobe's order: type, dtype, shape, Max, Min, Mean, Norm,
requires_grad, then md5 (CRC-32 of the raw bytes, 8 hex digits) in md5 mode.
Statistics are computed in the tensor's own dtype (float64 is taken to float32 first);
integer tensors give Max/Min as integers and Mean/Norm null, bool tensors Max=any and
Min=all, 0-d tensors all four equal to the value, empty tensors all null — as the real
msprobe 26 writes them (see ../shared/fixtures/msprobe-real).
"""
from __future__ import annotations

import zlib

import torch


def tensor_crc32(t: torch.Tensor) -> str:
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:  # hash the raw 16-bit patterns, as msprobe does
        t = t.view(torch.int16)
    return f"{zlib.crc32(t.numpy().tobytes()):08x}"


def _stats(t: torch.Tensor):
    data = t.detach()
    if data.numel() == 0:
        return None, None, None, None
    if data.dtype == torch.bool:
        return bool(data.any().item()), bool(data.all().item()), None, None
    if data.dim() == 0:
        value = data.item()
        return value, value, value, value
    if not data.is_floating_point() and not data.is_complex():
        return data.max().item(), data.min().item(), None, None
    if data.is_complex():
        data = data.abs()
        return data.max().item(), data.min().item(), data.mean().item(), None
    if data.dtype == torch.float64:
        data = data.float()
    return data.max().item(), data.min().item(), data.mean().item(), torch.linalg.vector_norm(data).item()


def tensor_leaf(t: torch.Tensor, with_md5: bool) -> dict:
    maximum, minimum, mean, norm = _stats(t)
    leaf = {
        "type": "torch.Tensor",
        "dtype": str(t.dtype),
        "shape": list(t.shape),
        "Max": maximum,
        "Min": minimum,
        "Mean": mean,
        "Norm": norm,
        "requires_grad": t.requires_grad,
    }
    if with_md5:
        leaf["md5"] = tensor_crc32(t)
    return leaf


def summarize(value, with_md5: bool):
    """Recursively maps a value to its JSON form; None stays None (JSON null)."""
    if isinstance(value, torch.Tensor):
        return tensor_leaf(value, with_md5)
    if value is None:
        return None
    if isinstance(value, (bool, int, float, str)):
        return {"type": type(value).__name__, "value": value}
    if isinstance(value, torch.Size):
        return {"type": "torch.Size", "value": list(value)}
    if isinstance(value, torch.dtype):
        return {"type": "torch.dtype", "value": str(value)}
    if isinstance(value, torch.device):
        return {"type": "torch.device", "value": str(value)}
    if isinstance(value, slice):
        return {"type": "slice", "value": [value.start, value.stop, value.step]}
    if value is Ellipsis:
        return {"type": "ellipsis", "value": "..."}
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # namedtuple
        return {name: summarize(getattr(value, name), with_md5) for name in value._fields}
    if isinstance(value, (list, tuple)):
        return [summarize(v, with_md5) for v in value]
    if isinstance(value, dict):
        return {str(k): summarize(v, with_md5) for k, v in value.items()}
    return None  # types msprobe does not analyse are written as null


def summarize_output(value, with_md5: bool) -> list:
    """msprobe always records `output` as a list."""
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return [summarize(v, with_md5) for v in value]
    return [summarize(value, with_md5)]
