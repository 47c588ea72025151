"""Checkpoints laid out like torchtitan's: `{dump_folder}/{checkpoint.folder}/step-N/`.

Two on-disk formats:
- DCP-like (default): `.metadata` (JSON index: key -> dtype, shape, byte range; train
  state) and one shard `__0_0.distcp` with the raw little-endian bytes. torch 1.13 has no
  torch.distributed.checkpoint, so the layout is reproduced, not the pickle inside.
- HF (`--checkpoint.last_save_in_hf` / `--checkpoint.initial_load_in_hf`): `model.safetensors`
  in the real safetensors format (8-byte header length, JSON header, data) and config.json.

Loading follows torchtitan's order: resume from the newest step-N of the run's own
checkpoint folder if there is one, else the initial load path (model only). Failure modes
are torchtitan's: an invalid initial_load_path raises ValueError, a DCP folder without
`.metadata` fails with `AssertionError: metadata is None`.
"""
from __future__ import annotations

import json
import logging
import os
import re
import struct
import time

import torch

logger = logging.getLogger()

METADATA_FILE = ".metadata"
SHARD_FILE = "__0_0.distcp"
SAFETENSORS_FILE = "model.safetensors"
_STEP_DIR = re.compile(r"^step-(\d+)$")

_TORCH_TO_ST = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.int64: "I64", torch.float64: "F64"}
_ST_TO_TORCH = {v: k for k, v in _TORCH_TO_ST.items()}


def _tensor_bytes(t: torch.Tensor) -> bytes:
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: keep the raw 16-bit pattern
        t = t.view(torch.int16)
    return t.numpy().tobytes()


def _tensor_from(raw: bytes, dtype: torch.dtype, shape: list[int]) -> torch.Tensor:
    if not raw:
        return torch.empty(shape, dtype=dtype)
    if dtype == torch.bfloat16:
        return torch.frombuffer(bytearray(raw), dtype=torch.int16).view(torch.bfloat16).reshape(shape).clone()
    return torch.frombuffer(bytearray(raw), dtype=dtype).reshape(shape).clone()


def _flatten_optimizer(optimizer: torch.optim.Optimizer, model: torch.nn.Module) -> dict[str, torch.Tensor]:
    names = {id(p): n for n, p in model.named_parameters()}
    flat = {}
    for group in optimizer.param_groups:
        for p in group["params"]:
            for key, value in optimizer.state.get(p, {}).items():
                flat[f"optimizer.state.{names[id(p)]}.{key}"] = value if torch.is_tensor(value) else torch.tensor(value)
    return flat


def _restore_optimizer(optimizer: torch.optim.Optimizer, model: torch.nn.Module, flat: dict[str, torch.Tensor]) -> None:
    params = dict(model.named_parameters())
    for key, value in flat.items():
        _, _, rest = key.partition("optimizer.state.")
        pname, _, field = rest.rpartition(".")
        if pname not in params:
            raise RuntimeError(f"optimizer state for unknown parameter '{pname}' in checkpoint")
        optimizer.state[params[pname]][field] = value


def save_dcp(path: str, tensors: dict[str, torch.Tensor], train_state: dict | None) -> None:
    os.makedirs(path, exist_ok=True)
    index, offset = {}, 0
    with open(os.path.join(path, SHARD_FILE), "wb") as shard:
        for key, t in tensors.items():
            raw = _tensor_bytes(t)
            shard.write(raw)
            index[key] = {"dtype": str(t.dtype), "shape": list(t.shape), "offset": offset, "nbytes": len(raw)}
            offset += len(raw)
    metadata = {"format": "toy-dcp/1", "storage": SHARD_FILE, "state_dict_metadata": index, "train_state": train_state}
    with open(os.path.join(path, METADATA_FILE), "w") as f:
        json.dump(metadata, f, indent=1)


def _read_metadata(path: str):
    metadata_path = os.path.join(path, METADATA_FILE)
    if not os.path.isfile(metadata_path):
        return None
    with open(metadata_path) as f:
        return json.load(f)


def load_dcp(path: str) -> tuple[dict[str, torch.Tensor], dict | None]:
    metadata = _read_metadata(path)
    assert metadata is not None, "metadata is None"
    tensors = {}
    with open(os.path.join(path, metadata["storage"]), "rb") as shard:
        for key, entry in metadata["state_dict_metadata"].items():
            shard.seek(entry["offset"])
            raw = shard.read(entry["nbytes"])
            if len(raw) != entry["nbytes"]:
                raise RuntimeError(f"checkpoint shard {shard.name} is truncated at key '{key}'")
            dtype = getattr(torch, entry["dtype"].replace("torch.", ""))
            tensors[key] = _tensor_from(raw, dtype, entry["shape"])
    return tensors, metadata.get("train_state")


def save_hf(path: str, tensors: dict[str, torch.Tensor], config: dict) -> None:
    os.makedirs(path, exist_ok=True)
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for key, t in tensors.items():
        if t.dtype not in _TORCH_TO_ST:
            raise ValueError(f"cannot save {key} of dtype {t.dtype} as safetensors")
        raw = _tensor_bytes(t)
        header[key] = {"dtype": _TORCH_TO_ST[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)  # safetensors pads the header to 8 bytes
    with open(os.path.join(path, SAFETENSORS_FILE), "wb") as f:
        f.write(struct.pack("<Q", len(encoded)))
        f.write(encoded)
        for raw in blobs:
            f.write(raw)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(config, f, indent=2)


def load_hf(path: str) -> dict[str, torch.Tensor]:
    files = sorted(n for n in os.listdir(path) if n.endswith(".safetensors"))
    if not files:
        raise FileNotFoundError(f"No safetensors files found in {path} (checkpoint.initial_load_in_hf expects an HF checkpoint folder)")
    tensors = {}
    for name in files:
        with open(os.path.join(path, name), "rb") as f:
            (header_len,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(header_len))
            base = 8 + header_len
            for key, entry in header.items():
                if key == "__metadata__":
                    continue
                begin, end = entry["data_offsets"]
                f.seek(base + begin)
                tensors[key] = _tensor_from(f.read(end - begin), _ST_TO_TORCH[entry["dtype"]], entry["shape"])
    return tensors


def _step_dirs(folder: str) -> list[tuple[int, str]]:
    if not os.path.isdir(folder):
        return []
    steps = [(int(m.group(1)), os.path.join(folder, n)) for n in os.listdir(folder) if (m := _STEP_DIR.match(n))]
    return sorted(steps)


def _resolve_initial(path: str) -> str:
    """A folder holding checkpoint files, or (as the premerge skill's `mv step-1 ...` leaves
    it) a folder holding step-N folders, of which the newest is used."""
    if not os.path.isdir(path):
        raise ValueError(f"checkpoint.initial_load_path is specified but the path is not valid: {path}")
    has_files = any(n == METADATA_FILE or n.endswith(".safetensors") for n in os.listdir(path))
    steps = _step_dirs(path)
    if not has_files and steps:
        return steps[-1][1]
    return path


class CheckpointManager:
    def __init__(self, cfg, model: torch.nn.Module, optimizer: torch.optim.Optimizer, model_config: dict):
        self.cfg = cfg.checkpoint
        self.folder = os.path.join(cfg.job.dump_folder, self.cfg.folder)
        self.model = model
        self.optimizer = optimizer
        self.model_config = model_config
        if self.cfg.last_save_in_hf and not self.cfg.last_save_model_only:
            raise ValueError("Only model can be saved when saving in HF safetensors format (set --checkpoint.last_save_model_only).")

    def load(self) -> int:
        """Loads per torchtitan's rules and returns the step training resumes after (0 = fresh)."""
        if not self.cfg.enable:
            return 0
        own = _step_dirs(self.folder)
        if own:
            step, path = own[-1]
            if self.cfg.initial_load_path is not None:
                logger.info(f"checkpoint.initial_load_path is ignored: {self.folder} already holds step-{step}.")
            return self._load_from(path, in_hf=False, model_only=False, fallback_step=step)
        if self.cfg.initial_load_path is None:
            logger.info("No checkpoint found in %s and no checkpoint.initial_load_path; training from scratch.", self.folder)
            return 0
        path = _resolve_initial(self.cfg.initial_load_path)
        self._load_from(path, in_hf=self.cfg.initial_load_in_hf, model_only=self.cfg.initial_load_model_only, fallback_step=0)
        return 0

    def _load_from(self, path: str, in_hf: bool, model_only: bool, fallback_step: int) -> int:
        logger.info(f"Loading the checkpoint from {path}.")
        begin = time.monotonic()
        train_state = None
        if in_hf:
            tensors = load_hf(path)
        else:
            tensors, train_state = load_dcp(path)
        model_state = {k: v for k, v in tensors.items() if not k.startswith("optimizer.")}
        self.model.load_state_dict(model_state, strict=True)
        step = 0
        if not model_only and train_state is not None:
            _restore_optimizer(self.optimizer, self.model, {k: v for k, v in tensors.items() if k.startswith("optimizer.")})
            step = int(train_state.get("step", fallback_step))
        logger.info(f"Finished loading the checkpoint in {time.monotonic() - begin:.2f} seconds.")
        return step

    def maybe_save(self, step: int, last: bool) -> None:
        if not self.cfg.enable or self.cfg.load_only:
            return
        if not last and step % self.cfg.interval != 0:
            return
        self.save(step, last)

    def save(self, step: int, last: bool) -> None:
        path = os.path.join(self.folder, f"step-{step}")
        logger.info("Saving the checkpoint (or staging if async is enabled).")
        begin = time.monotonic()
        model_state = {k: v for k, v in self.model.state_dict().items()}
        if last and self.cfg.last_save_in_hf:
            save_hf(path, model_state, self.model_config)
        elif last and self.cfg.last_save_model_only:
            save_dcp(path, model_state, None)
        else:
            tensors = dict(model_state)
            tensors.update(_flatten_optimizer(self.optimizer, self.model))
            save_dcp(path, tensors, {"step": step})
        logger.info(
            f"Finished saving the checkpoint (or staging if async is enabled)in {time.monotonic() - begin:.2f} seconds."
        )
