"""Registered model configurations: `--module toy --config <name>`, as in torchtitan(-npu),
where --config is a registered name and not a file path."""
from __future__ import annotations

from dataclasses import dataclass

from toy_trainer.config import JobConfig


@dataclass(frozen=True)
class ModelArgs:
    vocab_size: int = 256  # byte-level tokens
    dim: int = 64
    n_layers: int = 2
    n_heads: int = 4
    ffn_multiplier: int = 4
    max_seq_len: int = 64
    norm_eps: float = 1e-5


@dataclass(frozen=True)
class LlamaArgs:
    vocab_size: int = 256  # byte-level tokens
    dim: int = 32
    hidden_dim: int = 64
    n_layers: int = 2
    max_seq_len: int = 64
    norm_eps: float = 1e-5  # RMSNorm's, read as a scalar
    table_base: float = 10000.0


def _toy_small(cfg: JobConfig) -> ModelArgs:
    return ModelArgs()


def _toy_tp2(cfg: JobConfig) -> ModelArgs:
    # Same model as toy_small; the MLP runs row-parallel in two shards whose partial
    # results are summed, which changes the summation order the way TP=2 does.
    cfg.parallelism.tensor_parallel_degree = 2
    return ModelArgs()


def _toy_debug(cfg: JobConfig) -> ModelArgs:
    cfg.training.local_batch_size = 4
    cfg.training.seq_len = 32
    return ModelArgs(dim=32, n_layers=2, n_heads=2, max_seq_len=32)


def _llama_small(cfg: JobConfig) -> LlamaArgs:
    return LlamaArgs()


MODULES = {"toy": {"toy_small": _toy_small, "toy_tp2": _toy_tp2, "toy_debug": _toy_debug},
           "llama": {"llama_small": _llama_small}}
DEFAULT_MODULE = "toy"
DEFAULT_CONFIG = "toy_small"


def apply_registered(module: str, config: str, cfg: JobConfig) -> ModelArgs | LlamaArgs:
    """Fills cfg with the config's defaults and returns its model arguments.

    Raises ValueError naming the registered choices when module or config is unknown.
    """
    if module not in MODULES:
        raise ValueError(f"Unknown module '{module}'. Registered modules: {sorted(MODULES)}")
    configs = MODULES[module]
    if config not in configs:
        raise ValueError(
            f"Unknown config '{config}' for module '{module}'. Registered configs: {sorted(configs)}"
        )
    cfg.model.name = module
    cfg.model.flavor = config
    return configs[config](cfg)
