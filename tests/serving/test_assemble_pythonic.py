"""A streamed answer with a Pythonic call after text: the call-like bytes are held back, never sent
as content, and come out as the call (the watch knows the tool names, as the engine does)."""

from __future__ import annotations

from tooldec.decoding import Grammar, Machine, Mode
from tooldec.dialects import Pythonic
from tooldec.serving import Assembler, CallEvent, ContentEvent
from tooldec.tokens import Vocabulary


def get_weather(city: str) -> str:
    """Current weather in a city."""
    return city


def test_a_pythonic_call_after_text_streams_as_content_then_a_call(smollm2_vocab: Vocabulary) -> None:
    dialect = Pythonic(openers=["call"])
    grammar = Grammar([get_weather], smollm2_vocab, dialect)
    machine = Machine(grammar)
    assembler = Assembler(dialect, names=grammar.names)
    text = 'See [1] and [x].\n[get_weather(city="Paris")]\nDone.'
    events = []
    for tid in smollm2_vocab.longest_match(text.encode()):
        assert machine.advance(tid)
        events += assembler.feed(smollm2_vocab.token_bytes[tid] or b"", in_call=machine.advanced.mode is Mode.TOOL)
    events += assembler.finish()
    content = "".join(e.text for e in events if isinstance(e, ContentEvent))
    calls = [e.call for e in events if isinstance(e, CallEvent)]
    assert content == "See [1] and [x].\n\nDone."
    assert [(c.name, dict(c.arguments)) for c in calls] == [("get_weather", {"city": "Paris"})]
