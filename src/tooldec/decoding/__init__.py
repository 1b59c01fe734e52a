"""Text and tool mode and the token masks between them: compile, then cursor.

``Compiler(vocab, dialect).compile(tools)`` returns a ``Grammar``, an immutable snapshot;
``Machine(grammar, ...)`` is the per-sequence cursor. Compilers and grammars may be shared by any
number of threads; a machine belongs to one sequence.
"""

from .grammar import Compiler, Grammar, prepare_vocabulary
from .machine import Advanced, Machine, Mode, ToolChoice, fill_bitmasks
from .masks import Mask, allocate_token_bitmask, apply_token_bitmask_inplace, bitmask_words, unpack_bitmask
from .positions import Head, Name, Open, Position, Tail, Text, Think

__all__ = [
    "Advanced",
    "Compiler",
    "Grammar",
    "Head",
    "Machine",
    "Mask",
    "Mode",
    "Name",
    "Open",
    "Position",
    "Tail",
    "Text",
    "Think",
    "ToolChoice",
    "allocate_token_bitmask",
    "apply_token_bitmask_inplace",
    "bitmask_words",
    "fill_bitmasks",
    "prepare_vocabulary",
    "unpack_bitmask",
]
