"""The issue's 100 MB NumPy array captured by a tf.function (each new input shape traces and
copies it into the graph again), and a small captured array that copies next to nothing."""

import tempfile
from pathlib import Path

import numpy as np
import tensorflow as tf

big = np.random.rand(25_000_000).astype(np.float32)
with tempfile.TemporaryDirectory() as directory:
    saved = Path(directory) / "small.npy"
    np.save(saved, np.ones(100, dtype=np.float32))
    small = np.load(saved)


@tf.function
def f(x):
    return tf.reduce_sum(big) + x  # marker: big-read


@tf.function
def g(x):
    return tf.reduce_sum(small) + x  # marker: small-read


for i in range(3):
    f(tf.zeros([i + 1]))
    g(tf.zeros([i + 1]))
