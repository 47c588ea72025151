"""TensorBoard scalar event files written without the tensorboard package.

Format (what tensorboard's EventFileWriter writes):
- file `events.out.tfevents.{int(time)}.{hostname}.{pid}.0`;
- each record is TFRecord-framed: uint64 length (LE), masked CRC32C of those 8 bytes,
  the data, masked CRC32C of the data; mask(c) = ((c >> 15) | (c << 17)) + 0xa282ead8;
- data is an `Event` protobuf: wall_time (1, double), step (2, int64), file_version
  (3, string, first record "brain.Event:2"), summary (5, Summary); Summary.value (1,
  repeated Value); Value.tag (1, string), Value.simple_value (2, float).
"""
from __future__ import annotations

import os
import socket
import struct
import time


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # int64 fields are encoded as 64-bit two's complement
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field: int, wire_type: int) -> bytes:
    return _varint((field << 3) | wire_type)


def _length_delimited(field: int, payload: bytes) -> bytes:
    return _key(field, 2) + _varint(len(payload)) + payload


def encode_event(wall_time: float, step: int, file_version: str | None = None, scalars: dict[str, float] | None = None) -> bytes:
    out = _key(1, 1) + struct.pack("<d", wall_time)
    if step:
        out += _key(2, 0) + _varint(step)
    if file_version is not None:
        out += _length_delimited(3, file_version.encode())
    if scalars:
        summary = b""
        for tag, value in scalars.items():
            value_msg = _length_delimited(1, tag.encode()) + _key(2, 5) + struct.pack("<f", value)
            summary += _length_delimited(1, value_msg)
        out += _length_delimited(5, summary)
    return out


def frame_record(data: bytes) -> bytes:
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", masked_crc32c(header)) + data + struct.pack("<I", masked_crc32c(data))


class SummaryWriter:
    """Appends scalar events; one file per writer, flushed after every step."""

    def __init__(self, log_dir: str):
        os.makedirs(log_dir, exist_ok=True)
        name = f"events.out.tfevents.{int(time.time())}.{socket.gethostname()}.{os.getpid()}.0"
        self.path = os.path.join(log_dir, name)
        self._file = open(self.path, "wb")
        self._file.write(frame_record(encode_event(time.time(), 0, file_version="brain.Event:2")))
        self._file.flush()

    def add_scalars(self, scalars: dict[str, float], step: int) -> None:
        for tag, value in scalars.items():  # one event per scalar, as add_scalar does
            self._file.write(frame_record(encode_event(time.time(), step, scalars={tag: value})))
        self._file.flush()

    def close(self) -> None:
        self._file.close()
