"""Types of the compiled trie walk (``_trie_walk.c``; see :mod:`tooldec.decoding.trie_walk`)."""

from collections.abc import Sequence
from typing import overload

import numpy as np
from typing_extensions import Buffer

from ..automata._dfa_expand import Tables

Trie = tuple[Buffer, Buffer, Buffer, Buffer, Buffer, Buffer]
DfaView = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Tables | None]

def build_trie(flat: Buffer, starts: Buffer) -> tuple[bytes, bytes, bytes, bytes, bytes, bytes]: ...
@overload
def walk(trie: Trie, rows: np.ndarray, dfa: DfaView, state: int, skip: np.ndarray | None,
         mask: None = None) -> tuple[bytes, bytes, bytes, bytes, bytes] | int: ...
@overload
def walk(trie: Trie, rows: np.ndarray, dfa: DfaView, state: int, skip: np.ndarray | None, mask: tuple[np.ndarray, int, int]
         ) -> tuple[bytearray | None, bytes, bytes, int, bytes, bytes, bytes] | int: ...
def names_walk(trie: Trie, sorted_ids: Buffer, names: Sequence[bytes], lo: int, hi: int, prefix_len: int,
               literal: bytes) -> tuple[bytes, bytes]: ...
def pack(ids: Buffer, words: int) -> tuple[bytearray, int, bool]: ...
def fill(row: Buffer, ids: Buffer) -> None: ...
def longest_count(trie: Trie, data: Buffer) -> int: ...
