"""Helpers shared by the toy-trainer tests: locating the repo, running the trainer,
reading its log lines and TensorBoard event files (an independent reader: CRCs checked,
protobuf decoded by hand), building the demo repo once per test process."""
from __future__ import annotations

import glob
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TRAINER = os.path.join(REPO, "examples", "toy-trainer")
GENERATOR = os.path.join(REPO, "examples", "make-demo-repo")
PYTHON = "/usr/bin/python3"
RUN_TIMEOUT_S = 300

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_METRIC_LINE = re.compile(
    r"^\[rank0\]:\[titan\] \d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - root - INFO - "
    r"step: *(\d+)  loss: *(\S+)  grad_norm: *(\S+)  memory: *([\d.]+)GiB\(([\d.]+)%\)  "
    r"tps: ([\d,]+)  tflops: ([\d,.]+)  mfu: ([\d.]+)%$"
)


def msprobe_fixtures_dir() -> str:
    """The real msprobe output kept in the repository (tests/fixtures/msprobe-real)."""
    path = os.path.join(REPO, "tests", "fixtures", "msprobe-real")
    if not os.path.isfile(os.path.join(path, "README.md")):
        raise RuntimeError(f"msprobe fixtures not found at {path}: they are part of the repository")
    return path


def fail(message: str) -> None:
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def run_train(workdir: str, args: list[str], expect_success: bool = True) -> subprocess.CompletedProcess:
    """Runs scripts/run_train.sh of the trainer tree at workdir; output combined like 2>&1."""
    proc = subprocess.run(
        ["bash", os.path.join(workdir, "scripts", "run_train.sh"), *args],
        cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=RUN_TIMEOUT_S,
    )
    if expect_success and proc.returncode != 0:
        fail(f"training in {workdir} with {args} exited {proc.returncode}:\n{proc.stdout[-4000:]}")
    return proc


def metric_lines(log: str) -> list[dict]:
    """Parses every metrics line; fails if a line mentioning 'step:' does not match exactly."""
    rows = []
    for raw in log.splitlines():
        line = _ANSI.sub("", raw)
        if "step:" not in line:
            continue
        m = _METRIC_LINE.match(line)
        if not m:
            fail(f"metrics line not in torchtitan's format: {raw!r}")
        rows.append({"step": int(m.group(1)), "loss": m.group(2), "grad_norm": m.group(3)})
    return rows


def _masked_crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 & -(c & 1))
    c ^= 0xFFFFFFFF
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def _fields(buf: bytes):
    pos = 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        elif wire == 2:
            length, pos = _read_varint(buf, pos)
            value, pos = buf[pos:pos + length], pos + length
        else:
            raise ValueError(f"unsupported wire type {wire}")
        yield field, wire, value


def read_scalars(event_file: str) -> tuple[str, dict[str, dict[int, float]]]:
    """Returns (file_version, {tag: {step: value}}); raises on any CRC or framing error."""
    with open(event_file, "rb") as f:
        data = f.read()
    pos, version, scalars = 0, None, {}
    while pos < len(data):
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        if header_crc != _masked_crc32c(header):
            raise ValueError(f"{event_file}: bad length CRC at offset {pos}")
        payload = data[pos + 12:pos + 12 + length]
        (payload_crc,) = struct.unpack("<I", data[pos + 12 + length:pos + 16 + length])
        if len(payload) != length or payload_crc != _masked_crc32c(payload):
            raise ValueError(f"{event_file}: bad data CRC at offset {pos}")
        pos += 16 + length
        step = 0
        values = []
        for field, wire, value in _fields(payload):
            if field == 2 and wire == 0:
                step = value
            elif field == 3 and wire == 2:
                version = value.decode()
            elif field == 5 and wire == 2:
                for vfield, _, vvalue in _fields(value):
                    if vfield != 1:
                        continue
                    tag = simple = None
                    for f2, w2, v2 in _fields(vvalue):
                        if f2 == 1:
                            tag = v2.decode()
                        elif f2 == 2 and w2 == 5:
                            (simple,) = struct.unpack("<f", v2)
                    values.append((tag, simple))
        for tag, simple in values:
            scalars.setdefault(tag, {})[step] = simple
    return version, scalars


def tb_scalars(dump_folder: str) -> dict[str, dict[int, float]]:
    files = glob.glob(os.path.join(dump_folder, "tb", "*", "events.out.tfevents.*"))
    if len(files) != 1:
        fail(f"expected exactly one TensorBoard event file under {dump_folder}/tb, found {files}")
    version, scalars = read_scalars(files[0])
    if version != "brain.Event:2":
        fail(f"event file version is {version!r}, expected 'brain.Event:2'")
    return scalars


def make_demo_repo(dest: str, extra: list[str] | None = None) -> dict:
    subprocess.run([PYTHON, GENERATOR, dest, *(extra or [])], check=True, timeout=RUN_TIMEOUT_S)
    with open(os.path.join(dest, "ground_truth.json")) as f:
        return json.load(f)


def worktree(repo: str, branch: str, parent: str) -> str:
    """A detached worktree of branch (the user's working tree is left alone)."""
    path = os.path.join(parent, branch.replace("/", "_"))
    subprocess.run(["git", "-C", repo, "worktree", "add", "--detach", "-q", path, branch], check=True)
    return path


def tempdir(prefix: str) -> str:
    return tempfile.mkdtemp(prefix=f"parity-toy-{prefix}-")
