"""Text mode, tool mode and the token masks between them."""

from .grammar import Grammar, Mask, Position, prepare
from .machine import Machine, Mode, ToolChoice
from .token_index import TokenIndex

__all__ = ["Grammar", "Machine", "Mask", "Mode", "Position", "TokenIndex", "ToolChoice", "prepare"]
