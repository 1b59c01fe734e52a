"""The host-memory prompt cache (``PromptCache``) on the embedded SmolLM2: a prompt a slot evaluated
is restored into another slot after its own was overwritten, with the logits of a fresh
evaluation to the bit, and the cache holds no more bytes than its budget."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("llama_cpp", reason="the llama extra is not installed")

from tooldec.backends.llamabatch import SlotBatch
from tooldec.backends.llamacpp import PROMPT_CHUNK, LlamaCppGenerator, chunked_prefix
from tooldec.backends.promptcache import PromptCache

from .slots import chat, loaded, read

SYSTEM = ("You are a careful assistant. You answer questions about geography, rivers, capitals and weather. "
          "Think about each question, then answer it in one sentence. " * 4)


def prompt(*turns: str) -> list[int]:
    """A conversation: the system prompt, then user and assistant turns alternating."""
    messages = [{"role": "system", "content": SYSTEM}]
    messages += [{"role": "user" if k % 2 == 0 else "assistant", "content": text} for k, text in enumerate(turns)]
    return chat(messages)


def other(text: str) -> list[int]:
    """A prompt without the system prompt: it shares no chunk with :func:`prompt`'s."""
    return chat([{"role": "user", "content": text}])


def fresh(ids: list[int]) -> np.ndarray:
    """The logits after ``ids`` evaluated alone in a fresh context, no cache."""
    slots = SlotBatch(loaded()[0], 1, 1024)
    try:
        return read(slots, 0, ids)
    finally:
        slots.close()


def test_a_prompt_evaluated_in_slot_0_restored_into_slot_2_gives_the_logits_of_a_fresh_evaluation() -> None:
    first = prompt("What is the capital of France?")
    follow = prompt("What is the capital of France?", "Paris.", "And which river runs through it?")
    restorable = chunked_prefix(first[: len(first) - len(first) % PROMPT_CHUNK], follow)
    assert restorable >= 2 * PROMPT_CHUNK  # the system prompt and the first turn, in whole chunks
    expected = fresh(follow)

    cache = PromptCache(256 * 2**20)
    slots = SlotBatch(loaded()[0], 3, 3072, cache)
    try:
        read(slots, 0, first)
        read(slots, 2, other("Name three rivers of Europe."))  # slot 2 holds another prompt
        assert len(cache) == 0  # nothing overwritten yet
        read(slots, 0, other("Write a haiku about the sea."))  # slot 0's prompt goes to the cache
        assert len(cache) == 1 and cache.saved == 1
        evaluated = slots.prompt_tokens_evaluated
        got = read(slots, 2, follow)
        assert (cache.hits, cache.tokens_restored) == (1, restorable)
        assert slots.prompt_tokens_evaluated - evaluated == len(follow) - restorable
        assert np.array_equal(got, expected)
        assert slots.held[2] == follow
    finally:
        slots.close()


def test_without_the_cache_the_other_slot_evaluates_the_whole_prompt() -> None:
    """The same steps with no cache: slot 2 keeps nothing of ``follow`` (what the cache saves)."""
    first = prompt("What is the capital of France?")
    follow = prompt("What is the capital of France?", "Paris.", "And which river runs through it?")
    slots = SlotBatch(loaded()[0], 3, 3072)
    try:
        read(slots, 0, first)
        read(slots, 2, other("Name three rivers of Europe."))
        read(slots, 0, other("Write a haiku about the sea."))
        evaluated = slots.prompt_tokens_evaluated
        read(slots, 2, follow)
        assert slots.prompt_tokens_evaluated - evaluated == len(follow)
    finally:
        slots.close()


def test_eviction_keeps_the_cache_within_its_bytes_and_drops_the_least_recently_used() -> None:
    questions = [other(f"Question {k}: " + "what is the longest river of each continent? " * 10) for k in range(4)]
    assert len({len(ids) // PROMPT_CHUNK for ids in questions}) == 1  # the same whole chunks: the same bytes
    assert max(chunked_prefix(questions[0], ids) for ids in questions[1:]) == 0  # none keeps another's
    prefixes = [ids[: len(ids) - len(ids) % PROMPT_CHUNK] for ids in questions]
    cache = PromptCache(2**40)
    slots = SlotBatch(loaded()[0], 1, 1024, cache)
    try:
        read(slots, 0, other("Say hi."))
        read(slots, 0, questions[0])
        read(slots, 0, other("Say hello."))  # questions[0] stored
        size = cache.bytes
        cache.budget = 2 * size + size // 2  # room for two entries
        seen = []
        for ids in [questions[1], other("Say hey."), questions[2], other("Say yo.")]:
            read(slots, 0, ids)
            seen.append(cache.bytes)
        assert max(seen) <= cache.budget and len(cache) == 2 and cache.evicted == 1
        assert cache.best(questions[0]) == (None, 0)  # the oldest went
        assert cache.best(questions[1])[1] > 0 and cache.best(questions[2])[1] > 0

        read(slots, 0, questions[1])  # a hit makes it the most recently used
        assert cache.hits == 1
        read(slots, 0, questions[3])
        read(slots, 0, other("Say bye."))  # questions[3] stored, questions[2] evicted
        assert cache.bytes <= cache.budget and len(cache) == 2
        assert cache.best(questions[2]) == (None, 0)
        assert [cache.best(ids)[1] for ids in (questions[1], questions[3])] == [len(prefixes[1]), len(prefixes[3])]
    finally:
        slots.close()


def test_the_entry_being_restored_is_not_evicted_to_store_what_the_slot_held() -> None:
    """A slot holding a prompt takes one the cache holds, with room for one entry: the entry is
    restored, and what the slot held is not stored (it would evict that entry first)."""
    first, second = (other(f"Question {k}: " + "what is the longest river of each continent? " * 10) for k in range(2))
    cache = PromptCache(2**40)
    slots = SlotBatch(loaded()[0], 1, 1024, cache)
    try:
        read(slots, 0, first)
        read(slots, 0, second)  # first stored
        cache.budget = cache.bytes + cache.bytes // 2
        expected = fresh(first)
        assert np.array_equal(read(slots, 0, first), expected)
        assert (cache.hits, cache.saved, cache.evicted, len(cache)) == (1, 1, 0, 1)
        assert cache.best(first)[1] > 0 and cache.best(second) == (None, 0)
    finally:
        slots.close()


def test_an_entry_larger_than_the_budget_is_not_stored() -> None:
    cache = PromptCache(1024)
    slots = SlotBatch(loaded()[0], 1, 1024, cache)
    try:
        read(slots, 0, prompt("What is the capital of France?"))
        read(slots, 0, other("Say hi."))
        assert len(cache) == 0 and cache.bytes == 0
    finally:
        slots.close()


def test_the_one_context_generator_restores_a_prompt_with_the_logits_of_a_fresh_evaluation() -> None:
    """``tooldec serve --parallel 1`` evaluates prompts in the model's own context: the cache
    works there too, so that one slot and N are compared on the same footing."""
    llm, tokenizer = loaded()
    follow = prompt("What is the capital of France?", "Paris.", "And which river runs through it?")
    llm.reset()
    expected = LlamaCppGenerator(llm, tokenizer).start(follow).copy()
    cache = PromptCache(256 * 2**20)
    generator = LlamaCppGenerator(llm, tokenizer, prompt_cache=cache)
    llm.reset()
    generator.start(prompt("What is the capital of France?"))
    generator.start(other("Write a haiku about the sea."))  # the first prompt goes to the cache
    assert len(cache) == 1
    evaluated = generator.prompt_tokens_evaluated
    got = generator.start(follow).copy()
    assert cache.hits == 1
    assert generator.prompt_tokens_evaluated - evaluated == len(follow) - cache.tokens_restored
    assert np.array_equal(got, expected)
    assert list(llm.input_ids[: llm.n_tokens]) == follow
