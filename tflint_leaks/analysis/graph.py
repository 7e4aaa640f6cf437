"""TF1-style graph mode: which calls add nodes to the default graph, which run it, and which
modules are graph code.

With eager execution off (``tf.compat.v1.disable_eager_execution()``) or under TensorFlow 1.x,
every TensorFlow op, ``tf.Variable``, ``tf.train.Saver``, ``K.gradients`` or ``K.function``
call adds nodes to the default graph, and nothing ever removes them: built inside a loop that
runs the graph (``sess.run``) every iteration, the graph grows for as long as the loop runs.
One source of truth for both passes: the ``ast`` index keeps these calls in the bodies of graph
code (:func:`is_graph_code`), the whole-program facts turn them into effects, and the rules ask
the same predicates about call sites. Every name here is canonical (see
:func:`~tflint_leaks.analysis.names.canonical`).
"""

from __future__ import annotations

from tflint_leaks.analysis.names import is_keras, is_tensorflow
from tflint_leaks.analysis.units import FileUnits

_V1 = "tensorflow.compat.v1."

#: Calls into TensorFlow that turn eager execution off for the whole process.
GRAPH_MODE_SWITCHES = frozenset({"disable_eager_execution", "disable_v2_behavior"})
#: Calls that turn it on (what matters under TensorFlow 1, where graph mode is the default).
EAGER_MODE_SWITCHES = frozenset({"enable_eager_execution", "enable_v2_behavior"})
#: Calls that, given ``True``, make every ``tf.function`` run its Python function eagerly on
#: each call instead of tracing it (TensorFlow 2.21: three calls with three ints run the body
#: three times and trace nothing; ``False`` turns tracing back on).
FUNCTIONS_EAGERLY_SWITCHES = frozenset(
    {"run_functions_eagerly", "experimental_run_functions_eagerly"}
)

#: Identifiers only code that builds and runs TF1 graphs mentions (a cheap test on what a
#: module mentions; what a call does is decided by the canonical names below).
GRAPH_CODE_MARKERS = frozenset(
    {
        "Session",
        "InteractiveSession",
        "MonitoredSession",
        "MonitoredTrainingSession",
        "get_session",
        "get_default_session",
        "placeholder",
        *GRAPH_MODE_SWITCHES,
    }
)

#: Calls that make (or return) a ``tf.Session``.
SESSION_SOURCES = frozenset(
    {
        "tensorflow.Session",
        "tensorflow.InteractiveSession",
        "tensorflow.train.MonitoredSession",
        "tensorflow.train.MonitoredTrainingSession",
        "tensorflow.train.SingularMonitoredSession",
        "tensorflow.get_default_session",
        "keras.backend.get_session",
    }
)

#: Methods of a session that run the graph.
SESSION_RUN_METHODS = frozenset({"run", "partial_run"})
#: Methods of a tensor or an op that run the graph in the session they are given.
RUN_IN_SESSION_METHODS = frozenset({"eval", "run"})

#: Methods that add ops to the graph when called in graph code: variable updates, optimizer
#: steps (``v.assign(x)``, ``optimizer.minimize(loss)``) and a ``tf.data`` iterator's next
#: element (TensorFlow 2.21, graph mode: each ``iterator.get_next()`` adds an
#: ``IteratorGetNext`` op, 9 -> 10 -> 11 -> 12 over three ``sess.run(it.get_next())``).
GRAPH_METHODS = frozenset(
    {
        "get_next",
        "assign",
        "assign_add",
        "assign_sub",
        "scatter_update",
        "scatter_add",
        "scatter_sub",
        "minimize",
        "apply_gradients",
        "compute_gradients",
    }
)

#: Classes whose constructor adds nodes to the graph.
_GRAPH_CLASSES = frozenset({"tensorflow.Variable", "tensorflow.train.Saver"})
#: What runs a Python function eagerly on every call, even from inside a ``tf.function``.
EAGER_CALLBACKS = frozenset(
    {"tensorflow.numpy_function", "tensorflow.py_function", "tensorflow.compat.v1.py_func"}
)

#: A new graph (``tf.Graph()``), and the method that makes a graph the default in a block.
GRAPH = "tensorflow.Graph"
AS_DEFAULT = "as_default"
#: What gives a graph: a new one, the default one, and the attribute by which TensorFlow's
#: objects give theirs (``sess.graph``, ``tensor.graph``, ``op.graph``).
_GRAPH_SOURCES = frozenset({GRAPH, "tensorflow.get_default_graph"})
GRAPH_ATTRIBUTE = ".graph"


def enters_graph(callee: str | None, method: str | None, receiver: str | None) -> bool:
    """Whether a ``with`` item makes a graph the default for its block, so that TensorFlow
    calls there build graph nodes even where eager execution is on (TensorFlow 2.21:
    ``tf.executing_eagerly()`` is False inside ``with tf.compat.v1.Session():`` and inside
    ``with tf.Graph().as_default():``, True inside ``with sess.as_default():``, ``with
    writer.as_default():`` and after ``tf.compat.v1.InteractiveSession()``). The item is a
    call: ``callee`` is its canonical name (a session made there: entering it enters its
    graph), or, for ``x.as_default()``, ``method`` is ``as_default`` and ``receiver`` says what
    ``x`` is: the canonical name of the call that made it (``tensorflow.Graph``), or
    :data:`GRAPH_ATTRIBUTE` for ``sess.graph``."""
    if method is None:
        return callee is not None and is_session_source(callee)
    return method == AS_DEFAULT and (
        receiver == GRAPH_ATTRIBUTE or (receiver is not None and v1(receiver) in _GRAPH_SOURCES)
    )


#: TensorFlow modules whose functions add no nodes to the default graph.
_NO_OP_MODULES = (
    "tensorflow.app.",
    "tensorflow.autograph.",
    "tensorflow.compat.",
    "tensorflow.config.",
    # TensorBoard's plugins: protocol buffers and the files they write (the projector's
    # ``visualize_embeddings`` writes ``projector_config.pbtxt`` to the writer's logdir).
    "tensorflow.contrib.tensorboard.",
    "tensorflow.data.",
    "tensorflow.distribute.",
    "tensorflow.dtypes.",
    "tensorflow.errors.",
    "tensorflow.estimator.",
    "tensorflow.experimental.",
    "tensorflow.flags.",
    "tensorflow.gfile.",
    "tensorflow.__internal__.",
    "tensorflow.initializers.",
    "tensorflow.io.gfile.",
    "tensorflow.lite.",
    "tensorflow.logging.",
    "tensorflow.nest.",
    "tensorflow.profiler.",
    "tensorflow.python_io.",
    "tensorflow.sysconfig.",
    "tensorflow.test.",
    "tensorflow.version.",
)

_INTERNAL = "tensorflow.python."
_INTERNAL_OPS = "tensorflow.python.ops."

#: TensorFlow functions that read or configure the graph but add no node to it (or add one
#: once and return it afterwards: ``get_variable``, ``get_or_create_global_step``).
_NO_OP_FUNCTIONS = frozenset(
    {
        "add_to_collection",
        "add_to_collections",
        "all_variables",
        "as_dtype",
        "control_dependencies",
        # graph_util: GraphDef protocol buffers in, a GraphDef out (freezing reads the
        # variables with ``sess.run``); ``import_graph_def`` does add nodes and is not here.
        "convert_variables_to_constants",
        "device",
        "disable_eager_execution",
        "disable_v2_behavior",
        "enable_eager_execution",
        "enable_v2_behavior",
        "executing_eagerly",
        "extract_sub_graph",
        "function",
        "get_checkpoint_state",
        "get_collection",
        "get_collection_ref",
        "get_default_graph",
        "get_default_session",
        "get_global_step",
        "get_logger",
        "get_or_create_global_step",
        "get_variable",
        "get_variable_scope",
        "inside_function",
        "global_variables",
        "is_tensor",
        "latest_checkpoint",
        "list_variables",
        "load_variable",
        "local_variables",
        "make_ndarray",
        "make_tensor_proto",
        "model_variables",
        "moving_average_variables",
        "must_run_on_cpu",
        "name_scope",
        "remove_training_nodes",
        "reset_default_graph",
        "set_random_seed",
        "set_seed",
        "start_queue_runners",
        "tensor_shape_from_node_def_name",
        "trainable_variables",
        "variable_scope",
        "write_graph",
    }
)

#: What lists a graph's own variables or collections (the last names of ``tf.*`` and
#: ``tf.compat.v1.*``): as many as the graph holds, whatever the data.
VARIABLE_COLLECTIONS = frozenset(
    {
        "global_variables",
        "trainable_variables",
        "local_variables",
        "model_variables",
        "moving_average_variables",
        "all_variables",
        "get_collection",
        "get_collection_ref",
    }
)

#: What lists the machine's devices (``tf.config.list_physical_devices("GPU")``, TF1's
#: ``device_lib.list_local_devices()``): as many as the hardware has, whatever the data or
#: the time the program runs (TensorFlow 2.21 has each; both return a ``list``).
DEVICE_LISTS = frozenset(
    {
        "tensorflow.config.list_physical_devices",
        "tensorflow.config.list_logical_devices",
        "tensorflow.config.get_visible_devices",
        "tensorflow.config.experimental.list_physical_devices",
        "tensorflow.config.experimental.list_logical_devices",
        "tensorflow.config.experimental.get_visible_devices",
        "tensorflow.python.client.device_lib.list_local_devices",
    }
)

#: Initializer ops (unlike initializer objects, ``tf.zeros_initializer()``).
_INITIALIZER_OPS = frozenset(
    {
        "global_variables_initializer",
        "local_variables_initializer",
        "variables_initializer",
        "tables_initializer",
    }
)

#: Keras backend functions that read or set Keras' state and add no node to the graph.
_KERAS_NO_OP = frozenset(
    {
        "backend",
        "batch_get_value",
        "batch_set_value",
        "clear_session",
        "count_params",
        "dtype",
        "epsilon",
        "eval",
        "floatx",
        "get_graph",
        "get_session",
        "get_uid",
        "get_value",
        "image_data_format",
        "image_dim_ordering",
        "int_shape",
        "is_keras_tensor",
        "is_placeholder",
        "is_sparse",
        "is_tensor",
        "learning_phase",
        "manual_variable_initialization",
        "name_scope",
        "ndim",
        "reset_uids",
        "set_epsilon",
        "set_floatx",
        "set_image_data_format",
        "set_image_dim_ordering",
        "set_learning_phase",
        "set_session",
        "set_value",
    }
)


def v1(name: str) -> str:
    """``tensorflow.compat.v1.assign`` -> ``tensorflow.assign``: TF1 names compare as one."""
    return f"tensorflow.{name[len(_V1) :]}" if name.startswith(_V1) else name


def resets_graph(name: str) -> bool:
    """Whether calling the canonical ``name`` drops the default graph
    (``tf.compat.v1.reset_default_graph``): nothing built before it accumulates."""
    return v1(name) == "tensorflow.reset_default_graph"


def builds_graph(name: str) -> bool:
    """Whether calling the canonical ``name`` adds nodes to the default graph in graph mode:
    a TensorFlow op (``tf.assign``, ``tf.layers.dense``, ``tf.summary.scalar``), a
    ``tf.Variable`` or ``tf.train.Saver``, or a Keras backend op (``K.gradients``,
    ``K.function``, ``K.mean``)."""
    name = v1(name)
    last = name.rpartition(".")[2]
    if is_keras(name):
        return name.startswith("keras.backend.") and last[:1].islower() and last not in _KERAS_NO_OP
    if not is_tensorflow(name) or name.count(".") == 0:
        return False
    if any(part.startswith("__") for part in name.split(".")):
        return False  # ``tf.__version__.split(".")``: a Python string's method, no op
    if name in _GRAPH_CLASSES:
        return True
    if not last[:1].islower() or name.startswith(_NO_OP_MODULES) or last in _NO_OP_FUNCTIONS:
        return False
    if name.startswith(_INTERNAL) and not name.startswith(_INTERNAL_OPS):
        return False  # TensorFlow's own modules: only ``tensorflow.python.ops`` builds ops
    return not last.endswith("_initializer") or last in _INITIALIZER_OPS


def is_session_source(name: str) -> bool:
    """Whether calling the canonical ``name`` makes or returns a ``tf.Session``."""
    return v1(name) in SESSION_SOURCES


def is_graph_code(units: FileUnits) -> bool:
    """A module builds and runs TF1 graphs: it mentions turning eager execution off, sessions
    or placeholders."""
    return any(unit.names & GRAPH_CODE_MARKERS for unit in units.all)


#: TensorFlow 1 names that TensorFlow 2 has only under ``tf.compat.v1`` (checked against
#: TensorFlow 2.21: none of them is an attribute of ``tf``, ``tf.train`` or ``tf.summary``):
#: code that calls them as they are runs on TensorFlow 1, in graph mode unless it turns eager
#: execution on.
TF1_ONLY = frozenset(
    {
        "tensorflow.placeholder",
        "tensorflow.get_variable",
        "tensorflow.variable_scope",
        "tensorflow.global_variables_initializer",
        "tensorflow.local_variables_initializer",
        "tensorflow.assign",
        "tensorflow.assign_add",
        "tensorflow.random_normal",
        "tensorflow.random_uniform",
        "tensorflow.truncated_normal",
        "tensorflow.log",
        "tensorflow.to_float",
        "tensorflow.summary.merge_all",
        "tensorflow.summary.FileWriter",
        "tensorflow.Session",
        "tensorflow.InteractiveSession",
        "tensorflow.ConfigProto",
        "tensorflow.GPUOptions",
        "tensorflow.set_random_seed",
        "tensorflow.reset_default_graph",
        "tensorflow.get_default_graph",
        "tensorflow.global_variables",
        "tensorflow.trainable_variables",
        "tensorflow.train.Saver",
        "tensorflow.train.AdamOptimizer",
        "tensorflow.train.GradientDescentOptimizer",
        "tensorflow.train.RMSPropOptimizer",
        "tensorflow.train.MomentumOptimizer",
        "tensorflow.train.start_queue_runners",
        "tensorflow.saved_model.simple_save",
    }
)
_TF1_ONLY_MODULES = (
    "tensorflow.contrib.",
    "tensorflow.layers.",
    "tensorflow.nn.rnn_cell.",
    "tensorflow.saved_model.loader.",
)


def is_tf1_only(name: str) -> bool:
    """``name`` (canonical) is what only TensorFlow 1 has at that name."""
    return name in TF1_ONLY or name.startswith(_TF1_ONLY_MODULES)
