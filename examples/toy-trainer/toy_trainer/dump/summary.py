"""Converts Python/torch values to msprobe's dump.json leaves (statistics, md5, tensor).

Tensor leaf keys, in msprobe's order: type, dtype, shape, Max, Min, Mean, Norm,
requires_grad, then data_name (tensor mode: the file saved in dump_tensor_data, named
after the leaf's path, e.g. Functional.gelu.0.forward.input.0.pt) or md5 (md5 mode: CRC-32
of the raw bytes, 8 hex digits).
Statistics are computed in the tensor's own dtype (float64 is taken to float32 first);
integer tensors give Max/Min as integers and Mean/Norm null, bool tensors Max=any and
Min=all, 0-d tensors all four equal to the value, empty tensors all null — as the real
msprobe 26 writes them (see tests/fixtures/msprobe-real in the parity repository).
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


class LeafOptions:
    """How leaves are completed: md5 added, or tensors saved through `save(path, tensor)`
    (returns the data_name) with `path` the leaf's dotted name."""

    def __init__(self, with_md5: bool = False, save=None):
        self.with_md5 = with_md5
        self.save = save


def tensor_leaf(t: torch.Tensor, opts: LeafOptions, path: str | None = None) -> dict:
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
    if opts.save is not None and path is not None:
        leaf["data_name"] = opts.save(path, t)
    if opts.with_md5:
        leaf["md5"] = tensor_crc32(t)
    return leaf


def _child(path: str | None, key) -> str | None:
    return None if path is None else f"{path}.{key}"


def summarize(value, opts: LeafOptions, path: str | None = None):
    """Recursively maps a value to its JSON form; None stays None (JSON null). `path` is
    the dotted name of the value (list index or dict key appended per level)."""
    if isinstance(value, torch.Tensor):
        return tensor_leaf(value, opts, path)
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
        return {name: summarize(getattr(value, name), opts, _child(path, name)) for name in value._fields}
    if isinstance(value, (list, tuple)):
        return [summarize(v, opts, _child(path, i)) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {str(k): summarize(v, opts, _child(path, k)) for k, v in value.items()}
    return None  # types msprobe does not analyse are written as null


def summarize_output(value, opts: LeafOptions, path: str | None = None) -> list:
    """msprobe always records `output` as a list."""
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return summarize(list(value), opts, path)
    return summarize([value], opts, path)
