"""The issue's example: a persistent tape per call of `step` (TFL201), kept alive through the
optimizer step; the same step releasing its tape first; and a gradient taken inside a
persistent tape's block (TFL202) beside the same gradient taken after the block."""

import tensorflow as tf

w = tf.Variable(tf.ones((64, 64)))
opt = tf.keras.optimizers.SGD(0.01)


def step(x):
    with tf.GradientTape(persistent=True) as tape:  # marker: kept-tape
        y = tf.reduce_sum(tf.matmul(x, w) ** 2)
    g = tape.gradient(y, [w])
    opt.apply_gradients(zip(g, [w], strict=True))  # marker: kept-work
    return y


x = tf.ones((64, 64))
for _ in range(200):
    step(x)


def released_step(x):
    with tf.GradientTape(persistent=True) as tape:  # marker: released-tape
        y = tf.reduce_sum(tf.matmul(x, w) ** 2)
    g = tape.gradient(y, [w])
    del tape  # marker: released-del
    opt.apply_gradients(zip(g, [w], strict=True))  # marker: released-work
    return y


def recorded_step(x):
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(tf.matmul(x, w) ** 2)
        g = tape.gradient(y, [w])  # marker: inside-gradient
    del tape
    opt.apply_gradients(zip(g, [w], strict=True))
    return y


def outside_step(x):
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(tf.matmul(x, w) ** 2)
    g = tape.gradient(y, [w])  # marker: outside-gradient
    del tape
    opt.apply_gradients(zip(g, [w], strict=True))
    return y


for _ in range(20):
    released_step(x)
    recorded_step(x)
    outside_step(x)
