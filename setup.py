"""The compiled hot loops; everything else is in pyproject.toml.

* ``tooldec.decoding._trie_walk`` (src/tooldec/decoding/_trie_walk.c): the vocabulary's byte trie
  walked through a tool's DFA, the name walk, packed masks;
* ``tooldec.automata._dfa_expand`` (src/tooldec/automata/_dfa_expand.c): a DFA state's subset
  construction, and the DFA's states;
* ``tooldec.tools._value_key`` (src/tooldec/tools/_value_key.c): the tool cache keys;
* ``tooldec.tools._plain_form`` (src/tooldec/tools/_plain_form.c): a plain schema's normal form.

All are optional: where they cannot be built (no C compiler), the install goes on and tooldec runs
the same algorithms in Python, which give the same masks, states and bytes
(tests/decoding/test_trie_walk.py, tests/automata/test_dfa_expand.py, tests/tools/test_value_key.py,
tests/tools/test_schema_plain.py).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("tooldec.decoding._trie_walk", ["src/tooldec/decoding/_trie_walk.c"],
                  extra_compile_args=["-O2"], optional=True),
        Extension("tooldec.automata._dfa_expand", ["src/tooldec/automata/_dfa_expand.c"],
                  extra_compile_args=["-O2", "-Wall"], optional=True),
        Extension("tooldec.tools._value_key", ["src/tooldec/tools/_value_key.c"],
                  extra_compile_args=["-O2"], optional=True),
        Extension("tooldec.tools._plain_form", ["src/tooldec/tools/_plain_form.c"],
                  extra_compile_args=["-O2", "-Wall"], optional=True),
    ],
)
