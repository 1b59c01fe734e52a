"""The Mistral head and tail against what Mistral's own tokenizer writes for tool calls.

``mistral-common`` encodes an assistant turn with two tool calls; the tokens after
``[TOOL_CALLS]``, read as bytes through tooldec's vocabulary of the same SentencePiece model,
must be exactly head + name + tail, then ``NEXT_CALL`` and the second name + tail.
"""

from __future__ import annotations

from typing import Literal

import pytest
from mistral_common.protocol.instruct.messages import AssistantMessage, ChatMessage, ToolMessage, UserMessage
from mistral_common.protocol.instruct.request import ChatCompletionRequest
from mistral_common.protocol.instruct.tool_calls import Function, FunctionCall
from mistral_common.protocol.instruct.tool_calls import Tool as MistralTool
from mistral_common.protocol.instruct.tool_calls import ToolCall as MistralToolCall
from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

from tooldec.automata.dfa import SINK
from tooldec.dialects import Mistral
from tooldec.models import mistral_tokenizer_path
from tooldec.tokens import Vocabulary, from_sentencepiece
from tooldec.tools import Tool

from .helpers import call_dfa

CALLS = [
    ("get_protein_sequence", '{"gene": "BRCA1", "species": "Homo sapiens"}'),
    ("get_prime_factors", '{"number": 5, "formatted": false}'),
]


def _walk(dialect: Mistral, tools: dict[str, Tool], data: bytes) -> list[str]:
    """The names of the calls in ``data`` (after the head), walked as the engine walks them."""
    names: list[str] = []
    while True:
        name = next(n for n in tools if data.startswith(n.encode()))
        names.append(name)
        dfa = call_dfa(dialect, tools[name], next_call=True)
        state, counts = dfa.start, {}
        for i, byte in enumerate(data):
            state, counts = dfa.advance_exact(state, byte, counts)
            assert state != SINK, data[: i + 1]
            if state in dfa.marks:
                data = data[i + 1:]
                break
            if dfa.arrays.accepting[state]:
                assert i == len(data) - 1, data[i:]
                return names
        else:
            pytest.fail(f"the call does not close: {data!r}")


@pytest.mark.parametrize("version", ["v3", "v7"])
def test_mistral_common_tool_calls_fit_the_grammar(version: Literal["v3", "v7"], bfcl_tools: dict[str, Tool]) -> None:
    path = mistral_tokenizer_path(version)
    tokenizer = MistralTokenizer.from_file(str(path))
    vocab: Vocabulary = from_sentencepiece(path)
    tools = {name: bfcl_tools[name] for name, _ in CALLS}
    messages: list[ChatMessage] = [
        UserMessage(content="BRCA1 protein, and the prime factors of 5?"),
        AssistantMessage(tool_calls=[
            MistralToolCall(id=f"call{i}abcd", function=FunctionCall(name=name, arguments=args))
            for i, (name, args) in enumerate(CALLS)
        ]),
        *(ToolMessage(tool_call_id=f"call{i}abcd", content="{}") for i in range(len(CALLS))),  # a turn ends here
    ]
    request = ChatCompletionRequest(
        tools=[MistralTool(function=Function(name=t.name, description="", parameters=t.parameters)) for t in tools.values()],
        messages=messages,
    )
    tokens = tokenizer.encode_chat_completion(request).tokens
    trigger = vocab.special_id(Mistral.trigger or "")
    assert trigger is not None and trigger in tokens
    body = tokens[tokens.index(trigger) + 1:]
    body = body[: next(i for i, t in enumerate(body) if t in vocab.eos_ids)]
    data = vocab.decode(body)
    assert data.startswith(Mistral.head)  # with the space SentencePiece puts before "[{"
    assert _walk(Mistral(), tools, data[len(Mistral.head):]) == [name for name, _ in CALLS]
    parsed = Mistral().parse_calls((Mistral.trigger or "") + data.decode())
    assert [(c.name, c.id) for c in parsed] == [(name, f"call{i}abcd") for i, (name, _) in enumerate(CALLS)]
