"""Retracing judged per call site: a counter modulo 40 over thousands of calls (bounded), the
epochs x steps loop (bounded), a counter that never repeats (unbounded), and one tf.function
called from a site that takes two values and from a site that retraces."""

import tensorflow as tf


@tf.function  # marker: bump-def
def bump(x, i):
    return x + 1.0


x = tf.zeros([1])
for i in range(2000):  # marker: modulo-loop
    x = bump(x, i % 40)  # marker: modulo-call


@tf.function  # marker: step-def
def step(x, i):
    return x * 2.0


for _epoch in range(3):  # marker: epoch-loop
    for i in range(20):  # marker: steps-loop
        step(x, i)  # marker: steps-call


@tf.function  # marker: grow-def
def grow(x, n):
    return x + 2.0


for n in range(30):  # marker: grow-loop
    grow(x, n)  # marker: grow-call


@tf.function  # marker: shared-def
def shared(x, k):
    return x - 1.0


for i in range(12):  # marker: shared-loop
    shared(x, i % 2)  # marker: shared-parity
    shared(x, i)  # marker: shared-retracing
