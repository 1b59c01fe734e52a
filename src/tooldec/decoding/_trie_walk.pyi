"""Types of the compiled trie walk (``_trie_walk.c``; see :mod:`tooldec.decoding.trie_walk`)."""

from collections.abc import Sequence
from typing import overload

from typing_extensions import Buffer

from ..automata.dfa import LazyDFA

def build_trie(flat: Buffer, starts: Buffer) -> tuple[bytes, bytes, bytes, bytes, bytes, bytes]: ...
@overload
def walk(labels: Buffer, ends: Buffer, los: Buffer, nends: Buffer, tables: Buffer, wide: Buffer, sorted_rows: Buffer,
         dfa: LazyDFA, skip: Buffer | None, state: int) -> tuple[bytes, bytes, bytes, bytes, bytes]: ...
@overload
def walk(labels: Buffer, ends: Buffer, los: Buffer, nends: Buffer, tables: Buffer, wide: Buffer, sorted_rows: Buffer,
         dfa: LazyDFA, skip: Buffer | None, state: int, row_ids: Buffer, words: int, dense_from: int
         ) -> tuple[bytearray | None, bytes, bytes, int, bytes, bytes, bytes]: ...
def names_walk(labels: Buffer, ends: Buffer, los: Buffer, nends: Buffer, tables: Buffer, wide: Buffer, sorted_ids: Buffer,
               names: Sequence[bytes], lo: int, hi: int, prefix_len: int, literal: bytes) -> tuple[bytes, bytes]: ...
def pack(ids: Buffer, words: int) -> tuple[bytearray, int, bool]: ...
def fill(row: Buffer, ids: Buffer) -> None: ...
