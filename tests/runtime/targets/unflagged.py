"""A tf.function the static pass cannot see being called (through a table of functions), with a
Python float that changes on every call: only the run finds it (TFL900)."""

import tensorflow as tf


@tf.function  # marker: hidden-def
def scale(x, factor):
    return x * factor


OPS = {"scale": scale}
x = tf.ones([2])
for step in range(10):  # marker: loop
    OPS["scale"](x, float(step))
