"""Hold your attention to the exact mechanism: softmax(q k^T / sqrt(d)) v, computed in float64, within rounding.

Run it: python docs/examples/attention_contract.py (or, on the command line from this folder,
python -m verify.attention_contract --implementation attention_contract:softmax_attention --dtype float32,
which runs the whole ladder of lengths up to n = 4096 in about half a minute).
"""

import os
import sys

import numpy as np


def softmax_attention(q, k, v):
    """Plain softmax attention f(q, k, v): q, k of shape (n, d), v of shape (n, dv), in the inputs' dtype."""
    logits = q @ k.T / np.sqrt(q.shape[1], dtype=q.dtype)
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (w / w.sum(axis=1, keepdims=True)) @ v


def warm_attention(q, k, v):
    """A subtly broken one: a normalised attention at temperature 2 (rows sum to 1, weights >= 0)."""
    logits = q @ k.T / (2 * np.sqrt(q.shape[1], dtype=q.dtype))
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (w / w.sum(axis=1, keepdims=True)) @ v


if __name__ == "__main__":
    from verify import attention_contract

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the check imports module:function
    short = {"lengths": (1, 64, 1025), "dims": (1, 16, 64), "dtype": "float32"}  # the default ladder reaches 4096
    good = attention_contract.run(implementation="attention_contract:softmax_attention", **short)
    print(good.final_line())        # PASS attention_contract [contract on ...: holds]: contract of ...
    assert good.passed
    bad = attention_contract.run(implementation="attention_contract:warm_attention", **short)
    print(bad.final_line())         # FAIL ... temperature: c = 0.5: the logits are multiplied by c ...
    assert not bad.passed and "temperature: c = 0.5" in bad.failures[0]
