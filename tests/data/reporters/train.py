import numpy as np
import tensorflow as tf


@tf.function
def train_step(x, step):
    return x * tf.cast(step, tf.float32)


@tf.function
def encode(tokens):
    return tokens


def fit(x, tokens, epochs):
    for step in range(epochs):
        train_step(x, step)
        encode(tokens[:step])
    for epoch in range(epochs):

        @tf.function
        def evaluate(y):
            return y

        evaluate(np.ones(3))
