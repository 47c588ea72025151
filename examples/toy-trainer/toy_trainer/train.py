"""Entry point: `python -m toy_trainer.train --module toy --config toy_small [flags]`.

Mirrors torchtitan's Trainer: parse flags over the registered config, set determinism,
build the model, load a checkpoint, train with AdamW and grad clipping, log metrics,
save checkpoints. Any failure propagates as a Python exception (Traceback, exit 1).
"""
from __future__ import annotations

import logging
import os
import sys
import zlib

import torch

from toy_trainer import config as config_module
from toy_trainer.checkpoint import CheckpointManager
from toy_trainer.config_registry import DEFAULT_CONFIG, DEFAULT_MODULE, apply_registered
from toy_trainer.data import ByteDataset
from toy_trainer.logging_utils import init_logger, install_tee_prefix
from toy_trainer.metrics import MetricsProcessor
from toy_trainer.model import Transformer, cross_entropy_loss, init_weights, num_flops_per_token
from toy_trainer import llama

logger = logging.getLogger()

# --module's model class and its FLOPs estimate.
MODELS = {"toy": (Transformer, num_flops_per_token), "llama": (llama.TinyLlama, llama.num_flops_per_token)}


def pick_device() -> torch.device:
    try:
        import torch_npu  # noqa: F401  (registers the "npu" device)

        if torch.npu.is_available():
            return torch.device("npu:0")
    except ImportError:
        pass
    if torch.cuda.is_available():
        return torch.device("cuda:0")
    return torch.device("cpu")


def set_determinism(cfg, device: torch.device) -> None:
    # One intra-op thread: CPU reductions then always split work the same way.
    torch.set_num_threads(1)
    if cfg.debug.deterministic:
        logger.info("Deterministic algorithm enabled (expect perf degradation).")
        torch.use_deterministic_algorithms(True, warn_only=cfg.debug.deterministic_warn_only)
        if cfg.debug.deterministic_warn_only:
            logger.warning(
                "debug.deterministic_warn_only is set: operators without a deterministic "
                "implementation only warn instead of failing; bitwise reproducibility is not guaranteed."
            )
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    elif cfg.debug.deterministic_warn_only:
        logger.warning("debug.deterministic_warn_only is set without debug.deterministic; it has no effect.")
    seed = cfg.debug.seed
    if seed is None:
        seed = int.from_bytes(os.urandom(4), "little")
        logger.warning(f"debug.seed is not set; using random seed {seed}: runs will not be reproducible.")
    torch.manual_seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed % 2**32)
    logger.info(f"Seed {seed} set on {device.type}; torch intra-op threads: {torch.get_num_threads()}")


def weights_crc32(model: torch.nn.Module) -> str:
    crc = 0
    for name, tensor in model.state_dict().items():
        crc = zlib.crc32(name.encode(), crc)
        crc = zlib.crc32(tensor.detach().cpu().contiguous().numpy().tobytes(), crc)
    return f"{crc:08x}"


def _make_dumper(cfg, model: torch.nn.Module):
    if cfg.dump.dir is None:
        return None
    from toy_trainer.dump import Dumper  # only imported when dumping is asked for

    return Dumper(cfg.dump, model, rank=int(os.environ.get("RANK", "0")))


def main(argv: list[str]) -> None:
    install_tee_prefix()
    init_logger()
    cfg = config_module.JobConfig()
    module, config_name = config_module.find_registered_names(argv)
    model_args = apply_registered(module or DEFAULT_MODULE, config_name or DEFAULT_CONFIG, cfg)
    explicit = config_module.parse_args(argv, cfg)
    logger.info(f"Starting job: {cfg.job.description}")
    logger.info(f"Command-line overrides: {', '.join(explicit) if explicit else '(none)'}")

    device = pick_device()
    set_determinism(cfg, device)
    if cfg.training.seq_len > model_args.max_seq_len:
        raise ValueError(f"training.seq_len {cfg.training.seq_len} exceeds the model's max_seq_len {model_args.max_seq_len}")

    logger.info(f"Building {cfg.model.name} {cfg.model.flavor} with {model_args}")
    model_class, flops_per_token = MODELS[cfg.model.name]
    model = model_class(model_args, tp_degree=cfg.parallelism.tensor_parallel_degree)
    init_weights(model)
    model.to(device)
    nparams = sum(p.numel() for p in model.parameters())
    logger.info(f"Model {cfg.model.name} {cfg.model.flavor} size: {nparams:,} total parameters")
    if cfg.parallelism.tensor_parallel_degree > 1:
        logger.info(f"Tensor parallel degree {cfg.parallelism.tensor_parallel_degree} (simulated: sharded MLP, partial sums reduced in order)")

    optimizer = torch.optim.AdamW(
        model.parameters(), lr=cfg.optimizer.lr, eps=cfg.optimizer.eps, weight_decay=cfg.optimizer.weight_decay
    )
    dataset = ByteDataset(cfg.training.dataset_path, cfg.training.seq_len, cfg.training.local_batch_size)
    checkpointer = CheckpointManager(cfg, model, optimizer, model_config=vars(model_args))
    if cfg.checkpoint.create_seed_checkpoint:
        if not cfg.checkpoint.enable:
            raise ValueError("checkpoint.create_seed_checkpoint requires checkpoint.enable")
        checkpointer.save(0, last=False)
        logger.info("Created seed checkpoint")
        return
    start_step = checkpointer.load()
    logger.info(f"Model weights crc32 before step {start_step + 1}: {weights_crc32(model)}")

    metrics = MetricsProcessor(cfg, device, flops_per_token(model, cfg.training.seq_len))
    dumper = _make_dumper(cfg, model)
    logger.info(f"Training starts at step {start_step + 1}, with local batch size {cfg.training.local_batch_size}, "
                f"sequence length {cfg.training.seq_len}, total steps {cfg.training.steps}")
    for step in range(start_step + 1, cfg.training.steps + 1):
        inputs, labels = dataset.batch(step)
        inputs, labels = inputs.to(device), labels.to(device)
        metrics.ntokens_since_last_log += labels.numel()
        if dumper is not None:
            dumper.start(step - 1)  # msprobe counts steps from 0
        optimizer.zero_grad()
        loss = cross_entropy_loss(model(inputs), labels)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.training.max_norm)
        optimizer.step()
        if dumper is not None:
            dumper.stop()
        if metrics.should_log(step):
            loss_value = loss.item()
            metrics.log(step, loss_value, loss_value, grad_norm.item(), optimizer.param_groups[0]["lr"])
        checkpointer.maybe_save(step, last=step == cfg.training.steps)
    metrics.close()
    logger.info("Training completed")
    logger.info("training success")


if __name__ == "__main__":
    main(sys.argv[1:])
