"""``HFGenerator.generate`` runs tooldec's own loop (a ``Stepper`` over the model's KV cache);
greedily it must write what transformers' ``model.generate`` writes with the logits processor,
token for token, on the real SmolLM2, constrained or not."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from tooldec.backends.hf import HFGenerator, ToolDecLogitsProcessor
from tooldec.decoding import Compiler
from tooldec.dialects import Hermes
from tooldec.runtime import tool_instructions
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def weather(city: str, unit: str = "celsius") -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"


TOOLS = ToolSet([add, weather])


def prompt(tokenizer: Any, question: str) -> list[int]:
    text = tokenizer.apply_chat_template(
        [{"role": "system", "content": tool_instructions(TOOLS, Hermes())}, {"role": "user", "content": question}],
        add_generation_prompt=True, tokenize=False)
    return list(tokenizer.encode(text, add_special_tokens=False))


def transformers_greedy(model: Any, ids: list[int], eos: list[int], max_new_tokens: int,
                        processors: list[Any]) -> list[int]:
    """``model.generate``'s greedy tokens, up to and including the first end."""
    with torch.inference_mode():
        output = model.generate(input_ids=torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                                max_new_tokens=max_new_tokens, do_sample=False, logits_processor=processors,
                                eos_token_id=eos, pad_token_id=eos[0])
    new: list[int] = output[0, len(ids):].tolist()
    end = next((i for i, token in enumerate(new) if token in eos), None)
    return new if end is None else new[: end + 1]


@pytest.mark.parametrize(("question", "choice"), [
    ("What is 1234 plus 5678?", "required"),
    ("Is it sunny in Oslo?", "auto"),
    ("Say hello.", None),
])
@pytest.mark.parametrize("check_first", [True, False])
def test_greedy_tokens_are_model_generate_s(smollm2_model: tuple[Any, Any, Vocabulary], question: str,
                                            choice: str | None, check_first: bool) -> None:
    model, tokenizer, vocab = smollm2_model
    generator = HFGenerator(model, tokenizer, vocab, mask_worker=False, check_first=check_first, jump_forward=False)
    ids = prompt(tokenizer, question)
    grammar = Compiler(vocab, Hermes()).compile(TOOLS) if choice is not None else None  # no mask cached
    ours = generator.generate(ids, max_new_tokens=40, grammar=grammar, tool_choice=choice or "auto")
    processors = [] if grammar is None else [ToolDecLogitsProcessor(grammar, tool_choice=choice or "auto",
                                                                   max_new_tokens=40)]
    assert ours.ids == transformers_greedy(model, ids, generator.eos_ids, 40, processors)
    assert ours.masked_steps == (len(ours.ids) if grammar is not None else 0)
    assert (ours.checked_steps > 0) == (check_first and grammar is not None)


@pytest.mark.parametrize("question", ["What is 1234 plus 5678?", "What is the weather like in Paris today?"])
def test_jump_forward_keeps_model_generate_s_tokens(smollm2_model: tuple[Any, Any, Vocabulary], question: str) -> None:
    """Drafts evaluated in one forward and confirmed by the logits after each: the same greedy
    tokens as ``model.generate``, in fewer forward passes."""
    model, tokenizer, vocab = smollm2_model
    generator = HFGenerator(model, tokenizer, vocab, mask_worker=False, jump_forward=True)
    ids = prompt(tokenizer, question)
    grammar = Compiler(vocab, Hermes()).compile(TOOLS)
    ours = generator.generate(ids, max_new_tokens=40, grammar=grammar, tool_choice="required")
    processors = [ToolDecLogitsProcessor(grammar, tool_choice="required", max_new_tokens=40)]
    assert ours.ids == transformers_greedy(model, ids, generator.eos_ids, 40, processors)
    assert ours.forced_steps > ours.jumps > 0 and ours.masked_steps == len(ours.ids)
