"""parity probe helper, written into a parity worktree by inject_prints and removed by its
revert. Each probe() call prints one machine-readable line per value:

  PARITY_PROBE {"id": ..., "site": "file:line", "when": "before|after|entry|return",
                "name": ..., "type": ..., "shape": [...], "dtype": ..., "device": ...,
                "hash": "sha256 of the raw bytes", "sum": ..., "mean": ..., "min": ...,
                "max": ..., "norm": ..., "call": n, "rank": r}

only on rank RANK and only for the calls listed in CALLS (1 = the first time the probe runs),
so logs stay small. Values are never modified."""
import hashlib
import json
import os
import sys

RANK = __PARITY_RANK__
CALLS = __PARITY_CALLS__  # list of call numbers, or None for every call
MAX_ITEMS = 16

_counts = {}


def _rank():
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank()
    except Exception:
        pass
    for key in ("RANK", "LOCAL_RANK"):
        if key in os.environ:
            try:
                return int(os.environ[key])
            except ValueError:
                pass
    return 0


def _tensor_fields(t):
    import torch
    out = {"type": "torch.Tensor", "shape": list(t.shape), "dtype": str(t.dtype), "device": str(t.device)}
    c = t.detach().cpu().contiguous()
    if c.dtype == torch.bfloat16:
        raw = c.view(torch.int16).numpy().tobytes()
    elif c.is_complex():
        raw = torch.view_as_real(c).numpy().tobytes()
    else:
        raw = c.numpy().tobytes()
    out["hash"] = hashlib.sha256(raw).hexdigest()
    if c.numel() == 0:
        out.update(sum=None, mean=None, min=None, max=None, norm=None)
        return out
    d = (c.abs() if c.is_complex() else c).double()
    out.update(sum=d.sum().item(), mean=d.mean().item(), min=d.min().item(), max=d.max().item(),
               norm=d.norm().item())
    return out


def _fields(value):
    try:
        import torch
        if isinstance(value, torch.Tensor):
            return _tensor_fields(value)
    except ImportError:
        pass
    text = repr(value)
    out = {"type": type(value).__name__, "value": text[:200],
           "hash": hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()}
    if isinstance(value, (bool, int, float)) and not isinstance(value, bool):
        out.update(sum=float(value), mean=float(value), min=float(value), max=float(value), norm=abs(float(value)))
    return out


def _emit(record):
    sys.stdout.write("PARITY_PROBE " + json.dumps(record, allow_nan=True) + "\n")
    sys.stdout.flush()


def _walk(base, name, value, depth=0):
    if isinstance(value, (list, tuple)) and depth < 3:
        _emit(dict(base, name=name, type=type(value).__name__, length=len(value)))
        for i, item in enumerate(value[:MAX_ITEMS]):
            _walk(base, "%s[%d]" % (name, i), item, depth + 1)
        return
    if isinstance(value, dict) and depth < 3:
        _emit(dict(base, name=name, type="dict", length=len(value)))
        for i, (k, item) in enumerate(value.items()):
            if i >= MAX_ITEMS:
                break
            _walk(base, "%s[%r]" % (name, k), item, depth + 1)
        return
    record = dict(base, name=name)
    record.update(_fields(value))
    _emit(record)


def probe(probe_id, site, when, name, value):
    """Prints the value (when this rank and call are selected) and returns it unchanged."""
    key = (probe_id, when, name)
    n = _counts.get(key, 0) + 1
    _counts[key] = n
    if (CALLS is None or n in CALLS) and _rank() == RANK:
        try:
            _walk({"id": probe_id, "site": site, "when": when, "call": n, "rank": RANK}, name, value)
        except Exception as e:  # a probe must never break the training
            _emit({"id": probe_id, "site": site, "when": when, "name": name, "call": n, "rank": RANK,
                   "error": repr(e)})
    return value
