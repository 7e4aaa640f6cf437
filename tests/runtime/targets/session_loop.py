"""TF1 graph mode: an evaluation loop that builds its ops inside ``sess.run(...)``, and the same
loop running ops built once before it."""

import numpy as np
import tensorflow as tf

tf.compat.v1.disable_eager_execution()

x = tf.compat.v1.placeholder(tf.float32, [None, 4])
w = tf.Variable(tf.ones([4, 1]))
logits = tf.matmul(x, w)
predict_op = tf.round(tf.sigmoid(logits))
samples = [np.full((1, 4), i, dtype=np.float32) for i in range(12)]

with tf.compat.v1.Session() as sess:
    sess.run(tf.compat.v1.global_variables_initializer())
    built = []
    for sample in samples:  # marker: built-loop
        built.append(sess.run(tf.round(tf.sigmoid(logits)), {x: sample}))  # marker: built-op
    prebuilt = []
    for sample in samples:  # marker: prebuilt-loop
        prebuilt.append(sess.run(predict_op, {x: sample}))  # marker: prebuilt-run
