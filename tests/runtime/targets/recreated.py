"""tf.function objects re-created per iteration, a Python object argument, a variable-creating
function, and a tf.function method on short-lived instances."""

import tensorflow as tf


class Config:
    def __init__(self, scale):
        self.scale = scale


@tf.function  # marker: object-def
def scaled(x, config):
    return x * config.scale


class Model(tf.Module):
    @tf.function  # marker: method-def
    def forward(self, x):
        return x + 1.0


class Counter:
    def __init__(self):
        self.v = None

    @tf.function  # marker: variable-def
    def __call__(self, x):
        if self.v is None:
            self.v = tf.Variable(0.0)
        self.v.assign_add(tf.reduce_sum(x))
        return self.v


counter = Counter()
x = tf.ones([3])
for _ in range(10):  # marker: recreate-loop

    @tf.function  # marker: recreate-def
    def double(x):
        return x * 2.0

    double(x)  # marker: recreate-call
    tf.function(lambda x: x + 1.0)(x)  # marker: lambda-call
    scaled(x, Config(2.0))  # marker: object-call
    Model().forward(x)  # marker: method-call
    counter(x)  # marker: variable-call
