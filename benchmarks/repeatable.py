"""Repeatable greedy answers on llama.cpp: the same request twice gives the same answer.

Run from the repository root (``make qwen`` first for Qwen)::

    python benchmarks/repeatable.py --model qwen --items 20
    python benchmarks/repeatable.py --model smollm2 --items 10

Work: ``--items`` BFCL questions (``simple_python`` and ``multiple`` alternating), each prompt the
model's chat template with the question's functions as tools, greedy, ``--max-tokens`` new tokens,
one llama.cpp context with ``--threads`` threads. Prints:

* logits: per prompt, the largest change of a logit, and whether the best token changes, when the
  prompt's last token is evaluated alone after a cached prefix rather than in the batch of a fresh
  evaluation (what any prefix cache does);
* answers: per question, a fresh context's answer against the same request sent again right after
  it and after another question, unconstrained and with a tool call required, through
  llama-cpp-python's own prefix cache (``Llama.generate``) and through tooldec's
  (:data:`tooldec.backends.llamacpp.PROMPT_CHUNK`);
* prompt speed: prompt tokens per second evaluated in chunks of ``PROMPT_CHUNK`` against one
  llama.cpp call (batches of its ``n_batch``), on fresh contexts, the median over prompts.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_ROOT / "src"), str(_ROOT)]  # tooldec from this checkout, and benchmarks.paper

from benchmarks.paper.datasets import data_dir  # noqa: E402
from benchmarks.serve_vs_run import requests  # noqa: E402


def questions(data: Path, count: int) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """``count`` BFCL questions as ``serve_vs_run`` asks them: (messages, OpenAI tools)."""
    return [(body["messages"], body["tools"]) for _, body in requests(data, count, max_tokens=1)]


def own_cache_answer(llm: Any, ids: list[int], max_tokens: int, eos: set[int]) -> list[int]:
    """Greedy tokens through llama-cpp-python's own prefix cache (``reset=False``)."""
    out: list[int] = []
    for token in llm.generate(ids, temp=0.0, top_k=1, reset=False):
        out.append(int(token))
        if len(out) == max_tokens or token in eos:
            break
    return out


def last_logits(llm: Any, width: int) -> np.ndarray:
    """A copy of the logits after the last token llama.cpp evaluated."""
    import llama_cpp

    return np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(width,)).copy()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen", help="qwen, smollm2, or a .gguf file")
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data", type=Path, default=None)
    args = parser.parse_args(argv)

    from tqdm import tqdm

    from tooldec import Grammar, ToolSet
    from tooldec.backends.llamacpp import PROMPT_CHUNK, LlamaCppGenerator, load_llama
    from tooldec.dialects import dialect_for
    from tooldec.models import qwen_coder_gguf_path, smollm2_gguf_path

    model = {"qwen": qwen_coder_gguf_path, "smollm2": smollm2_gguf_path}.get(args.model, lambda: Path(args.model))()
    llm, tokenizer = load_llama(model, threads=args.threads)
    generator = LlamaCppGenerator(llm, tokenizer, mask_worker=False)
    dialect = dialect_for(model)
    eos = set(generator.eos_ids)
    work = questions(data_dir(args.data), args.items)
    prompts = [list(tokenizer.encode(tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True,
                                                                   tokenize=False), add_special_tokens=False))
               for messages, tools in work]
    grammars = [Grammar(ToolSet(tools), generator.vocab, dialect) for _, tools in work]
    print(f"{model.name}, {args.threads} threads, {len(work)} BFCL questions, prompts "
          f"{min(map(len, prompts))}-{max(map(len, prompts))} tokens, n_batch {llm.n_batch}, chunk {PROMPT_CHUNK}")

    moved, flipped = [], 0
    for ids in tqdm(prompts, desc="logits", leave=False):
        llm.reset()
        llm.eval(ids)
        fresh = last_logits(llm, generator.width)
        llm.n_tokens = len(ids) - 1
        llm.eval(ids[-1:])
        alone = last_logits(llm, generator.width)
        moved.append(float(np.abs(fresh - alone).max()))
        flipped += int(np.argmax(fresh) != np.argmax(alone))
    print(f"logits: last token alone after a cached prefix: largest change median {statistics.median(moved):.3f}, "
          f"max {max(moved):.3f}; best token changed in {flipped}/{len(prompts)} prompts")

    same = {"llama-cpp-python cache, unconstrained": [0, 0], "tooldec cache, unconstrained": [0, 0],
            "tooldec cache, call required": [0, 0]}
    for i, ids in enumerate(tqdm(prompts, desc="answers", leave=False)):
        other = prompts[(i + 1) % len(prompts)]
        llm.reset()
        first = own_cache_answer(llm, ids, args.max_tokens, eos)
        again = own_cache_answer(llm, ids, args.max_tokens, eos)
        own_cache_answer(llm, other, 4, eos)
        after = own_cache_answer(llm, ids, args.max_tokens, eos)
        same["llama-cpp-python cache, unconstrained"][0] += int(again == first)
        same["llama-cpp-python cache, unconstrained"][1] += int(after == first)
        for label, grammar in (("tooldec cache, unconstrained", None), ("tooldec cache, call required", grammars[i])):
            def answer(prompt: list[int], grammar: Any = grammar) -> list[int]:
                choice = "required" if grammar is not None else "auto"
                return generator.generate(prompt, max_new_tokens=args.max_tokens, grammar=grammar,
                                          tool_choice=choice).ids
            llm.reset()
            first = answer(ids)
            again = answer(ids)
            generator.generate(other, max_new_tokens=4)
            after = answer(ids)
            same[label][0] += int(again == first)
            same[label][1] += int(after == first)
    for label, (again, after) in same.items():
        print(f"answers, {label}: same as a fresh context's {again}/{len(prompts)} sent again at once, "
              f"{after}/{len(prompts)} after another question")

    chunked, whole = [], []
    for ids in tqdm(prompts, desc="prompt speed", leave=False):
        for rates, size in ((chunked, PROMPT_CHUNK), (whole, len(ids))):
            llm.reset()
            start = time.perf_counter()
            for at in range(0, len(ids), size):
                llm.eval(ids[at:at + size])
            rates.append(len(ids) / (time.perf_counter() - start))
    print(f"prompt speed: {statistics.median(chunked):.0f} tokens/s in chunks of {PROMPT_CHUNK}, "
          f"{statistics.median(whole):.0f} tokens/s in one call (median over {len(prompts)} prompts)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
