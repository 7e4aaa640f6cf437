"""An outer list appended inside a tf.function, and an unflagged function that retraces."""

import tensorflow as tf

history = []


@tf.function  # marker: append-def
def train_step(x):
    y = x * 2.0
    history.append(y)  # marker: append
    return y


@tf.function  # marker: unflagged-def
def scale(x, factor):
    return x * factor


x = tf.ones([2])
for i in range(10):  # marker: loop
    train_step(x)
    scale(x, float(i))
