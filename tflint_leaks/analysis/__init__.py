"""Facts the rules share: TensorFlow name resolution, the project index, loop and value facts."""
