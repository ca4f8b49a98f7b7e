"""Hold your attention implementation to a contract: each output row is a convex combination of the values.

Run it: python docs/examples/attention_contract.py (or, on the command line from this folder,
python -m verify.fma_contract --implementation attention_contract:softmax_attention --n 256).
"""

import os
import sys

import numpy as np


def softmax_attention(q, k, v):
    """Plain softmax attention f(q, k, v): NumPy arrays of shape (n, d) in and out."""
    logits = q @ k.T / np.sqrt(q.shape[1])
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (w / w.sum(axis=1, keepdims=True)) @ v


def unnormalised_attention(q, k, v):
    """A broken one: the softmax weights are never divided by their sum."""
    logits = q @ k.T / np.sqrt(q.shape[1])
    return np.exp(logits - logits.max()) @ v


if __name__ == "__main__":
    from verify import fma_contract

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the check imports module:function
    good = fma_contract.run(implementation="attention_contract:softmax_attention", n=256)
    print(good.final_line())         # PASS fma_contract [...]: attention_contract:softmax_attention is a ...
    assert good.passed
    bad = fma_contract.run(implementation="attention_contract:unnormalised_attention", n=256)
    print(bad.final_line())          # FAIL fma_contract [...]: ...: with V = 1 the output rows are not 1 ...
    assert not bad.passed
