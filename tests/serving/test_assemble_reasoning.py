"""``reasoning_content`` apart from ``content`` and ``tool_calls``, fed token by token as a
server streams them (Qwen3's real tokenizer, the engine's own modes)."""

from __future__ import annotations

import pytest
import tokenizers

from tooldec.decoding import Compiler, Machine, Mode
from tooldec.dialects import Qwen3
from tooldec.models import tokenizer_json_path
from tooldec.serving.assemble import Assembler, CallEvent, ContentEvent, ReasoningEvent
from tooldec.tokens import Vocabulary


def get_weather(city: str) -> dict[str, str]:
    """Current weather in a city."""
    return {"city": city}


@pytest.mark.parametrize(("text", "reasoning", "content", "calls"), [
    ("<think>\nParis, so weather.\n</think>\n\n<tool_call>\n"
     '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', "\nParis, so weather.\n", "", 1),
    ("<think>\nA call here: <tool_call> is not one.\n</think>\n\nIt is sunny.", "\nA call here: <tool_call> is not one.\n",
     "It is sunny.", 0),
    ("No reasoning today.", "", "No reasoning today.", 0),
])
def test_reasoning_content_is_apart(text: str, reasoning: str, content: str, calls: int, qwen_vocab: Vocabulary) -> None:
    dialect = Qwen3()
    machine = Machine(Compiler(qwen_vocab, dialect).compile([get_weather]))
    tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_json_path("qwen3")))
    assembler = Assembler(dialect)
    events = []
    for token in tokenizer.encode(text, add_special_tokens=False).ids:
        assert machine.advance(token)
        events += assembler.feed(tokenizer.decode([token], skip_special_tokens=False).encode(),
                                 in_call=machine.advanced.mode is Mode.TOOL, in_reasoning=machine.advanced.mode is Mode.REASONING)
    events += assembler.finish()
    assert "".join(e.text for e in events if isinstance(e, ReasoningEvent)) == reasoning == assembler.reasoning
    assert "".join(e.text for e in events if isinstance(e, ContentEvent)) == content == assembler.content
    assert len([e for e in events if isinstance(e, CallEvent)]) == calls
