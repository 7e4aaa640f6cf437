from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis import keras
from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.context import FileContext
from tflint_leaks.rulekit.facts import EffectKind
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._calls import (
    effects_through_calls,
    every_iteration,
    relate_loop,
    report_through,
)
from tflint_leaks.rules._models import builds_models, trains


class DatasetRebuiltInLoop(Rule):
    """
    ## What it does
    Flags a `tf.data` pipeline whose source (`Dataset.from_tensor_slices`, `from_tensors`,
    `from_generator`, `range`, `zip`, `list_files`, `TFRecordDataset`, ...) is constructed on
    every iteration of a training loop: a loop that trains or runs one model each iteration
    (`fit`, `train_on_batch`, `predict`, `tape.gradient`, `apply_gradients`, a `tf.function`
    step) without building a new model.

    ## Why is this bad?
    Each construction creates new dataset ops (in-memory data is copied into a new constant),
    and the consumer (`fit`, an iterator, a traced step taking the dataset) builds a new
    iterator and often retraces for it. Memory and time grow with every epoch or step
    (tensorflow/tensorflow#35084, #37653).

    Not flagged: a pipeline built once before the loop, a loop that only assembles datasets
    (one per file, then `concatenate`/`sample_from_datasets`), a loop that builds a new model
    each iteration (cross-validation folds need their own data; see TFL401), also around
    loops of a known small trip count that build a few pipelines for each model (one per
    test-time augmentation of the fold's validation data), and loops of a
    known small trip count (at most `max-loop-iterations`, default 10), and a pipeline that
    holds none of the program's data and runs none of its code (`Dataset.range`, `list_files`,
    `TFRecordDataset` and the other file readers, a `Dataset.zip` of pipelines, each judged
    where it is made, with `batch`, `shuffle`, `take`, `prefetch`
    and the like, but no `map` or `filter`) that the code making it only iterates in a `for`
    loop: eagerly, such a pipeline copies nothing and traces nothing, and it is freed when the
    loop ends (TensorFlow 2.21: 800 of them made and iterated in turn, 0.2 MB in all). Nor
    such a pipeline over data the iteration itself computes (`from_tensor_slices(samples)`
    with `samples` new every iteration: each explained input's own perturbations): there is
    nothing to build once, and it is freed as well (TensorFlow 2.21: 1,200 pipelines over a new
    1000 x 10 tensor each, iterated in turn into a `tf.function`: no growth). Passed
    on (`model.evaluate(ds)`, a `tf.function`), returned or kept, it is flagged. A helper that
    builds the pipeline, called in the training loop, is flagged like the pipeline itself.

    ## Example
    ```python
    import tensorflow as tf

    for epoch in range(epochs):
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1024).batch(32)
        model.fit(ds, epochs=1)
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1024).batch(32)
    model.fit(ds, epochs=epochs)
    ```
    (`shuffle` reshuffles every epoch by default.)

    ## Options
    - `max-loop-iterations`

    ## Guard it
    `tf_budget.iterations` (the pytest plugin's `tf_budget` fixture
    ([docs/budget.md](https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/budget.md)))
    counts the epochs and samples between them: a pipeline rebuilt every epoch traces its `map`
    function again, and the test fails naming `traces of any tf.function`.
    ```python
    import tensorflow as tf

    w = tf.Variable(tf.ones([4, 1]))
    opt = tf.keras.optimizers.SGD(0.01)
    x = tf.random.uniform([64, 4])
    ds = tf.data.Dataset.from_tensor_slices(x).map(lambda row: row * 2.0).batch(16)


    @tf.function
    def train_step(batch):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.matmul(batch, w) ** 2)
        opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))


    def train(epochs):
        for _ in epochs:
            for batch in ds:
                train_step(batch)


    def test_epochs_reuse_one_pipeline(tf_budget):
        train(tf_budget.iterations(8, warmup=2))
    ```

    ## References
    - [tf.data performance guide](https://www.tensorflow.org/guide/data_performance)
    - [tensorflow/tensorflow#35084](https://github.com/tensorflow/tensorflow/issues/35084)
    - [tensorflow/tensorflow#37653](https://github.com/tensorflow/tensorflow/issues/37653)
    """

    VALID = (
        # A Zindi solution's folds (vecxoz/turtle-recall, set Z29 of stop 53): each fold
        # builds a new model (a library's constructor, compiled), then predicts its validation
        # data once per test-time augmentation, a slice of a list of five.
        Valid("""
        import tensorflow as tf
        from keras_cv_attention_models import beit

        AUGS = [None, "flip", "rot90", "rot180", "rot270"]


        def init_model():
            model = beit.BeitLargePatch16(num_classes=100)
            model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
            return model


        def dataset(files, aug=None):
            return tf.data.TFRecordDataset(files).map(parse).batch(64)


        for fold_id in range(args.initial_fold, args.final_fold):
            tf.keras.backend.clear_session()
            model = init_model()
            for aug in AUGS[: args.tta_number + 1]:
                val_ds = dataset(val_files[fold_id], aug)
                preds = model.predict(val_ds)
        """),
        # CycleGAN's epochs: the two cached pipelines are made once, their zip each epoch.
        Valid("""
        import tensorflow as tf

        @tf.function
        def train_step(image_x, image_y):
            return generator(image_x) - image_y

        horses = tf.data.Dataset.from_tensor_slices(x).map(preprocess).cache().batch(1)
        zebras = tf.data.Dataset.from_tensor_slices(y).map(preprocess).cache().batch(1)
        for epoch in range(40):
            for image_x, image_y in tf.data.Dataset.zip((horses, zebras)):
                train_step(image_x, image_y)
        """),
        # tf_geometric's demos: an evaluation pass over batches of indices, every 20th step.
        # The pipeline holds no data and runs no function of the program; iterated eagerly,
        # it is freed when the pass ends.
        Valid("""
        import tensorflow as tf


        def batches(graphs, batch_size, shuffle=False):
            dataset = tf.data.Dataset.range(len(graphs))
            if shuffle:
                dataset = dataset.shuffle(2000)
            dataset = dataset.batch(batch_size)
            for index in dataset:
                yield [graphs[i] for i in index]


        def evaluate(model, graphs):
            accuracy = tf.keras.metrics.Accuracy()
            for batch in batches(graphs, 256):
                accuracy.update_state(labels(batch), model(inputs(batch)))
            return accuracy.result().numpy()


        def train(model, optimizer, graphs, test_graphs):
            for step in range(2000):
                with tf.GradientTape() as tape:
                    loss = model(inputs(graphs[step]))
                variables = model.trainable_variables
                optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
                if step % 20 == 0:
                    print(evaluate(model, test_graphs))
        """),
        Valid("""
        import tensorflow as tf


        def train(model, x, y, steps):
            for step in range(steps):
                model.train_on_batch(x[step], y[step])
                for index in tf.data.Dataset.range(len(x)).batch(64):
                    print(index)
        """),
        # xplique's LIME: each explained input's own samples, only iterated.
        Valid("""
        import tensorflow as tf


        def explain(model, inputs, perturb):
            for x in inputs:
                samples = perturb(x)
                for batch in tf.data.Dataset.from_tensor_slices(samples).batch(64):
                    print(model.predict_on_batch(batch))
        """),
        Valid("""
        import tensorflow as tf

        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1024).batch(32)
        for epoch in range(10):
            model.fit(ds, epochs=1)
        """),
        Valid("""
        import tensorflow as tf

        shards = []
        for path in paths:
            shards.append(tf.data.TFRecordDataset(path))
        ds = tf.data.Dataset.sample_from_datasets(shards)
        """),
        Valid("""
        import tensorflow as tf

        for fold, (train_idx, val_idx) in enumerate(folds):
            tf.keras.backend.clear_session()
            model = tf.keras.models.load_model(f"fold-{fold}.keras")
            val = tf.data.Dataset.from_tensor_slices((x[val_idx], y[val_idx])).batch(32)
            model.evaluate(val)
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def step(batch):
            ds = tf.data.Dataset.from_tensors(batch)
            for x in ds:
                batch = batch + x
            return batch
        """),
        Valid("""
        import tensorflow as tf

        datasets = [tf.data.TextLineDataset(f) for f in files]
        """),
        Valid("""
        import numpy as np

        for epoch in range(10):
            order = np.random.permutation(len(x))
            model.fit(x[order], y[order], epochs=1)
        """),
        Valid(
            """
            import tensorflow as tf

            for epoch in range(3):
                ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1024).batch(32)
                model.fit(ds, epochs=1)
            """
        ),
    )
    INVALID = (
        # The same samples for every input: the pipeline can be built once.
        Invalid(
            """
            import tensorflow as tf


            def explain(model, inputs, samples):
                for x in inputs:
                    for batch in tf.data.Dataset.from_tensor_slices(samples).batch(64):
                        print(model.predict_on_batch(batch))
            """,
            6,
            22,
            6,
            65,
            "this `tf.data` pipeline is rebuilt every iteration of a training loop; build it "
            "once before the loop",
        ),
        # The same index pipeline mapped over a function of the program: a new pipeline
        # traces it anew.
        Invalid(
            """
            import tensorflow as tf


            def train(model, x, y, steps):
                for step in range(steps):
                    model.train_on_batch(x[step], y[step])
                    for batch in tf.data.Dataset.range(len(x)).map(load).batch(64):
                        print(batch)
            """,
            7,
            22,
            7,
            51,
            "this `tf.data` pipeline is rebuilt every iteration of a training loop; build it "
            "once before the loop",
        ),
        # Handed to Keras, it makes Keras build its data functions again.
        Invalid(
            """
            import tensorflow as tf


            def train(model, x, y, steps):
                for step in range(steps):
                    model.train_on_batch(x[step], y[step])
                    indices = tf.data.Dataset.range(len(x)).batch(64)
                    model.evaluate(indices.map(lambda i: (tf.gather(x, i), tf.gather(y, i))))
            """,
            7,
            19,
            7,
            48,
            "this `tf.data` pipeline is rebuilt every iteration of a training loop; build it "
            "once before the loop",
        ),
        # TensorFlow Datasets reads the split into a new pipeline each epoch.
        Invalid(
            """
            import tensorflow as tf
            import tensorflow_datasets as tfds


            @tf.function
            def train_step(x, y):
                return x


            for epoch in range(100):
                ds = tfds.load("mnist", split="train", as_supervised=True)
                for x, y in ds.batch(32).take(1000):
                    train_step(x, y)
            """,
            11,
            10,
            11,
            63,
            "this `tf.data` pipeline is rebuilt every iteration (100 in all) of a training "
            "loop; build it once before the loop",
        ),
        # A periodic evaluation: the message says how often, and how many pipelines in all.
        Invalid(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])


            def evaluate():
                dataset = tf.data.Dataset.from_tensor_slices(x_test).batch(32)
                return model.evaluate(dataset)


            for step in range(20000):
                model.train_on_batch(x[step], y[step])
                if step % 20 == 0:
                    evaluate()
            """,
            7,
            15,
            7,
            57,
            "`evaluate` builds a new `tf.data` pipeline and is called every 20th iteration (1000 "
            "in all) of a training loop; build the pipeline once before the loop",
        ),
        Invalid(
            """
            import tensorflow as tf

            for epoch in range(epochs):
                ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1024).batch(32)
                model.fit(ds, epochs=1)
            """,
            4,
            10,
            4,
            52,
            "this `tf.data` pipeline is rebuilt every iteration of a training loop; build it once "
            "before the loop",
        ),
        Invalid(
            """
            import tensorflow as tf
            from tensorflow.data import Dataset

            def train(model, optimizer, features, labels, steps):
                for step in range(steps):
                    for xb, yb in Dataset.from_tensors((features, labels)):
                        with tf.GradientTape() as tape:
                            loss = model(xb)
                        grads = tape.gradient(loss, model.trainable_variables)
                        optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
            6,
            23,
            6,
            63,
            "this `tf.data` pipeline is rebuilt every iteration of a training loop; build it once "
            "before the loop",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x):
                return x

            while not done:
                ds = tf.data.Dataset.from_generator(gen, output_signature=spec)
                for batch in ds:
                    train_step(batch)
            """,
            8,
            10,
            8,
            68,
            "this `tf.data` pipeline is rebuilt every iteration of a training loop; build it once "
            "before the loop",
        ),
        Invalid(
            """
            import tensorflow as tf

            def evaluate_all(model, checkpoints):
                for checkpoint in checkpoints:
                    model.load_weights(checkpoint)
                    test = tf.data.TFRecordDataset(["test.tfrecord"]).map(parse).batch(64)
                    print(model.evaluate(test))
            """,
            6,
            16,
            6,
            58,
            "this `tf.data` pipeline is rebuilt every iteration of a training loop; build it once "
            "before the loop",
        ),
        Invalid(
            """
            import tensorflow as tf

            history = [model.fit(tf.data.Dataset.from_tensor_slices(x).batch(32)) for x in folds]
            """,
            3,
            22,
            3,
            59,
            "this `tf.data` pipeline is rebuilt every iteration of a training loop; build it once "
            "before the loop",
        ),
        Invalid(
            """
            import tensorflow as tf

            def make_dataset(x, y):
                return tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1024).batch(32)

            def train(model, epochs):
                for epoch in range(epochs):
                    model.fit(make_dataset(x, y), epochs=1)
            """,
            4,
            12,
            4,
            54,
            "`make_dataset` builds a new `tf.data` pipeline and is called every iteration of "
            "a training loop; build the pipeline once before the loop",
        ),
    )

    def _fresh(self, node: cst.Call, source: str | None) -> bool:
        """What the pipeline holds cannot be built once: none of the program's data (a data-free
        source), or data the iteration itself computes (its first argument changes every
        iteration: each explained input's own samples)."""
        if source in keras.DATA_FREE_SOURCES:
            return True
        data = next((arg.value for arg in node.args if arg.keyword is None), None)
        return data is not None and self.context.evaluator().value(data).varies

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if not context.loops or context.in_tf_function:
            return  # an entry point's pipeline is over the call's own data (a request's image)
        if context.bounded(context.options.max_loop_iterations):
            return
        source = context.resolve(node.func)
        direct = source in keras.DATASET_SOURCES
        if direct and context.only_iterated(node) and self._fresh(node, source):
            return
        built = [] if direct else effects_through_calls(context, node, EffectKind.DATASET)
        if not (direct or built):
            return
        calls = context.loop_calls(context.loops[-1])
        if not trains(context, calls) or _per_model(context):
            return
        if direct:
            report = self.report(
                node,
                f"this `tf.data` pipeline is rebuilt {every_iteration(context)} of a training "
                "loop; build it once before the loop",
            )
            relate_loop(report, context)
            return
        effect = built[0]
        helper = effect.chain[0].callee.rpartition(".")[2]
        message = (
            f"`{helper}` builds a new `tf.data` pipeline and is called {every_iteration(context)}"
            " of a training loop; build the pipeline once before the loop"
        )
        report_through(self, node, effect, message, RelatedRole.CALL, "the pipeline is built here")


def _per_model(context: FileContext) -> bool:
    """A loop around the current node builds a new model every iteration (a fold, a trial),
    and the loops inside it run the node a known small number of times: a few pipelines per
    model (the validation data of each fold, once per test-time augmentation), which the new
    model needs."""
    loops = context.loops
    limit = context.options.max_loop_iterations
    return any(
        builds_models(context, context.loop_calls(loop))
        and context.bounded(limit, loops[position + 1 :])
        for position, loop in enumerate(loops)
    )
