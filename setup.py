"""The compiled extensions; everything else is in pyproject.toml.

* the trie walk (src/tooldec/decoding/_trie_walk.c); without it tooldec uses its pure-Python
  walk, which gives the same masks (tests/decoding/test_trie_walk.py);
* the tool cache keys (src/tooldec/tools/_value_key.c); without it tooldec asks ``marshal``,
  which gives the same bytes (tests/tools/test_value_key.py).

Both are optional: where they cannot be built (no C compiler), the install goes on.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("tooldec.decoding._trie_walk", ["src/tooldec/decoding/_trie_walk.c"],
                  extra_compile_args=["-O2"], optional=True),
        Extension("tooldec.tools._value_key", ["src/tooldec/tools/_value_key.c"],
                  extra_compile_args=["-O2"], optional=True),
    ],
)
