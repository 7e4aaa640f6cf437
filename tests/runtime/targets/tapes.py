"""Persistent tapes kept across iterations, and a tape opened and dropped in each step."""

import tensorflow as tf

w = tf.Variable(tf.ones([8, 8]))
x = tf.ones([8, 8])
kept = []
for _ in range(9):  # marker: kept-loop
    with tf.GradientTape(persistent=True) as tape:  # marker: kept-tape
        loss = tf.reduce_sum(tf.matmul(x, w))
    tape.gradient(loss, w)
    kept.append(tape)

for _ in range(9):  # marker: fresh-loop
    with tf.GradientTape() as tape:  # marker: fresh-tape
        loss = tf.reduce_sum(tf.matmul(x, w))
    tape.gradient(loss, w)
