import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noetic.llm.tokens import count_tokens


def test_counts_are_real_tokens_not_a_character_ratio():
    assert count_tokens("") == 0
    assert count_tokens("hello") == 1
    words = "calibration " * 50
    assert count_tokens(words) < len(words) / 4  # a repeated word is few tokens
    gibberish = "x7$Qz!9@" * 25
    assert count_tokens(gibberish) > len(gibberish) / 4  # noise is many


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200), st.text(max_size=200))
def test_counts_are_roughly_additive(a, b):
    joined = count_tokens(a + " " + b)
    assert joined <= count_tokens(a) + count_tokens(b) + 2
    assert count_tokens(a) >= 0


@pytest.mark.subprocess
def test_loading_needs_no_network():
    code = (
        "import socket\n"
        "def refuse(*a, **k): raise OSError('network used')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "from noetic.llm.tokens import count_tokens\n"
        "print(count_tokens('offline tokenizer check'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) > 0
