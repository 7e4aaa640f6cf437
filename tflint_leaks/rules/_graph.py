"""What the rules share about TF1-style graph mode."""

from __future__ import annotations

from tflint_leaks.rulekit.context import FileContext


def in_graph_mode(context: FileContext) -> bool:
    """Eager execution is turned off (``tf.compat.v1.disable_eager_execution()``) in this file
    or in a module it imports: TensorFlow calls build graph nodes instead of running, Keras runs
    one cached function per model, and tensors hold no memory between ``session.run`` calls.
    Rules about eager memory and eager Keras stay quiet there."""
    module = context.module_index
    return module.graph_mode or any(
        dependency.graph_mode for dependency in context.project.dependencies(module)
    )
