"""The per-step metrics line (torchtitan 0.2.2's MetricsProcessor.log, verbatim format)
and the TensorBoard scalars written beside it at full precision."""
from __future__ import annotations

import datetime
import json
import logging
import os
import resource
import time

import torch

from toy_trainer.logging_utils import Color, NoColor
from toy_trainer.tensorboard import SummaryWriter

logger = logging.getLogger()

# torchtitan falls back to the A100 bf16 peak when it does not know the device.
_FALLBACK_PEAK_FLOPS = 312e12


def _peak_flops(device: torch.device) -> float:
    logger.warning(f"Peak flops undefined for: {device.type}, fallback to A100")
    return _FALLBACK_PEAK_FLOPS


class _MemoryStats:
    def __init__(self, gib: float, pct: float):
        self.max_reserved_gib = gib
        self.max_reserved_pct = pct


def _memory_stats(device: torch.device) -> _MemoryStats:
    if device.type == "cuda":
        reserved = torch.cuda.max_memory_reserved(device)
        total = torch.cuda.get_device_properties(device).total_memory
    elif device.type == "npu":
        reserved = torch.npu.max_memory_reserved(device)
        total = torch.npu.get_device_properties(device).total_memory
    else:  # CPU: the process's peak resident set against physical memory
        reserved = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return _MemoryStats(reserved / 2**30, 100.0 * reserved / total)


class MetricsProcessor:
    def __init__(self, cfg, device: torch.device, num_flops_per_token: int):
        self.color = NoColor() if cfg.metrics.disable_color_printing else Color()
        self.device = device
        self.num_flops_per_token = num_flops_per_token
        self.gpu_peak_flops = _peak_flops(device)
        self.log_freq = cfg.metrics.log_freq
        self.writer = None
        if cfg.metrics.enable_tensorboard:
            stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
            log_dir = os.path.join(cfg.job.dump_folder, cfg.metrics.save_tb_folder, stamp)
            self.writer = SummaryWriter(log_dir)
            logger.info(f"TensorBoard logging enabled. Logs will be saved at {log_dir}")
        self.jsonl = None
        if cfg.metrics.save_jsonl_file:
            folder = os.path.dirname(cfg.metrics.save_jsonl_file)
            if folder:
                os.makedirs(folder, exist_ok=True)
            self.jsonl = open(cfg.metrics.save_jsonl_file, "w")
        self.ntokens_since_last_log = 0
        self.time_last_log = time.perf_counter()

    def should_log(self, step: int) -> bool:
        return step == 1 or step % self.log_freq == 0

    def log(self, step: int, global_avg_loss: float, global_max_loss: float, grad_norm: float, lr: float) -> None:
        time_delta = time.perf_counter() - self.time_last_log
        tps = self.ntokens_since_last_log / time_delta
        tflops = self.num_flops_per_token * tps / 1e12
        mfu = 100 * self.num_flops_per_token * tps / self.gpu_peak_flops
        device_mem_stats = _memory_stats(self.device)
        if self.writer is not None:
            self.writer.add_scalars(
                {
                    "loss_metrics/global_avg_loss": global_avg_loss,
                    "loss_metrics/global_max_loss": global_max_loss,
                    "grad_norm": grad_norm,
                    "lr": lr,
                    "throughput(tps)": tps,
                    "tflops": tflops,
                    "mfu(%)": mfu,
                    "memory/max_reserved(GiB)": device_mem_stats.max_reserved_gib,
                    "memory/max_reserved(%)": device_mem_stats.max_reserved_pct,
                    "time_metrics/end_to_end(s)": time_delta,
                },
                step,
            )
        if self.jsonl is not None:
            self.jsonl.write(json.dumps({"step": step, "loss": global_avg_loss, "grad_norm": grad_norm, "lr": lr}) + "\n")
            self.jsonl.flush()
        color = self.color
        mfu_str = f"{mfu:.2f}%" if mfu is not None else "N/A"
        logger.info(
            f"{color.red}step: {step:2}  "
            f"{color.green}loss: {global_avg_loss:8.5f}  "
            f"{color.orange}grad_norm: {grad_norm:7.4f}  "
            f"{color.turquoise}memory: {device_mem_stats.max_reserved_gib:5.2f}GiB"
            f"({device_mem_stats.max_reserved_pct:.2f}%)  "
            f"{color.blue}tps: {round(tps):,}  "
            f"{color.cyan}tflops: {tflops:,.2f}  "
            f"{color.magenta}mfu: {mfu_str}{color.reset}"
        )
        self.ntokens_since_last_log = 0
        self.time_last_log = time.perf_counter()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.jsonl is not None:
            self.jsonl.close()
