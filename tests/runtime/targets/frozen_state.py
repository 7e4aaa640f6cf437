"""Python state two tf.functions read, assigned again every iteration after they traced."""

import tensorflow as tf


class Scaler:
    def __init__(self):
        self.scale = 1.0

    @tf.function
    def __call__(self, x):
        return x * self.scale  # marker: frozen-read


offset = 0.0


@tf.function(reduce_retracing=False)
def shift(x):
    return x + offset  # marker: retraced-read


scaler = Scaler()
for i in range(10):  # marker: loop
    scaler.scale = float(i)
    scaler(tf.constant(1.0))
    offset = float(i)
    shift(tf.ones([i + 1]))
