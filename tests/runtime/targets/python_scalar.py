"""A loop counter passed to a tf.function as a Python int (retraces), then as a tensor (does not).

``never_called`` holds the same retracing call in code that never runs.
"""

import tensorflow as tf


@tf.function  # marker: step-def
def step(x, i):
    return x * 2.0 + tf.cast(i, tf.float32)


@tf.function  # marker: step-tensor-def
def step_tensor(x, i):
    return x * 2.0 + tf.cast(i, tf.float32)


def never_called(x):
    for i in range(3):  # marker: dead-loop
        step(x, i)  # marker: dead-call


x = tf.ones([4])
for i in range(10):  # marker: int-loop
    step(x, i)  # marker: int-call

for i in range(10):  # marker: tensor-loop
    step_tensor(x, tf.constant(i))  # marker: tensor-call
