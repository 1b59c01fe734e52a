"""The public surface is deliberate: this pins it, and importing tooldec must not pull torch."""

from __future__ import annotations

import subprocess
import sys

import tooldec


def test_all_is_the_sorted_public_api() -> None:
    assert tooldec.__all__ == sorted(tooldec.__all__)
    assert set(tooldec.__all__) == {
        "BudgetError", "Compiler", "Dialect", "DuplicateToolError", "Grammar", "InvalidSchemaError", "InvalidToolNameError", "Machine", "Mode",
        "TokenizerError", "Tool", "ToolCall", "ToolDecError", "ToolNotFoundError", "ToolRegistrationError", "ToolSet",
        "UnsupportedSchemaError", "Vocabulary", "load_vocabulary",
    }  # fmt: skip
    for name in tooldec.__all__:
        assert getattr(tooldec, name) is not None


def test_import_does_not_load_torch_or_transformers() -> None:
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'transformers'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import tooldec, tooldec.tools, tooldec.tokens, tooldec.decoding, tooldec.dialects, tooldec.runtime, tooldec.cli\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_a_machine_is_ten_methods_and_one_advanced_namespace() -> None:
    """What a loop that asks for a mask every step calls; the rest a sampler loop reads is
    ``machine.advanced``."""
    from tooldec.decoding import Advanced
    from tooldec.dialects import Hermes

    vocab = tooldec.Vocabulary.from_tokens([bytes([b]) for b in range(256)])
    tools = tooldec.ToolSet([tooldec.Tool.from_dict({"name": "ping", "parameters": {"type": "object", "properties": {}}})])
    machine = tooldec.Machine(tooldec.Grammar(tools, vocab, Hermes()))
    assert {name for name in dir(machine) if not name.startswith("_")} == {
        "fill_bitmask", "allowed_token_ids", "advance", "accept_string", "rollback", "fork", "reset", "is_done",
        "min_tokens", "check_budget", "advanced"}
    twin = machine.fork()
    assert isinstance(twin.advanced, Advanced) and twin.accept_string("hi")
    assert (twin.advanced.text, machine.advanced.text) == (b"hi", b"")  # a fork's namespace reads the fork
