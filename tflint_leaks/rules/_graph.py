"""What the rules share about TF1-style graph mode."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tflint_leaks.analysis.index import ModuleIndex
    from tflint_leaks.analysis.project import ProjectIndex
    from tflint_leaks.frameworks import Frameworks
    from tflint_leaks.rulekit.context import FileContext


def graph_mode(module: ModuleIndex, project: ProjectIndex, frameworks: Frameworks) -> bool:
    """Whether the file runs in graph mode: eager execution turned off
    (``tf.compat.v1.disable_eager_execution()``, ``disable_v2_behavior()``) in it or in a module
    it imports; or, when neither of them turns it on (``tf.enable_eager_execution()``), a
    project that runs TensorFlow 1 (``frameworks``), where graph mode is the default. TensorFlow
    calls build graph nodes instead of running, Keras runs one cached function per model, and
    tensors hold no memory between ``session.run`` calls: the registry's eager-only rules do not
    run there."""
    modules = (module, *project.dependencies(module))
    if any(found.graph_mode for found in modules):
        return True
    if any(found.eager_mode for found in modules):
        return False
    return frameworks.tensorflow_major == 1


def in_graph_mode(context: FileContext) -> bool:
    """:func:`graph_mode` for the file being checked."""
    return graph_mode(context.module_index, context.project, context.options.frameworks)
