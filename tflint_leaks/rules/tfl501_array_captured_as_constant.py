from __future__ import annotations

import libcst as cst

from tflint_leaks.rulekit.context import FileContext
from tflint_leaks.rulekit.facts import SMALL_ARRAY_ELEMENTS, Kind
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._traced import defining_frame, eager_callback, first_traced, is_builtin

#: Reading only these attributes of an array does not embed it.
_METADATA = frozenset({"shape", "dtype", "ndim", "size", "nbytes", "itemsize"})


class ArrayCapturedAsConstant(Rule):
    """
    ## What it does
    Flags a `tf.function` (or code nested in one) that reads a NumPy array, or a large Python
    container of numbers, from an enclosing function or the module: an array loaded with
    `np.load` & co., made by a dataset loader (`mnist.load_data()`, scikit-learn's `load_*`),
    generated with `np.random`, built with `np.zeros(...)` and friends (the message gives the
    shape when it is literal), or returned by a project function that makes one; and lists
    like `[0.0] * 1_000_000` or `[f(i) for i in range(100_000)]`. The finding is on the first
    read, once per function and name.

    ## Why is this bad?
    A NumPy array (or Python list) is not a tensor: when the function traces, TensorFlow
    converts it into a constant and stores a copy of the data inside the traced graph. Every
    trace (each new input shape or Python argument) stores another copy, and every graph stays
    alive with the function: a 100 MB array captured by a function traced six times holds six
    copies (measured with TensorFlow 2.21: the process grew by about 760 MB per trace). The
    graph also freezes the data: later changes to the array, or a new array bound to the name
    (shuffling the training set each epoch), are never seen by the function.

    Not flagged: scalars (`np.float32(0.5)`, `np.mean(x)`), arrays with a literal shape under
    65,536 elements (`np.zeros(10)`, `np.array([1, 2, 3])`), reads of `.shape`, `.dtype`,
    `.ndim`, `.size` or `len(...)` only, names also bound to a tensor or a `tf.Variable`, the
    function's own locals and parameters, and callbacks of `tf.numpy_function` /
    `tf.py_function` (they run eagerly). Nor an array of unknown size (`np.load(...)`, a
    project function's result) that a module-level `tf.function` with one signature (no
    parameters, or all of them in its `input_signature`) reads from the module, when the
    module binds it once, outside any loop and before the function, and no code of the module
    changes it in place afterwards: the function traces once and the graph holds one copy that
    lives as long as the array does, with nothing to grow or go stale. Arrays with a large
    literal shape and large containers stay flagged there (the copy doubles what they cost).
    Arrays read by a plain function the `tf.function` calls while tracing are not followed.

    ## Example
    ```python
    import numpy as np
    import tensorflow as tf

    embeddings = np.load("embeddings.npy")

    @tf.function
    def lookup(ids):
        return tf.gather(embeddings, ids)
    ```

    ## Use instead
    ```python
    import numpy as np
    import tensorflow as tf

    embeddings = tf.constant(np.load("embeddings.npy"))  # one tensor, captured by reference

    @tf.function
    def lookup(ids):
        return tf.gather(embeddings, ids)
    ```
    or a `tf.Variable` (to update it), a `tf.data` pipeline over the data, or pass the array
    in as an argument (converted to a tensor once, outside).

    ## Fix safety
    When the array is bound once in this file (`name = value`) and nothing in the module
    changes it in place (`x[i] = v`, `np.random.shuffle(x)` would fail on a tensor), the fix
    wraps that value in `tf.constant(...)`. It is unsafe: every other use of the name now gets
    a tensor instead of a NumPy array (NumPy calls convert it back at a cost), the data moves
    to the default device (GPU memory), and a `float64` array stays `float64` where the
    function may expect `float32`.

    ## Guard it
    A test of the traced graph fails when the array is captured again: the graph then holds the
    array as a constant.
    ```python
    import numpy as np
    import tensorflow as tf

    embeddings = tf.constant(np.random.rand(100_000, 8).astype("float32"))


    @tf.function
    def lookup(ids):
        return tf.gather(embeddings, ids)


    def test_the_graph_holds_no_copy_of_the_table():
        graph = lookup.get_concrete_function(tf.TensorSpec([None], tf.int32)).graph
        constants = [op.outputs[0] for op in graph.get_operations() if op.type == "Const"]
        assert sum(c.shape.num_elements() or 0 for c in constants) < 1_000
    ```

    ## References
    - [tf.function guide: depending on Python global and free variables](https://www.tensorflow.org/guide/function#depending_on_python_global_and_free_variables)
    - [Better performance with tf.function: the rules of tracing](https://www.tensorflow.org/guide/function#rules_of_tracing)
    - [`tf.constant`](https://www.tensorflow.org/api_docs/python/tf/constant)
    """

    VALID = (
        Valid("""
        import numpy as np
        import tensorflow as tf

        embeddings = tf.constant(np.load("embeddings.npy"))

        @tf.function
        def lookup(ids):
            return tf.gather(embeddings, ids)
        """),
        Valid("""
        import numpy as np
        import tensorflow as tf

        mask = np.zeros((16, 16))
        scale = np.float32(0.5)
        mean = np.mean(np.load("train.npy"))
        weights = np.array([0.2, 0.3, 0.5])

        @tf.function
        def step(x):
            return x * mask * scale - mean + weights[0]
        """),
        Valid("""
        import numpy as np
        import tensorflow as tf

        images = np.load("images.npy")

        @tf.function(input_signature=[tf.TensorSpec([None, 28, 28])])
        def normalize(batch):
            return tf.reshape(batch, [-1, images.shape[1] * images.shape[2]]) / len(images)
        """),
        Valid("""
        import numpy as np
        import tensorflow as tf

        table = np.load("table.npy")
        table = tf.Variable(table)

        @tf.function
        def lookup(ids):
            return tf.gather(table, ids)
        """),
        Valid("""
        import numpy as np
        import tensorflow as tf

        vocabulary = np.load("vocabulary.npy")

        @tf.function
        def decode(ids):
            def lookup(values):
                return vocabulary[values]
            return tf.numpy_function(lookup, [ids], tf.string)
        """),
        Valid("""
        import numpy as np
        import tensorflow as tf

        @tf.function
        def step(x):
            ones = np.ones((1000, 1000))
            return x + tf.reduce_sum(ones)

        def train(data):
            @tf.function
            def step(batch, data):
                return tf.reduce_sum(batch) + tf.reduce_sum(data)
            for batch in np.array_split(data, 10):
                step(batch, tf.constant(data))
        """),
        Valid("""
        import numpy as np
        import tensorflow as tf

        data = np.load("data.npy")

        def preprocess(x):
            return x / data.max()

        dataset = tf.data.Dataset.from_tensor_slices(data).map(lambda x: x * 2)
        """),
        Valid("""
        import numpy as np
        import tensorflow as tf

        def to_mask(indices, size):
            mask = np.zeros(size, dtype=bool)
            mask[indices] = True
            return mask

        labels = np.load("labels.npy")
        train_mask = to_mask(np.arange(140), labels.shape[0])

        @tf.function
        def train():
            with tf.GradientTape() as tape:
                loss = loss_fn(labels[train_mask], model(features, training=True)[train_mask])
            return tape.gradient(loss, model.trainable_variables)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
        def accuracy(ids):
            return tf.reduce_mean(tf.gather(tf.cast(train_mask, tf.float32), ids))

        for epoch in range(200):
            train()
        """),
        Valid(
            """
            import tensorflow as tf

            n = 100_000

            def make():
                n = 3
                table = [0.0] * n

                @tf.function
                def f(x):
                    return x + table[0]

                return f
            """
        ),
    )
    INVALID = (
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            big = np.random.rand(25_000_000).astype(np.float32)

            @tf.function
            def f(x):
                return tf.reduce_sum(big) + x
            """,
            8,
            26,
            8,
            29,
            "`big` is a NumPy array from `np.random.rand` with shape (25000000,) that `f` reads "
            "from an enclosing scope: each trace stores a copy in the graph as a constant; "
            "convert it once outside (`tf.constant`, `tf.Variable`) or pass it as an argument",
            fixed="""
            import numpy as np
            import tensorflow as tf

            big = tf.constant(np.random.rand(25_000_000).astype(np.float32))

            @tf.function
            def f(x):
                return tf.reduce_sum(big) + x
            """,
        ),
        Invalid(
            """
            import tensorflow as tf

            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
            x_train = x_train / 255.0

            @tf.function
            def train_step(indices):
                images = tf.gather(x_train, indices)
                return tf.reduce_mean(images)
            """,
            8,
            24,
            8,
            31,
            "`x_train` is a NumPy array from a dataset loader "
            "(`tf.keras.datasets.mnist.load_data`) that `train_step` reads from an enclosing "
            "scope: each trace stores a copy in the graph as a constant; convert it once "
            "outside (`tf.constant`, `tf.Variable`) or pass it as an argument",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            def prepare(frame, window):
                windows = np.empty((len(frame) - window, window, frame.shape[1]))
                for i in range(len(frame) - window):
                    windows[i] = frame[i : i + window]
                return windows.astype(np.float32)

            X_train = prepare(frame, 5)

            @tf.function
            def train_on_batch(ids):
                X_batch = tf.gather(X_train, ids)
                return model(X_batch)

            for ids in batches:
                train_on_batch(ids)
            """,
            14,
            25,
            14,
            32,
            "`X_train` is a NumPy array from `np.empty` in `prepare` that `train_on_batch` reads "
            "from an enclosing scope: each trace stores a copy in the graph as a constant; "
            "convert it once outside (`tf.constant`, `tf.Variable`) or pass it as an argument",
            fixed="""
            import numpy as np
            import tensorflow as tf

            def prepare(frame, window):
                windows = np.empty((len(frame) - window, window, frame.shape[1]))
                for i in range(len(frame) - window):
                    windows[i] = frame[i : i + window]
                return windows.astype(np.float32)

            X_train = tf.constant(prepare(frame, 5))

            @tf.function
            def train_on_batch(ids):
                X_batch = tf.gather(X_train, ids)
                return model(X_batch)

            for ids in batches:
                train_on_batch(ids)
            """,
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            def make_step(path):
                features = np.load(path)
                lookup = [0.0] * 100_000

                @tf.function
                def step(ids):
                    return tf.gather(features, ids)

                return step
            """,
            10,
            26,
            10,
            34,
            "`features` is a NumPy array from `np.load` that `step` reads from an enclosing "
            "scope: each trace stores a copy in the graph as a constant; convert it once "
            "outside (`tf.constant`, `tf.Variable`) or pass it as an argument",
            fixed="""
            import numpy as np
            import tensorflow as tf

            def make_step(path):
                features = tf.constant(np.load(path))
                lookup = [0.0] * 100_000

                @tf.function
                def step(ids):
                    return tf.gather(features, ids)

                return step
            """,
        ),
        Invalid(
            """
            import tensorflow as tf

            N_BUCKETS = 200_000
            boundaries = [i * 0.5 for i in range(N_BUCKETS)]

            @tf.function
            def bucketize(x):
                return tf.searchsorted(tf.constant(boundaries), x)
            """,
            8,
            40,
            8,
            50,
            "`boundaries` is a Python container of 200000 numbers that `bucketize` reads from "
            "an enclosing scope: each trace stores a copy in the graph as a constant; convert "
            "it once outside (`tf.constant`, `tf.Variable`) or pass it as an argument",
            fixed="""
            import tensorflow as tf

            N_BUCKETS = 200_000
            boundaries = tf.constant([i * 0.5 for i in range(N_BUCKETS)])

            @tf.function
            def bucketize(x):
                return tf.searchsorted(tf.constant(boundaries), x)
            """,
        ),
        Invalid(
            """
            import tensorflow as tf

            def make(count):
                table = [0.0] * count

                @tf.function
                def f(x):
                    return x + table[0]

                return f

            f = make(500_000)
            """,
            8,
            20,
            8,
            25,
            "`table` is a Python container of 500000 numbers that `f` reads from an enclosing "
            "scope: each trace stores a copy in the graph as a constant; convert it once "
            "outside (`tf.constant`, `tf.Variable`) or pass it as an argument",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            X_train = np.load("windows.npy")

            @tf.function
            def train_on_batch():
                return model(X_train[:64])

            for epoch in range(10):
                np.random.shuffle(X_train)
                train_on_batch()
            """,
            8,
            18,
            8,
            25,
            "`X_train` is a NumPy array from `np.load` that `train_on_batch` reads from an "
            "enclosing scope: each trace stores a copy in the graph as a constant; convert it "
            "once outside (`tf.constant`, `tf.Variable`) or pass it as an argument",
        ),
    )

    def setup(self) -> None:
        #: (traced function, name) pairs already reported.
        self._seen: set[tuple[cst.CSTNode, str]] = set()

    def visit_Name(self, node: cst.Name) -> None:
        context = self.context
        traced = first_traced(context)
        if traced is None or not _read_as_data(context, node):
            return
        name = node.value
        index = defining_frame(context, name)
        if index is not None and index >= traced:
            return  # bound in the traced function
        function = context.frames[traced].node
        if (function, name) in self._seen or eager_callback(context, traced):
            return
        if index is None and name not in context.module_index.imports:
            return  # a builtin, or a name nothing binds
        what = _captured(context, node, traced, index)
        if what is None:
            return
        self._seen.add((function, name))
        assert isinstance(function, cst.FunctionDef)
        report = self.report(
            node,
            f"`{name}` is {what} that `{function.name.value}` reads from an enclosing scope: "
            "each trace stores a copy in the graph as a constant; convert it once outside "
            "(`tf.constant`, `tf.Variable`) or pass it as an argument",
        )
        binding = _single_binding(context, name, index)
        alias = context.alias("tensorflow")
        if binding is not None and alias is not None and not context.changed_in_place(name):
            wrapped = cst.Call(
                cst.Attribute(cst.Name(alias), cst.Name("constant")), [cst.Arg(binding.value)]
            )
            report.with_fix(
                f"Wrap `{name}` in `{alias}.constant(...)` where it is bound",
                [(binding.value, wrapped)],
            )


def _read_as_data(context: FileContext, node: cst.Name) -> bool:
    """``node`` reads a value (not an attribute name, keyword, definition or import), and not
    only its metadata (``x.shape``, ``len(x)``)."""
    parent = context.parent
    if isinstance(parent, cst.Attribute):
        return parent.value is node and parent.attr.value not in _METADATA
    if isinstance(parent, cst.Arg):
        call = context.ancestors[-3] if len(context.ancestors) > 2 else None
        length = isinstance(call, cst.Call) and is_builtin(context, call.func, "len")
        return parent.keyword is not node and not length
    return not isinstance(
        parent,
        cst.FunctionDef | cst.ClassDef | cst.Param | cst.ImportAlias | cst.AsName | cst.NameItem,
    )


def _captured(context: FileContext, node: cst.Name, traced: int, index: int | None) -> str | None:
    """What the captured ``node`` is, for the message, when it is a NumPy array or a large
    Python container of numbers, copied into the graph more than once, frozen there, or known
    to be large; None otherwise."""
    name = node.value
    origin = context.array_origin(name)
    if origin is not None:
        if origin.shape is None and index == 0 and _embedded_once(context, node, traced):
            return None
        return f"a NumPy array from {origin.describe()}"
    count = _container_size(context, name)
    if count is not None:
        return f"a Python container of {count} numbers"
    return None


def _embedded_once(context: FileContext, node: cst.Name, traced: int) -> bool:
    """The module global ``node`` names is copied into the graph once and stays what it was:
    the traced function is the module's own ``tf.function`` with one signature (no parameters,
    or all of them in its ``input_signature``), so it traces once; the module binds the name
    outside any loop, before defining the function, and nothing binds it again or changes the
    array in place. One copy, alive as long as the array itself: nothing grows and nothing
    goes stale."""
    frames = context.frames
    facts = frames[traced].facts
    function = frames[traced].node
    if traced != 1 or facts is None or facts.tf_function is None:
        return False
    assert isinstance(function, cst.FunctionDef)
    params = function.params
    if not isinstance(params.star_arg, cst.MaybeSentinel) or params.star_kwarg is not None:
        return False
    count = len(params.posonly_params) + len(params.params) + len(params.kwonly_params)
    if count and not facts.tf_function.covers(count - 1):
        return False
    writes = context.writes(node)
    before = all(
        not w.function and w.loop is None and w.span.end_line < facts.first_line for w in writes
    )
    return bool(writes) and before and not context.changed_in_place(node.value, facts.first_line)


def _container_size(context: FileContext, name: str) -> int | None:
    """The number of numbers a large Python container bound to ``name`` may hold (``[0.0] *
    n``, a comprehension over ``range(n)``, ``list(range(n))``), where it is bound."""
    value = context.type_of(name)
    lengths = value.lengths
    if value.kind is not Kind.CONTAINER or not lengths:
        return None
    numbers = all(
        each.element is not None and each.element.kind in {Kind.NUMBER, Kind.BOOL}
        for each in value.informative
    )
    count = max(lengths)
    return count if numbers and count >= SMALL_ARRAY_ELEMENTS else None


def _single_binding(context: FileContext, name: str, index: int | None) -> cst.Assign | None:
    """The one ``name = value`` statement that binds the name in this file, if that is all."""
    if index is None:
        return None
    assignments = context.scope_facts(context.frames[index]).assignments.get(name, ())
    if len(assignments) != 1:
        return None
    node = assignments[0].node
    if isinstance(node, cst.Assign) and len(node.targets) == 1:
        target = node.targets[0].target
        if isinstance(target, cst.Name) and target.value == name:
            return node
    return None
