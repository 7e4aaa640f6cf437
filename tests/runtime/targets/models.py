"""Keras models built in a loop with and without ``clear_session()``, and ``predict`` in a loop."""

import numpy as np
import tensorflow as tf


def build():
    return tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])


for _ in range(9):  # marker: leak-loop
    model = build()  # marker: leak-build

for _ in range(9):  # marker: clear-loop
    tf.keras.backend.clear_session()
    model = build()  # marker: clear-build

data = np.ones((2, 4), dtype="float32")
for _ in range(9):  # marker: predict-loop
    model.predict(data, verbose=0)  # marker: predict
