"""Tensors whose shape changes on every call, with and without ``reduce_retracing``."""

import tensorflow as tf


@tf.function  # marker: plain-def
def total(x):
    return tf.reduce_sum(x)


@tf.function(reduce_retracing=True)  # marker: relaxed-def
def relaxed_total(x):
    return tf.reduce_sum(x)


for n in range(1, 11):  # marker: loop
    total(tf.ones([n]))  # marker: plain-call
    relaxed_total(tf.ones([n]))  # marker: relaxed-call
