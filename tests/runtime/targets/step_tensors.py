"""A training loop that keeps every step's gradients, and one that keeps only numbers."""

import tensorflow as tf

model = tf.keras.Sequential(
    [tf.keras.Input((16,)), tf.keras.layers.Dense(32), tf.keras.layers.Dense(1)]
)
optimizer = tf.keras.optimizers.SGD(0.01)
x, y = tf.ones([8, 16]), tf.zeros([8, 1])

grad_history = []
for _ in range(12):  # marker: kept-loop
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    grad_history.append(grads)  # marker: kept-append

norms = []
for _ in range(12):  # marker: norm-loop
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    norms.append(float(tf.linalg.global_norm(grads)))  # marker: norm-append
