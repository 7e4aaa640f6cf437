"""Imported by the failure targets: proves the child set ``sys.path[0]`` to the script's folder."""

import tensorflow as tf


@tf.function  # marker: helper-def
def step(x, i):
    return x + tf.cast(i, tf.float32)


def retrace(count):
    """Call ``step`` with ``count`` distinct Python ints: ``count`` traces."""
    x = tf.ones([2])
    for i in range(count):  # marker: helper-loop
        step(x, i)  # marker: helper-call


@tf.function  # marker: more-def
def step_more(x, i):
    return x - tf.cast(i, tf.float32)


def retrace_more(count):
    """Like ``retrace``, with another function: only called after a failure, so never reached."""
    x = tf.ones([2])
    for i in range(count):  # marker: more-loop
        step_more(x, i)  # marker: more-call
