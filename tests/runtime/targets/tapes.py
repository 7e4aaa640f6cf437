"""Persistent tapes kept across iterations, a tape opened and dropped in each step (the update
after its gradient runs with the tape released), and one tape whose ``with`` block spans the
whole loop."""

import tensorflow as tf

w = tf.Variable(tf.ones([64, 64]))
x = tf.ones([64, 64])
kept = []
for _ in range(12):  # marker: kept-loop
    with tf.GradientTape(persistent=True) as tape:  # marker: kept-tape
        loss = tf.reduce_sum(tf.nn.relu(tf.matmul(x, w)))
    tape.gradient(loss, w)
    kept.append(tape)  # marker: kept-append

for _ in range(12):  # marker: fresh-loop
    with tf.GradientTape() as tape:  # marker: fresh-tape
        loss = tf.reduce_sum(tf.nn.relu(tf.matmul(x, w)))
    grad = tape.gradient(loss, w)
    w.assign_sub(0.001 * grad)  # marker: fresh-work

batches = [x * float(step) for step in range(12)]
with tf.GradientTape() as tape:  # marker: span-tape
    total = 0.0
    for batch in batches:  # marker: span-loop
        total += tf.reduce_sum(tf.nn.relu(tf.matmul(batch, w)))
grads = tape.gradient(total, w)
