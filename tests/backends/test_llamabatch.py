"""Several sequences in one llama.cpp context (``SlotBatch``) on the embedded SmolLM2: a prompt
is evaluated a chunk per step while another slot keeps generating, and neither's tokens move."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("llama_cpp", reason="the llama extra is not installed")

from tooldec.backends.llamabatch import SlotBatch
from tooldec.backends.llamacpp import PROMPT_CHUNK

from .slots import chat, loaded, read


def prompt(text: str) -> list[int]:
    return chat([{"role": "user", "content": text}])


def alone(ids: list[int], new: int) -> tuple[np.ndarray, list[int]]:
    """The logits after ``ids`` and ``new`` greedy tokens, the prompt alone in a fresh context."""
    slots = SlotBatch(loaded()[0], 2, 2048)
    try:
        first = read(slots, 0, ids)
        tokens = [int(np.argmax(first))]
        while len(tokens) < new:
            rows, _ = slots.step([(0, tokens[-1])])
            tokens.append(int(np.argmax(rows[0])))
        return first, tokens
    finally:
        slots.close()


def test_a_prompt_is_evaluated_a_chunk_per_step_while_another_slot_generates() -> None:
    story = prompt("Write a long story about a dragon.")
    question = prompt("What is the capital of France? Answer in one word, then explain why. " * 10)
    chunks = -(-len(question) // PROMPT_CHUNK)
    assert chunks >= 3
    _, story_alone = alone(story, chunks + 3)
    question_first, _ = alone(question, 1)

    slots = SlotBatch(loaded()[0], 2, 2048)
    try:
        tokens = [int(np.argmax(read(slots, 0, story)))]
        slots.begin(1, question)
        ended = []
        for _ in range(chunks):  # each step: a chunk of the question, and the story's next token
            rows, first = slots.step([(0, tokens[-1])], 1)
            assert len(rows) == 1
            tokens.append(int(np.argmax(rows[0])))
            ended.append(first is not None)
        assert ended == [False] * (chunks - 1) + [True]
        assert first is not None and np.array_equal(first, question_first)
        while len(tokens) < chunks + 3:
            rows, _ = slots.step([(0, tokens[-1])])
            tokens.append(int(np.argmax(rows[0])))
        assert tokens == story_alone
        assert slots.prompt_tokens_evaluated == len(story) + len(question)
    finally:
        slots.close()


def test_a_slot_left_mid_prompt_takes_a_new_one() -> None:
    question = prompt("What is the capital of France? Answer in one word, then explain why. " * 10)
    other = prompt("Name three rivers of Europe.")
    other_first, _ = alone(other, 1)
    slots = SlotBatch(loaded()[0], 2, 2048)
    try:
        slots.begin(0, question)
        slots.step([], 0)  # one chunk of it, then its request goes
        slots.drop(0)
        assert np.array_equal(read(slots, 0, other), other_first)
    finally:
        slots.close()


def test_a_slot_evaluates_several_tokens_in_one_step_and_forgets_those_not_confirmed() -> None:
    """A draft in the batch, as jump-forward gives one: slot 0's tokens come after slot 1's in the
    request, each row's logits come back in the order given, and the tail forgotten leaves the
    slot holding exactly what it had taken (its next tokens are those of the slot alone)."""
    story, river = prompt("Write a long story about a dragon."), prompt("Name three rivers of Europe.")
    _, story_alone = alone(story, 8)
    _, river_alone = alone(river, 3)
    slots = SlotBatch(loaded()[0], 2, 2048)
    try:
        assert int(np.argmax(read(slots, 0, story))) == story_alone[0]
        assert int(np.argmax(read(slots, 1, river))) == river_alone[0]
        wrong = story_alone[4] + 1  # a token the model does not write there
        rows, _ = slots.step([(1, river_alone[0]), *((0, token) for token in [*story_alone[:4], wrong])])
        assert slots.decodes == 1 + 1 + 1  # two prompts in a chunk each, then one batch
        picks = [int(np.argmax(row)) for row in rows]
        assert picks[0] == river_alone[1] and picks[1:5] == story_alone[1:5]
        slots.forget(0, 1)
        assert slots.held[0] == [*story, *story_alone[:4]] and slots.held[1] == [*river, river_alone[0]]
        tokens = story_alone[:5]
        while len(tokens) < 8:
            rows, _ = slots.step([(0, tokens[-1]), (1, river_alone[1])] if len(tokens) == 5 else [(0, tokens[-1])])
            tokens.append(int(np.argmax(rows[0])))
        assert tokens == story_alone
    finally:
        slots.close()
