"""torchtitan's logger setup, plus the per-line rank prefix torchrun's `--tee` adds.

torchtitan logs through the root logger to stderr with
"[titan] %(asctime)s - %(name)s - %(levelname)s - %(message)s". Under
`torchrun --role rank --tee 3` every output line of local rank R is prefixed "[rankR]:".
torch 1.13's torchrun cannot parse `--tee` on Python 3.11, so scripts/run_train.sh starts
the trainer directly and asks for the same prefix through TOY_TEE_PREFIX; tracebacks get
it too, as under torchrun.
"""
from __future__ import annotations

import io
import logging
import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Color:
    black = "\033[30m"
    red = "\033[31m"
    green = "\033[32m"
    yellow = "\033[33m"
    blue = "\033[34m"
    magenta = "\033[35m"
    cyan = "\033[36m"
    white = "\033[37m"
    reset = "\033[39m"
    orange = "\033[38;2;180;60;0m"
    turquoise = "\033[38;2;54;234;195m"


@dataclass(frozen=True)
class NoColor:
    black = ""
    red = ""
    green = ""
    yellow = ""
    blue = ""
    magenta = ""
    cyan = ""
    white = ""
    reset = ""
    orange = ""
    turquoise = ""


class _LinePrefixer(io.TextIOBase):
    def __init__(self, stream, prefix: str):
        self._stream = stream
        self._prefix = prefix
        self._at_line_start = True

    def write(self, text: str) -> int:
        out = []
        for piece in text.splitlines(keepends=True):
            if self._at_line_start:
                out.append(self._prefix)
            out.append(piece)
            self._at_line_start = piece.endswith("\n")
        self._stream.write("".join(out))
        self._stream.flush()
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def fileno(self) -> int:
        return self._stream.fileno()

    def isatty(self) -> bool:
        return self._stream.isatty()


def install_tee_prefix() -> None:
    prefix = os.environ.get("TOY_TEE_PREFIX", "")
    if prefix:
        sys.stdout = _LinePrefixer(sys.stdout, prefix)
        sys.stderr = _LinePrefixer(sys.stderr, prefix)


def init_logger() -> logging.Logger:
    logger = logging.getLogger()
    logger.setLevel(logging.INFO)
    logger.handlers.clear()
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.INFO)
    handler.setFormatter(logging.Formatter("[titan] %(asctime)s - %(name)s - %(levelname)s - %(message)s"))
    logger.addHandler(handler)
    return logger
