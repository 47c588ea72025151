"""Job configuration and torchtitan-style command line parsing.

Flags look like torchtitan's: `--section.option value` or `--section.option=value`;
booleans are switches (`--debug.deterministic`) that also accept `=true|false` and a
`--section.no_option` negation. String options are taken literally, exactly like the
CLI of torchtitan 0.2.x does: `--checkpoint.initial_load_path None` yields the string
"None", not Python's None (a trap the premerge skill warns about, reproduced on purpose).
An unknown flag or a malformed value exits with status 2 and an argparse-style message.
"""
from __future__ import annotations

import dataclasses
import sys
import typing
from dataclasses import dataclass, field


@dataclass
class Job:
    dump_folder: str = "./outputs"
    description: str = "toy trainer job"


@dataclass
class Model:
    name: str = ""  # set from --module
    flavor: str = ""  # set from --config


@dataclass
class Training:
    steps: int = 100
    local_batch_size: int = 8
    seq_len: int = 64
    dataset_path: str = "data/corpus.txt"
    max_norm: float = 1.0


@dataclass
class Optimizer:
    name: str = "AdamW"
    lr: float = 1e-3
    eps: float = 1e-8
    weight_decay: float = 0.1


@dataclass
class Parallelism:
    tensor_parallel_degree: int = 1


@dataclass
class Debug:
    seed: typing.Optional[int] = None
    deterministic: bool = False
    deterministic_warn_only: bool = False


@dataclass
class Checkpoint:
    enable: bool = False
    folder: str = "checkpoint"
    interval: int = 500
    initial_load_path: typing.Optional[str] = None
    initial_load_model_only: bool = True
    initial_load_in_hf: bool = False
    last_save_model_only: bool = True
    last_save_in_hf: bool = False
    load_only: bool = False
    create_seed_checkpoint: bool = False


@dataclass
class Metrics:
    log_freq: int = 1
    enable_tensorboard: bool = False
    save_tb_folder: str = "tb"
    disable_color_printing: bool = False
    # A JSON-lines metrics file the trainer writes itself (one object per logged step, floats
    # as Python's repr: full precision), relative to the working folder; empty: none.
    save_jsonl_file: str = ""


@dataclass
class Dump:
    """msprobe-format dump; off unless --dump.dir is given."""
    dir: typing.Optional[str] = None
    level: str = "L1"
    mode: str = "statistics"
    step: str = ""  # comma-separated msprobe step indices (0-based); empty = every step
    rank: str = ""  # comma-separated ranks to dump; empty = every rank


@dataclass
class JobConfig:
    job: Job = field(default_factory=Job)
    model: Model = field(default_factory=Model)
    training: Training = field(default_factory=Training)
    optimizer: Optimizer = field(default_factory=Optimizer)
    parallelism: Parallelism = field(default_factory=Parallelism)
    debug: Debug = field(default_factory=Debug)
    checkpoint: Checkpoint = field(default_factory=Checkpoint)
    metrics: Metrics = field(default_factory=Metrics)
    dump: Dump = field(default_factory=Dump)


# Top-level aliases torchtitan accepts besides the dotted form.
_ALIASES = {"module": "model.name", "config": "model.flavor", "dump_folder": "job.dump_folder"}
_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


def _usage_error(message: str) -> typing.NoReturn:
    prog = "toy_trainer.train"
    sys.stderr.write(f"usage: {prog} [--module NAME] [--config NAME] [--section.option VALUE ...]\n")
    sys.stderr.write(f"{prog}: error: {message}\n")
    sys.exit(2)


def _resolve(cfg: JobConfig, dotted: str):
    """Returns (section object, option name, declared type) or None."""
    if dotted.count(".") != 1:
        return None
    section_name, option = dotted.split(".")
    section = getattr(cfg, section_name, None)
    if section is None or not dataclasses.is_dataclass(section):
        return None
    hints = typing.get_type_hints(type(section))
    if option not in hints:
        return None
    return section, option, hints[option]


def _convert(flag: str, raw: str, declared):
    base = declared
    if typing.get_origin(declared) is typing.Union:
        base = next(a for a in typing.get_args(declared) if a is not type(None))
    if base is bool:
        lowered = raw.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        _usage_error(f"argument {flag}: invalid bool value: '{raw}'")
    if base is int:
        try:
            return int(raw)
        except ValueError:
            _usage_error(f"argument {flag}: invalid int value: '{raw}'")
    if base is float:
        try:
            return float(raw)
        except ValueError:
            _usage_error(f"argument {flag}: invalid float value: '{raw}'")
    return raw  # str: taken literally, so "None" stays the string "None"


def parse_args(argv: list[str], cfg: JobConfig) -> list[str]:
    """Applies argv over cfg (already holding the registered config's defaults).

    Returns the list of options that were set explicitly, in order, for the log.
    """
    explicit = []
    i = 0
    while i < len(argv):
        token = argv[i]
        if not token.startswith("--"):
            _usage_error(f"unrecognized arguments: {token}")
        name, has_value, value = token[2:].partition("=")
        name = _ALIASES.get(name, name).replace("-", "_")
        target = _resolve(cfg, name)
        negated = False
        if target is None and ".no_" in name:
            section, _, option = name.partition(".no_")
            target = _resolve(cfg, f"{section}.{option}")
            negated = target is not None
        if target is None:
            _usage_error(f"unrecognized arguments: {token}")
        section, option, declared = target
        if declared is bool and not has_value:
            parsed = not negated
        else:
            if negated:
                _usage_error(f"argument {token}: negated switches take no value")
            if not has_value:
                if i + 1 >= len(argv):
                    _usage_error(f"argument --{name}: expected one argument")
                i += 1
                value = argv[i]
            parsed = _convert(f"--{name}", value, declared)
        setattr(section, option, parsed)
        explicit.append(f"{name}={parsed!r}")
        i += 1
    return explicit


def find_registered_names(argv: list[str]) -> tuple[str | None, str | None]:
    """Extracts --module and --config early: they choose the defaults argv then overrides."""
    module = config = None
    for i, token in enumerate(argv):
        for flag in ("module", "model.name", "config", "model.flavor"):
            value = None
            if token == f"--{flag}" and i + 1 < len(argv):
                value = argv[i + 1]
            elif token.startswith(f"--{flag}="):
                value = token.split("=", 1)[1]
            if value is not None:
                if flag in ("module", "model.name"):
                    module = value
                else:
                    config = value
    return module, config
