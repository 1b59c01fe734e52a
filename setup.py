"""The compiled trie walk (src/tooldec/decoding/_trie_walk.c); everything else is in pyproject.toml.

The extension is optional: where it cannot be built (no C compiler), the install goes on and
tooldec uses its pure-Python walk, which gives the same masks (tests/decoding/test_trie_walk.py).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("tooldec.decoding._trie_walk", ["src/tooldec/decoding/_trie_walk.c"],
                  extra_compile_args=["-O2"], optional=True),
    ],
)
