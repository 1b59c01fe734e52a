"""Read the metadata key/values of a GGUF file, and nothing else.

``gguf``'s ``GGUFReader`` parses every field eagerly (2.4 s for SmolLM2-135M's header); this
walks the GGUF v2/v3 header once over an mmap and skips the arrays not asked for. The tests
compare it with ``GGUFReader`` on a real file.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Collection
from pathlib import Path
from typing import Any

from tooldec.errors import TokenizerError

__all__ = ["read_gguf_metadata"]

_MAGIC = b"GGUF"
_STRING, _ARRAY = 8, 9
# GGUF value type -> struct format of one scalar (8 = string and 9 = array are handled apart).
_SCALAR_FORMATS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


class _Cursor:
    """A read position in the mmap, with the file's byte order."""

    def __init__(self, buffer: mmap.mmap, order: str) -> None:
        self.buffer = buffer
        self.order = order
        self.pos = 0

    def scalar(self, fmt: str) -> Any:
        (value,) = struct.unpack_from(self.order + fmt, self.buffer, self.pos)
        self.pos += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        length = self.scalar("Q")
        raw = self.buffer[self.pos : self.pos + length]
        if len(raw) != length:
            raise EOFError
        self.pos += length
        return raw.decode("utf-8", errors="surrogateescape")

    def value(self, value_type: int, keep: bool) -> Any:
        if value_type == _STRING:
            return self.string()
        if value_type == _ARRAY:
            return self.array(keep)
        fmt = _SCALAR_FORMATS.get(value_type)
        if fmt is None:
            raise ValueError(f"unknown GGUF value type {value_type}")
        return self.scalar(fmt)

    def array(self, keep: bool) -> list[Any] | None:
        item_type = self.scalar("I")
        count = self.scalar("Q")
        if item_type in _SCALAR_FORMATS:
            fmt = _SCALAR_FORMATS[item_type]
            width = struct.calcsize(fmt)
            values = list(struct.unpack_from(f"{self.order}{count}{fmt}", self.buffer, self.pos)) if keep else None
            self.pos += count * width
            return values
        if item_type == _STRING and not keep:
            for _ in range(count):  # only the lengths are read
                self.pos += 8 + struct.unpack_from(self.order + "Q", self.buffer, self.pos)[0]
            return None
        items = [self.value(item_type, keep) for _ in range(count)]
        return items if keep else None


def read_gguf_metadata(path: Path, *, arrays: Collection[str] = ()) -> dict[str, Any]:
    """The scalar metadata of a GGUF file and the arrays named in ``arrays`` (others are skipped);
    ``TokenizerError`` for a file that is not GGUF v2/v3 or a truncated header."""
    try:
        with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as buffer:
            if buffer[:4] != _MAGIC:
                raise TokenizerError(f"{path}: not a GGUF file (magic {bytes(buffer[:4])!r})")
            order = "<"
            (version,) = struct.unpack_from("<I", buffer, 4)
            if version & 0xFFFF == 0:  # a big-endian file reads as a huge little-endian number
                order = ">"
                (version,) = struct.unpack_from(">I", buffer, 4)
            if version not in (2, 3):
                raise TokenizerError(f"{path}: GGUF version {version} is not supported (only 2 and 3)")
            cursor = _Cursor(buffer, order)
            cursor.pos = 8
            cursor.scalar("Q")  # tensor count: tensors are not read
            kv_count = cursor.scalar("Q")
            metadata: dict[str, Any] = {}
            for _ in range(kv_count):
                key = cursor.string()
                value_type = cursor.scalar("I")
                value = cursor.value(value_type, keep=value_type != _ARRAY or key in arrays)
                if value is not None:
                    metadata[key] = value
            return metadata
    except (struct.error, EOFError, ValueError) as error:
        raise TokenizerError(f"{path}: corrupt or truncated GGUF header ({error})") from None
    except OSError as error:
        raise TokenizerError(f"{path}: cannot read GGUF file ({error.strerror or error})") from None
