from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis import keras
from tflint_leaks.analysis.graph import AS_DEFAULT, GRAPH, enters_graph
from tflint_leaks.analysis.loops import LoopNode
from tflint_leaks.analysis.nodes import descendants, dotted
from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.context import FileContext
from tflint_leaks.rulekit.facts import Effect, EffectKind, Kind
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._calls import every_iteration, relate_loop, report_through, source_of
from tflint_leaks.rules._models import method_call

#: cleverhans's ``ordered_union``: two collections joined without repeats, and a session.
_ORDERED_UNION = """\
import tensorflow as tf

def ordered_union(l1, l2):
    out = []
    for e in l1 + l2:
        if e not in out:
            out.append(e)
    return out

sess = tf.compat.v1.Session()
"""

#: What drops the default graph (a call, or project code it runs), so nothing built before
#: it accumulates.
_RESETS = frozenset({EffectKind.RESET_GRAPH, EffectKind.CLEAR_SESSION})


#: An existing variable fetched by its name, the scope that names it, and the ops that assign it.
_GET_VARIABLE = frozenset({"tensorflow.get_variable", "tensorflow.compat.v1.get_variable"})
_VARIABLE_SCOPE = frozenset({"tensorflow.variable_scope", "tensorflow.compat.v1.variable_scope"})
_ASSIGN_METHODS = frozenset({"assign", "assign_add", "assign_sub"})
_ASSIGNS = frozenset(
    f"tensorflow.{prefix}{name}"
    for prefix in ("", "compat.v1.")
    for name in ("assign", "assign_add", "assign_sub")
)


class GraphGrowsInLoop(Rule):
    """
    ## What it does
    Flags graph-mode code that adds nodes to the default graph on every iteration of a loop that
    also runs the graph: a TensorFlow op (`tf.assign`, `tf.round`, `tf.compat.v1.layers.dense`,
    `tf.summary.scalar`), `v.assign(...)`, `optimizer.minimize(...)` or a `tf.data` iterator's
    `get_next()` (one `IteratorGetNext` op per call), a `tf.Variable`, a
    `tf.train.Saver`, or a Keras backend op (`K.gradients`, `K.function`), created in the loop
    or in a function the loop calls (up to four calls deep), while the same loop runs the graph
    every iteration: `sess.run(...)` on a `tf.Session`, `x.eval(sess)`, a function made by
    `K.function` (in the loop or in a function it calls), or, in a file that turns eager
    execution off, a Keras model's `fit`, `predict` or `train_on_batch`. Ops the loop builds
    itself give one finding per loop, on the first; when the op is in a function the loop
    calls, the finding is on the op when it is in the same file, else on the call in the loop.
    A function a framework calls many times (a Flask route every request, a Keras callback's
    `on_train_batch_end` every batch: the entry points of
    `tflint_leaks/analysis/entry_points.py`) is such a loop: a TensorFlow 1 service that
    builds its network and session per request grows its graph with every request.

    ## Why is this bad?
    In graph mode (TensorFlow 1.x, or `tf.compat.v1.disable_eager_execution()`), building an
    op does not run it: it adds nodes to the default graph, and nothing ever removes them. A
    loop that builds `tf.assign(target, source)` or `tf.round(tf.sigmoid(logits))` per step to
    `sess.run` it adds nodes on every step, so the graph, the memory and the time of every
    `session.run` grow for as long as the loop runs. The usual shapes are target-network
    updates built inside `learn()`, evaluation ops written inline in `sess.run(...)`, and
    Grad-CAM code calling `K.gradients` and `K.function` per image.

    Not flagged: ops built once before the loop and only run in it, graph-construction loops
    (over layers) that do not run the graph, loops of a known small trip count (at most
    `max-loop-iterations`, default 10), one assign per variable that a loop's items name
    (`var = tf.get_variable(param_name)` under `variable_scope(op_name, reuse=True)`, or
    `self.parameters[i]` of a list of variables picked by the loop's counter, or of a list
    of no known items, `model.trainable_vars[i]`: a
    pretrained-weights loader, as many ops as the graph has variables, unless a loop around
    them repeats that; so do the ops of a loop each iteration of which assigns the variable
    its target binds, `for W, b, out in layers: ... W.assign(...)`, a data-dependent
    initialization, or a fixed item of it, `for name, pars in layers.items(): ...
    pars[0].assign(...)`), ops built under a first-call guard (`if self.op is None:`, `if key not
    in cache:`; in a function the loop calls, also the `else` of an `if key in cache:` that
    fills the cache) or inside a `tf.function`, a new graph per iteration (`with
    tf.Graph().as_default():` inside the loop, or `tf.compat.v1.reset_default_graph()` /
    `clear_session()` every iteration, directly or in project code the loop calls), eager
    code (no session and eager execution on: ops run at once and keep nothing; in a project
    pinned to TensorFlow 2 that never turns eager execution off, any op built where no graph
    is the default, even in a loop that reaches a session further on: only `with
    tf.compat.v1.Session():` and `with graph.as_default():` make one the default, around the
    op, the loop, or a caller of the loop's function, not `with sess.as_default():` or a
    summary writer's; a file that builds a placeholder when imported, where no graph is the
    default, gets that far only with eager execution off), and calls
    that add no node (`tf.trainable_variables()`, `tf.get_variable` with reuse, a
    `tf.Summary()` protocol buffer). Limits: ops made by Python
    operators on tensors (`sess.run(a + b)`, `t[0]`) are not seen. A periodic guard around the
    op (`if step % 1000 == 0:`, or an early `if step % 1000: continue` before it) divides the
    count: the message says "every 1000th iteration", and a loop of known size whose guarded
    count falls to `max-loop-iterations` or fewer is not flagged (a guard whose `N` is not
    known counts as every iteration); a guard that holds on one iteration of the loop (`if
    epoch == 0:`, `if i == len(batches) - 1:` when the loop changes neither `batches` nor what
    it is compared with) runs the op once, and one on a few (`if step == 50 or step ==
    100:`) that many times (`if update % 10 == 0 or update == 1:`, a tenth of the loop's
    iterations and one more); so does a learning-rate schedule's milestone test (`if epoch in
    milestones:` when the loop does not change `milestones`; `if it == next_step:` when only
    its block changes `next_step`, each time to an item taken out of a list the loop never
    adds to: `next_step = steps.pop()`), once per milestone.

    ## Example
    ```python
    import tensorflow as tf

    sess = tf.compat.v1.Session()
    for sample in samples:
        prediction = sess.run(tf.round(tf.sigmoid(logits)), {x: sample})
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    sess = tf.compat.v1.Session()
    predict_op = tf.round(tf.sigmoid(logits))
    sess.graph.finalize()  # any op created after this raises
    for sample in samples:
        prediction = sess.run(predict_op, {x: sample})
    ```

    ## Options
    - `max-loop-iterations`

    ## Guard it
    `tf_budget.iterations` (the pytest plugin's `tf_budget` fixture
    ([docs/budget.md](https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/budget.md))) takes
    the samples and hands them to the prediction loop, sampling between runs: an op built per run
    fails the test, naming `nodes in the default graph` (`graph.finalize()` makes such a build
    raise, too).
    ```python
    import tensorflow as tf


    def predict_all(samples):
        graph = tf.Graph()
        with graph.as_default():
            x = tf.compat.v1.placeholder(tf.float32, [None])
            predict_op = tf.round(tf.sigmoid(x))
            with tf.compat.v1.Session(graph=graph) as sess:
                return [sess.run(predict_op, {x: sample}) for sample in samples]


    def test_prediction_adds_no_ops(tf_budget):
        predict_all(tf_budget.iterations([[0.5, -2.0]] * 12, warmup=2))
    ```

    ## References
    - [`tf.Graph.finalize`](https://www.tensorflow.org/api_docs/python/tf/Graph#finalize)
    - [Migrate TF1 code to TF2: sessions and graphs](https://www.tensorflow.org/guide/migrate/migrate_tf2)
    - [tensorflow/tensorflow#700: "you're adding more and more ops to a graph"](https://github.com/tensorflow/tensorflow/issues/700)
    - [tensorflow/tensorflow#7127: ops inside `sess.run(...)` and `finalize()`](https://github.com/tensorflow/tensorflow/issues/7127)
    """

    VALID = (
        # cleverhans's `model_eval`: the accuracy op is kept by the graph tensors it is built
        # from, the same on every call (a tensor is a dict key only in graph mode).
        Valid("""
        import tensorflow as tf

        _CACHE = {}


        def accuracy(sess, labels, logits, x_test, y_test):
            key = (labels, logits)
            if key in _CACHE:
                correct = _CACHE[key]
            else:
                correct = tf.equal(tf.argmax(labels, axis=-1), tf.argmax(logits, axis=-1))
                _CACHE[key] = correct
            return sess.run(correct, {labels: y_test})


        x = tf.compat.v1.placeholder(tf.float32, [None, 10])
        y = tf.compat.v1.placeholder(tf.float32, [None, 10])
        logits = tf.compat.v1.layers.dense(x, 10)
        with tf.compat.v1.Session() as sess:
            for epoch in range(100):
                accuracy(sess, y, logits, x_test, y_test)
        """),
        # The next-element op made once, before the loop, and run each step.
        Valid("""
        import tensorflow as tf

        dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)
        next_batch = dataset.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            for step in range(1000):
                x_batch, y_batch = sess.run(next_batch)
        """),
        # Edward's `evaluate`: one op per metric asked for, a name, a function or a list of
        # two here; a metric that is none of them raises, as its test expects.
        Valid("""
        import unittest

        import tensorflow as tf


        def evaluate(metrics, y):
            sess = tf.Session()
            if isinstance(metrics, str):
                metrics = [metrics]
            elif callable(metrics):
                metrics = [metrics]
            elif not isinstance(metrics, list):
                raise TypeError("metrics must be a string, a list or callable")
            for metric in metrics:
                if metric == "accuracy":
                    print(sess.run(tf.reduce_mean(y)))


        evaluate("accuracy", tf.constant([1.0]))
        evaluate(["accuracy", "loss"], tf.constant([1.0]))


        class EvaluateTest(unittest.TestCase):
            def test_custom_metric(self):
                def logcosh(y_true, y_pred):
                    return y_pred - y_true

                evaluate(logcosh, tf.constant([1.0]))
                self.assertRaises(TypeError, evaluate, tf.constant(1.0), tf.constant([1.0]))
        """),
        # An evaluation op built on the last batch only: the loop changes neither the counter's
        # target nor the list, so the guard holds once.
        Valid("""
        import tensorflow as tf

        sess = tf.compat.v1.Session()


        def train(batches, logits, x):
            for i in range(len(batches)):
                sess.run(logits, {x: batches[i]})
                if i == len(batches) - 1:
                    print(sess.run(tf.round(tf.sigmoid(logits)), {x: batches[i]}))
        """),
        # tf-faster-rcnn's learning-rate schedule (census): the assign is built when the
        # counter reaches the next milestone, and each milestone is taken out of a list the
        # loop never adds to, so it is built once per milestone.
        Valid("""
        import tensorflow as tf

        sess = tf.compat.v1.Session()


        def train_model(lr, train_op, stepsizes, max_iters, rate):
            iter = 1
            stepsizes.append(max_iters)
            stepsizes.reverse()
            next_stepsize = stepsizes.pop()
            while iter < max_iters + 1:
                if iter == next_stepsize + 1:
                    rate *= 0.1
                    sess.run(tf.compat.v1.assign(lr, rate))
                    next_stepsize = stepsizes.pop()
                sess.run(train_op)
                iter += 1
        """),
        # The same schedule as a container of milestones the loop does not change.
        Valid("""
        import tensorflow as tf

        sess = tf.compat.v1.Session()


        def train(lr, train_op, epochs, rate, milestones):
            for epoch in range(epochs):
                if epoch in milestones or epoch in (30, 60, 90):
                    rate *= 0.1
                    sess.run(tf.compat.v1.assign(lr, rate))
                sess.run(train_op)
        """),
        # deep-pmsm's weight-normalized layers (set Z28 of stop 53): a data-dependent
        # initialization, one set of ops per layer, each iteration assigning its variables.
        Valid("""
        import tensorflow as tf

        sess = tf.compat.v1.Session()


        def init_weights(layers, feed_dict):
            for W, b, out in layers:
                m, v = tf.nn.moments(out, [0])
                s = tf.sqrt(v + 1e-10)
                sess.run(tf.group(W.assign(W / s), b.assign((b - m) / s)), feed_dict)
        """),
        # nn-active-learning's `load_weights` (set Z31 of stop 54): one assign per item of each
        # layer's pair of variables, a weights loader.
        Valid("""
        import h5py
        import tensorflow as tf

        sess = tf.compat.v1.Session()


        class NN:
            def load_weights(self, path):
                f = h5py.File(path)
                for layer_name, pars in self.var_dict.items():
                    sess.run(pars[0].assign(f[layer_name]["Weight"][()]))
                    sess.run(pars[1].assign(f[layer_name]["Bias"][()]))
        """),
        # A-GEM's VGG loader (set Z31): the model's list of variables, of no known items, by
        # the loop's counter; the 5 runs around it repeat it 5 times.
        Valid("""
        import numpy as np
        import tensorflow as tf

        sess = tf.compat.v1.Session()


        def train(model, path, num_runs=5):
            for runid in range(num_runs):
                weights = np.load(path)
                keys = sorted(weights.keys())
                for i, key in enumerate(keys[:-2]):
                    sess.run(model.trainable_vars[i].assign(weights[key]))
        """),
        # The same service with a graph of its own per request: each request's graph is
        # dropped when it ends.
        Valid("""
        import tensorflow as tf
        from flask import Flask, request

        app = Flask(__name__)
        tf.compat.v1.disable_eager_execution()


        @app.route("/predict", methods=["POST"])
        def serve():
            with tf.Graph().as_default():
                x = tf.compat.v1.placeholder(tf.float32, shape=(None, 4))
                w = tf.compat.v1.Variable(tf.zeros([4, 2]))
                with tf.compat.v1.Session() as sess:
                    sess.run(tf.compat.v1.global_variables_initializer())
                    return str(sess.run(tf.matmul(x, w), {x: [request.json["image"]]}))
        """),
        # tf-keras's TensorBoard v1 callback: the summary ops run under
        # `tf.executing_eagerly()` only, where they build no graph (the graph branch writes a
        # protocol buffer).
        Valid("""
        import tensorflow as tf


        class TensorBoard(tf.keras.callbacks.Callback):
            def _write_custom_summaries(self, step, logs):
                if tf.executing_eagerly():
                    with self.writer.as_default(), tf.summary.record_if(True):
                        for name, value in logs.items():
                            tf.summary.scalar(name, value, step=step)
                else:
                    for name, value in logs.items():
                        summary = tf.compat.v1.Summary()
                        summary.value.add(tag=name, simple_value=value)
                        self.writer.add_summary(summary, step)

            def on_epoch_end(self, epoch, logs=None):
                tf.compat.v1.keras.backend.get_session().run(self.merged)
                self._write_custom_summaries(epoch, logs)


        tf.compat.v1.disable_eager_execution()
        """),
        # tensorflow/privacy's PATE student: each teacher's predictions are computed by a
        # helper that builds its ops, runs them and drops the graph before it returns.
        Valid("""
        import tensorflow as tf


        def softmax_preds(images, ckpt_path):
            data = tf.placeholder(tf.float32, shape=images.shape)
            logits = tf.layers.dense(data, 10)
            with tf.Session() as sess:
                tf.train.Saver().restore(sess, ckpt_path)
                preds = sess.run(tf.nn.softmax(logits), {data: images})
            tf.reset_default_graph()
            return preds


        for teacher_id in range(nb_teachers):
            result[teacher_id] = softmax_preds(student_data, paths[teacher_id])
        """),
        # A TF1 book's VGG weight loader: the loop's counter picks another variable of the
        # model's list each iteration, one assign per variable.
        Valid("""
        import numpy as np
        import tensorflow as tf



        class VGG:
            def __init__(self):
                self.parameters = []
                for size in (64, 128):
                    kernel = tf.Variable(tf.zeros([3, 3, size]))
                    biases = tf.Variable(tf.zeros([size]))
                    self.parameters += [kernel, biases]

            def load_weights(self, weight_file, sess):
                weights = np.load(weight_file)
                keys = sorted(weights.keys())
                for i, k in enumerate(keys):
                    sess.run(self.parameters[i].assign(weights[k]))


        if __name__ == "__main__":
            sess = tf.Session()
            vgg = VGG()
            vgg.load_weights("vgg16_weights.npz", sess)
        """),
        # SinGAN: at the first epoch of each of its 9 scales, one assign per variable of the
        # scale copies the previous scale's weights (a loop over the variables, by index): 9
        # copies in all.
        Valid("""
        import tensorflow as tf

        num_scale = 9
        variables = {}
        for i in range(num_scale):
            variables[str(i)] = [v for v in tf.compat.v1.trainable_variables() if str(i) in v.name]
        sess = tf.compat.v1.Session()
        for i in range(num_scale):
            for j in range(2000):
                if i != 0 and j == 0:
                    for k in range(len(variables[str(i)])):
                        sess.run(variables[str(i)][k].assign(variables[str(i - 1)][k]))
                sess.run(train_op)
        """),
        # cleverhans's mnist_blackbox: each of the substitute's augmentation rounds (6 by
        # default) builds its training ops; its test passes `**args` with `data_aug` 1: the
        # loop runs 6 times at most.
        Valid("""
        import tensorflow as tf

        DATA_AUG = 6

        def train_sub(sess, x, data_aug):
            for rho in range(data_aug):
                sess.run(tf.compat.v1.reduce_sum(x))

        def blackbox(sess, x, data_aug=DATA_AUG):
            train_sub(sess, x, data_aug)

        def test_blackbox():
            args = {"data_aug": 1, "x": 1.0}
            blackbox(tf.compat.v1.Session(), **args)
        """),
        # A helper that joins two collections of the graph's variables without repeats
        # (cleverhans's `ordered_union`): one assign per variable, once. What it returns to
        # this call is read from what this call passes, whatever other callers pass it.
        Valid(
            _ORDERED_UNION
            + "def layer_params(layers):\n"
            + "    out = []\n"
            + "    for layer in layers:\n"
            + "        out = ordered_union(out, layer.get_params())\n"
            + "    return out\n\n"
            + 'a = tf.compat.v1.trainable_variables("a")\n'
            + 'b = tf.compat.v1.trainable_variables("b")\n'
            + "for src, dst in zip(ordered_union(a, a), ordered_union(b, b)):\n"
            + "    sess.run(tf.compat.v1.assign(dst, src))\n"
        ),
        # The helper makes its own Saver only when it is not given one; the loop gives it the
        # Saver made once before (openai/maddpg's `U.save_state(..., saver=saver)`).
        Valid("""
        import tensorflow as tf


        def save_state(fname, saver=None):
            if saver is None:
                saver = tf.compat.v1.train.Saver()
            saver.save(tf.compat.v1.get_default_session(), fname)


        sess = tf.compat.v1.Session()
        saver = tf.compat.v1.train.Saver()
        for episode in range(100000):
            sess.run(train_op)
            if episode % 1000 == 0:
                save_state("ckpt", saver=saver)
        """),
        Valid("""
        import tensorflow as tf

        x = tf.compat.v1.placeholder(tf.float32, [None, 4])
        logits = tf.compat.v1.layers.dense(x, 1)
        predict_op = tf.round(tf.sigmoid(logits))
        sess = tf.compat.v1.Session()
        sess.graph.finalize()
        for sample in samples:
            sess.run(predict_op, {x: sample})
        """),
        Valid("""
        import tensorflow as tf

        x = tf.compat.v1.placeholder(tf.float32, [None, 4])
        hidden = x
        for units in layer_sizes:
            hidden = tf.compat.v1.layers.dense(hidden, units)
        train_op = tf.compat.v1.train.AdamOptimizer().minimize(tf.reduce_mean(hidden))
        with tf.compat.v1.Session() as sess:
            for batch in batches:
                sess.run(train_op, {x: batch})
        """),
        Valid("""
        import tensorflow as tf

        x = tf.compat.v1.placeholder(tf.float32, [None, 4])
        train_op = tf.compat.v1.train.AdamOptimizer().minimize(tf.reduce_mean(x))

        def freeze(sess, step):
            frozen = tf.compat.v1.graph_util.convert_variables_to_constants(
                sess, sess.graph_def, ["output"]
            )
            tf.io.write_graph(frozen, "export", f"frozen-{step}.pb", as_text=False)

        with tf.compat.v1.Session() as sess:
            for step, batch in enumerate(batches):
                sess.run(train_op, {x: batch})
                freeze(sess, step)
        """),
        Valid("""
        import tensorflow as tf

        sess = tf.compat.v1.Session()
        for network in range(5):
            sess.run(tf.compat.v1.global_variables_initializer())
        """),
        Valid("""
        import tensorflow as tf

        for config in configs:
            with tf.Graph().as_default():
                x = tf.compat.v1.placeholder(tf.float32, [None, 4])
                loss = tf.reduce_mean(tf.compat.v1.layers.dense(x, config.units))
                with tf.compat.v1.Session() as sess:
                    sess.run(tf.compat.v1.global_variables_initializer())
                    sess.run(loss, {x: config.data})
        """),
        Valid("""
        import tensorflow as tf

        class Agent:
            def __init__(self, sess, target, source):
                self.sess = sess
                self.sync_ops = [t.assign(s) for t, s in zip(target, source)]

            def sync(self):
                self.sess.run(self.sync_ops)

        agent = Agent(tf.compat.v1.Session(), target_vars, source_vars)
        while True:
            agent.sync()
        """),
        Valid("""
        import tensorflow as tf

        for batch in dataset:
            loss = tf.reduce_mean(tf.square(model(batch)))
            accuracy = tf.round(tf.sigmoid(loss))
        """),
        Valid("""
        import tensorflow as tf

        sess = tf.compat.v1.Session()
        for step in range(num_steps):
            sess.run(train_op)
            summary = tf.compat.v1.Summary()
            summary.value.add(tag="step", simple_value=step)
            params = tf.compat.v1.trainable_variables()
        """),
        Valid("""
        import tensorflow as tf

        sess = tf.compat.v1.Session()
        sync_op = None
        while True:
            if sync_op is None:
                sync_op = tf.compat.v1.assign(target, source)
            sess.run(sync_op)
        """),
        # PGGAN's stage change (Kyushik/Generative-Model): one assign per variable, once per
        # stage of eight; the loop over the graph's variables runs as often as it has them.
        Valid("""
        import tensorflow as tf

        sess = tf.compat.v1.Session()
        for stage in range(1, 9):
            variables = tf.compat.v1.trainable_variables()
            new_vars = [v for v in variables if f"stage{stage}/" in v.name]
            old_vars = [v for v in variables if f"stage{stage - 1}/" in v.name]
            for var, old in zip(new_vars, old_vars):
                sess.run(var.assign(old))
            train_stage(sess, stage)
        """),
        # tensorflow-DeepFM: each model builds into a graph of its own, so a model per fold
        # adds nothing to the default graph.
        Valid("""
        import tensorflow as tf


        class DeepFM:
            def __init__(self, size):
                self.graph = tf.Graph()
                with self.graph.as_default():
                    self.x = tf.compat.v1.placeholder(tf.float32, [None, size])
                    self.y = tf.compat.v1.layers.dense(self.x, 1)
                    self.sess = tf.compat.v1.Session(graph=self.graph)

            def fit(self, x):
                return self.sess.run(self.y, {self.x: x})


        for fold in folds:
            model = DeepFM(fold.size)
            model.fit(fold.x)
        """),
        # tflearn's training-mode switch: made on the first call only, guarded by the graph
        # collection the block adds it to.
        Valid("""
        import tensorflow as tf


        def training_mode():
            collection = tf.compat.v1.get_collection("is_training")
            if len(collection) == 0:
                flag = tf.compat.v1.Variable(False, trainable=False)
                tf.compat.v1.add_to_collection("is_training", flag)
                tf.compat.v1.add_to_collection("ops", tf.compat.v1.assign(flag, True))
            return tf.compat.v1.get_collection("ops")[0]


        sess = tf.compat.v1.Session()
        for batch in batches:
            sess.run(training_mode())
        """),
        # cleverhans's batch_eval_multi_worker: the graph of a factory is built on a miss of
        # its cache only, and stored there.
        Valid("""
        import tensorflow as tf

        _graphs = {}


        def accuracy(model, x):
            if model in _graphs:
                out = _graphs[model]
            else:
                out = tf.reduce_mean(model(x))
                _graphs[model] = out
            return out


        sess = tf.compat.v1.Session()
        for batch in batches:
            sess.run(accuracy(net, images), feed_dict={images: batch})
        """),
        # MTCNN's weight loader (facenet's detect_face.py, copied widely): one assign per
        # variable the loops name, each fetched under `reuse=True`.
        Valid("""
        import numpy as np
        import tensorflow as tf

        sess = tf.compat.v1.Session()


        def load(path):
            weights = np.load(path, allow_pickle=True).item()
            for op_name in weights:
                with tf.compat.v1.variable_scope(op_name, reuse=True):
                    for param_name, data in weights[op_name].items():
                        var = tf.compat.v1.get_variable(param_name)
                        sess.run(var.assign(data))
        """),
    )
    INVALID = (
        # gunclock's Flask service (set Z28 of stop 53): every request builds the network, a
        # session and a saver into the one default graph, and runs them.
        Invalid(
            """
            import tensorflow as tf
            from flask import Flask, request

            app = Flask(__name__)


            def predict(image):
                x = tf.compat.v1.placeholder(tf.float32, shape=(None, 4))
                w = tf.compat.v1.Variable(tf.zeros([4, 2]))
                sess = tf.compat.v1.Session()
                sess.run(tf.compat.v1.global_variables_initializer())
                return sess.run(tf.matmul(x, w), {x: [image]})


            @app.route("/predict", methods=["POST"])
            def serve():
                tf.compat.v1.disable_eager_execution()
                return str(predict(request.json["image"]))
            """,
            8,
            9,
            8,
            62,
            "`tf.compat.v1.placeholder(...)` through `predict` every request adds nodes to the "
            "default graph of the Flask route, which runs it (`sess.run`): the graph grows "
            "with every request; build it once, outside (`graph.finalize()` catches this)",
        ),
        # The same per-layer ops, built again for every batch.
        Invalid(
            """
            import tensorflow as tf

            sess = tf.compat.v1.Session()


            def train(layers, batches):
                for x in batches:
                    for W, b, out in layers:
                        m, v = tf.nn.moments(out, [0])
                        sess.run(W.assign(W / tf.sqrt(v)), {"x": x})
            """,
            9,
            20,
            9,
            43,
            "`tf.nn.moments(...)` every iteration adds nodes to the default graph of a loop "
            "that runs it (`sess.run`): the graph grows for as long as the loop runs; build it "
            "once before the loop (`graph.finalize()` catches this)",
        ),
        # The weights loader again on every step: its assigns are built anew each time.
        Invalid(
            """
            import tensorflow as tf

            sess = tf.compat.v1.Session()


            def train(layers, batches):
                for x in batches:
                    for name, pars in layers.items():
                        sess.run(pars[0].assign(x[name]))
            """,
            9,
            22,
            9,
            45,
            "`pars[0].assign(...)` every iteration adds nodes to the default graph of a loop "
            "that runs it (`sess.run`): the graph grows for as long as the loop runs; build it "
            "once before the loop (`graph.finalize()` catches this)",
        ),
        # A container of milestones that the guarded block adds to holds the counter as
        # often as the loop runs.
        Invalid(
            """
            import tensorflow as tf

            sess = tf.compat.v1.Session()


            def train(lr, train_op, epochs, rate, milestones):
                for epoch in range(epochs):
                    if epoch in milestones:
                        milestones.append(epoch + 1)
                        sess.run(tf.compat.v1.assign(lr, rate))
                    sess.run(train_op)
            """,
            10,
            22,
            10,
            51,
            "`tf.compat.v1.assign(...)` every iteration adds nodes to the default graph of a "
            "loop that runs it (`sess.run`): the graph grows for as long as the loop runs; "
            "build it once before the loop (`graph.finalize()` catches this)",
        ),
        # A TF1 course's input pipeline (unseen set Z3): each `get_next()` adds an
        # `IteratorGetNext` op, one per batch.
        Invalid(
            """
            import tensorflow as tf

            dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)
            iterator = dataset.make_one_shot_iterator()
            with tf.Session() as sess:
                for step in range(1000):
                    x_batch, y_batch = sess.run(iterator.get_next())
            """,
            7,
            37,
            7,
            56,
            "`iterator.get_next(...)` every iteration (1000 in all) adds nodes to the default "
            "graph of a loop that runs it (`sess.run`): the graph grows for as long as the "
            "loop runs; build it once before the loop (`graph.finalize()` catches this)",
        ),
        # CheXNet's class activation maps (unseen set K of stop 43): a helper builds and runs
        # a `K.function` for each image.
        Invalid(
            """
            import numpy as np
            import tensorflow as tf
            from tensorflow.keras import backend as K

            tf.compat.v1.disable_eager_execution()

            def create_cam(model, image):
                get_output = K.function([model.input], [model.layers[-1].output])
                return get_output([image])

            model = tf.keras.applications.VGG16()
            for image in images:
                create_cam(model, image)
            """,
            8,
            18,
            8,
            70,
            "`K.function(...)` through `create_cam` every iteration adds nodes to the default "
            "graph of a loop that runs it (`get_output`): the graph grows for as long as the "
            "loop runs; build it once before the loop (`graph.finalize()` catches this)",
        ),
        # A variable picked by its position in a list: the message shows the expression.
        Invalid(
            """
            import tensorflow as tf

            tf.compat.v1.disable_eager_execution()
            params = [tf.Variable(0.0) for _ in range(3)]
            sess = tf.compat.v1.Session()
            for step in range(1000):
                sess.run(params[step % 3].assign(step))
            """,
            7,
            14,
            7,
            43,
            "`params[step % 3].assign(...)` every iteration (1000 in all) adds nodes to the "
            "default graph of a loop that runs it (`sess.run`): the graph grows for as long as "
            "the loop runs; build it once before the loop (`graph.finalize()` catches this)",
        ),
        # The same assign per named variable, inside a loop that never ends: per step.
        Invalid(
            """
            import tensorflow as tf

            sess = tf.compat.v1.Session()


            def refresh(names, source):
                while True:
                    for name in names:
                        var = tf.compat.v1.get_variable(name)
                        sess.run(var.assign(source[name]))
            """,
            10,
            22,
            10,
            46,
            "`var.assign(...)` every iteration adds nodes to the default graph of a loop that "
            "runs it (`sess.run`): the graph grows for as long as the loop runs; build it once "
            "before the loop (`graph.finalize()` catches this)",
        ),
        # The same helper over the batches of an unending stream: one op per batch.
        Invalid(
            _ORDERED_UNION
            + "params = tf.compat.v1.trainable_variables()\n"
            + "for name in ordered_union(params, params):\n"
            + "    sess.run(tf.compat.v1.assign(name, tf.zeros_like(name)))\n"
            + "for batch in ordered_union(list(stream()), []):\n"
            + "    sess.run(tf.reduce_sum(batch))\n",
            15,
            14,
            15,
            34,
            "`tf.reduce_sum(...)` every iteration adds nodes to the default graph of a loop "
            "that runs it (`sess.run`): the graph grows for as long as the loop runs; build it "
            "once before the loop (`graph.finalize()` catches this)",
        ),
        Invalid(
            """
            import tensorflow as tf

            x = tf.compat.v1.placeholder(tf.float32, [None, 4])
            logits = tf.compat.v1.layers.dense(x, 1)
            sess = tf.compat.v1.Session()
            predictions = []
            for sample in samples:
                predictions.append(sess.run(tf.round(tf.sigmoid(logits)), {x: sample}))
            """,
            8,
            33,
            8,
            61,
            "`tf.round(...)` every iteration adds nodes to the default graph of a loop that "
            "runs it (`sess.run`): the graph grows for as long as the loop runs; build it once "
            "before the loop (`graph.finalize()` catches this)",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Actor:
                def __init__(self, sess, eval_params, target_params):
                    self.sess = sess
                    self.eval_params = eval_params
                    self.target_params = target_params

                def learn(self, batch):
                    self.sess.run([tf.compat.v1.assign(t, e)
                                   for t, e in zip(self.target_params, self.eval_params)])

            actor = Actor(tf.compat.v1.Session(), eval_params, target_params)
            while True:
                actor.learn(memory.sample())
            """,
            10,
            24,
            10,
            49,
            "`tf.compat.v1.assign(...)` through `learn` every iteration adds nodes to the "
            "default graph of a loop that runs it (`self.sess.run`): the graph grows for as "
            "long as the loop runs; build it once before the loop (`graph.finalize()` catches "
            "this)",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf
            from tensorflow.keras import backend as K

            tf.compat.v1.disable_eager_execution()
            model = tf.keras.applications.VGG16()
            for image in images:
                preds = model.predict(image)
                grads = K.gradients(model.output[:, np.argmax(preds)], model.layers[-3].output)
                iterate = K.function([model.input], [grads[0]])
                heatmap = iterate([image])
            """,
            9,
            13,
            9,
            84,
            "`K.gradients(...)` every iteration adds nodes to the default graph of a loop "
            "that runs it (`model.predict`): the graph grows for as long as the loop runs; "
            "build it once before the loop (`graph.finalize()` catches this)",
        ),
        Invalid(
            """
            import itertools

            import tensorflow as tf

            def copy_parameters(sess, source, target):
                ops = []
                for s, t in zip(source, target):
                    ops.append(t.assign(s))
                sess.run(ops)

            def train(sess, source, target):
                for step in itertools.count():
                    if step % 1000 == 0:
                        copy_parameters(sess, source, target)

            with tf.compat.v1.Session() as session:
                train(session, q_vars, target_vars)
            """,
            8,
            20,
            8,
            31,
            "`t.assign(...)` through `copy_parameters` every 1000th iteration adds nodes to the "
            "default graph of a loop that runs it (`sess.run`): the graph grows for as long "
            "as the loop runs; build it once before the loop (`graph.finalize()` catches this)",
        ),
        Invalid(
            """
            import tensorflow as tf

            with tf.compat.v1.Session() as sess:
                for epoch in range(epochs):
                    for batch in batches:
                        sess.run(train_op, {x: batch})
                    saver = tf.compat.v1.train.Saver()
                    saver.save(sess, "model.ckpt")
            """,
            7,
            17,
            7,
            43,
            "`tf.compat.v1.train.Saver(...)` every iteration adds nodes to the default graph "
            "of a loop that runs it (`sess.run`): the graph grows for as long as the loop runs; "
            "build it once before the loop (`graph.finalize()` catches this)",
        ),
        # The same helper left to make its own Saver: one more every 1000th episode.
        Invalid(
            """
            import tensorflow as tf


            def save_state(fname, saver=None):
                if saver is None:
                    saver = tf.compat.v1.train.Saver()
                saver.save(tf.compat.v1.get_default_session(), fname)


            sess = tf.compat.v1.Session()
            for episode in range(100000):
                sess.run(train_op)
                if episode % 1000 == 0:
                    save_state("ckpt")
            """,
            6,
            17,
            6,
            43,
            "`tf.compat.v1.train.Saver(...)` through `save_state` every 1000th iteration (100 "
            "in all) adds nodes to the default graph of a loop that runs it (`sess.run`): the "
            "graph grows for as long as the loop runs; build it once before the loop "
            "(`graph.finalize()` catches this)",
        ),
        # A soft target update built anew for every variable at every training step.
        Invalid(
            """
            import tensorflow as tf

            sess = tf.compat.v1.Session()
            online = tf.compat.v1.trainable_variables("online")
            target = tf.compat.v1.trainable_variables("target")
            for step in range(100000):
                sess.run(train_op)
                for var, source in zip(target, online):
                    sess.run(var.assign(0.99 * var + 0.01 * source))
            """,
            9,
            18,
            9,
            56,
            "`var.assign(...)` every iteration (100000 in all) adds nodes to the default graph "
            "of a loop that runs it (`sess.run`): the graph grows for as long as the loop runs; "
            "build it once before the loop (`graph.finalize()` catches this)",
        ),
        # The same model building into the default graph, once per fold.
        Invalid(
            """
            import tensorflow as tf


            class DeepFM:
                def __init__(self, size):
                    self.x = tf.compat.v1.placeholder(tf.float32, [None, size])
                    self.y = tf.compat.v1.layers.dense(self.x, 1)
                    self.sess = tf.compat.v1.Session()

                def fit(self, x):
                    return self.sess.run(self.y, {self.x: x})


            for fold in folds:
                model = DeepFM(fold.size)
                model.fit(fold.x)
            """,
            6,
            18,
            6,
            68,
            "`tf.compat.v1.placeholder(...)` through `__init__` every iteration adds nodes to "
            "the default graph of a loop that runs it (`self.sess.run`): the graph grows for as "
            "long as the loop runs; build it once before the loop (`graph.finalize()` catches "
            "this)",
        ),
        # Texygen's GANs: the session comes from the base class's constructor; a setter that
        # nothing calls may put something else there, which the project never shows.
        Invalid(
            """
            import tensorflow as tf


            class Gan:
                def __init__(self):
                    self.sess = tf.compat.v1.Session()

                def set_sess(self, sess):
                    self.sess = sess


            class Seqgan(Gan):
                def __init__(self, epochs):
                    super().__init__()
                    self.epochs = epochs

                def train(self, reward):
                    for epoch in range(self.epochs):
                        self.sess.run(tf.identity(reward))
            """,
            19,
            27,
            19,
            46,
            "`tf.identity(...)` every iteration adds nodes to the default graph of a loop that "
            "runs it (`self.sess.run`): the graph grows for as long as the loop runs; build it "
            "once before the loop (`graph.finalize()` catches this)",
        ),
        # The same guard on a collection the block never adds to: it builds every call.
        Invalid(
            """
            import tensorflow as tf


            def training_mode():
                collection = tf.compat.v1.get_collection("is_training")
                if len(collection) == 0:
                    flag = tf.compat.v1.Variable(False, trainable=False)
                    tf.compat.v1.add_to_collection("training", flag)
                    tf.compat.v1.add_to_collection("ops", tf.compat.v1.assign(flag, True))
                return tf.compat.v1.get_collection("ops")[0]


            sess = tf.compat.v1.Session()
            for batch in batches:
                sess.run(training_mode())
            """,
            7,
            16,
            7,
            61,
            "`tf.compat.v1.Variable(...)` through `training_mode` every iteration adds nodes to "
            "the default graph of a loop that runs it (`sess.run`): the graph grows for as long "
            "as the loop runs; build it once before the loop (`graph.finalize()` catches this)",
        ),
    )

    def setup(self) -> None:
        #: Per loop or entry point's function: the call that runs the graph every iteration or
        #: call ("" when none does).
        self._runs: dict[cst.CSTNode, str] = {}
        #: Loops (and entry points' functions) with a finding on an op built in them (one per
        #: loop: one fix moves them all).
        self._reported: set[cst.CSTNode] = set()

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if not context.repeated or context.in_tf_function or context.guarded:
            return
        effect = _graph_op(context, node)
        if effect is None or (not effect.chain and _inside_graph_op(context)):
            return
        limit = context.options.max_loop_iterations
        if context.bounded(limit) or self._fresh_graph():
            return
        named = _naming_loop(context, node)
        if named is None:
            named = _variables_loop(context)
        if named is not None and (named == 0 or context.bounded(limit, context.loops[:named])):
            return  # one assign per variable of the graph: the loops that name them count once
        run = self._run()
        if not run or not _builds_nodes(context, effect):
            return
        repeater = context.loops[-1] if context.loops else context.frame.node
        if effect.chain:
            callee = effect.chain[0].callee.rpartition(".")[2]
            how_often = f"through `{callee}` {every_iteration(context)}"
            message = _message(context, effect.text, how_often, run)
            report_through(self, node, effect, message, RelatedRole.CALL, "the op is built here")
        elif repeater not in self._reported:
            self._reported.add(repeater)
            op = dotted(node.func) or source_of(node.func)  # `self.params[i].assign`
            report = self.report(node, _message(context, op, every_iteration(context), run))
            relate_loop(report, context)

    def _run(self) -> str:
        """What runs the graph every iteration of the outermost loop that repeats the current
        node, or every call of the entry point it is in ("" when nothing does)."""
        context = self.context
        outer = _repetition(context)
        found = self._runs.get(outer)
        if found is None:
            graph_mode = context.graph_mode
            calls = context.loop_calls(context.loops[0]) if context.loops else None
            found = self._runs[outer] = next(
                (
                    run
                    for call in (calls if calls is not None else context.repeated_calls())
                    if (run := _runs_graph(context, call, graph_mode))
                ),
                "",
            )
        return found

    def _fresh_graph(self) -> bool:
        """Each iteration (or call of the entry point) builds into a graph of its own: a
        ``with tf.Graph().as_default():`` block inside the loop (or the function), or a loop
        (or function) that resets the default graph every time, directly or through project
        code (``softmax_preds()`` ending with ``tf.reset_default_graph()``)."""
        context = self.context
        outer = _repetition(context)
        inside = False
        for node in context.ancestors:
            inside = inside or node is outer
            if (
                inside
                and isinstance(node, cst.With)
                and any(_new_graph(context, i) for i in node.items)
            ):
                return True
        return any(
            effect.kind in _RESETS
            for call in context.repeated_calls()
            for effect in context.effects(call)
        )


def _repetition(context: FileContext) -> cst.CSTNode:
    """What repeats the current node: the outermost loop of its scope around it, else the
    entry point's function the framework calls many times."""
    return context.loops[0] if context.loops else context.frame.node


def _naming_loop(context: FileContext, node: cst.Call) -> int | None:
    """Where, in the enclosing loops, the outermost loop is whose items name the variable an
    assign fetches (``var = tf.get_variable(param_name)``, or in ``with tf.variable_scope(
    op_name, reuse=True):``, then ``var.assign(data)``: a pretrained-weights loader): each
    name is another variable of the graph, so from that loop inwards the ops are as many as
    the graph has variables, whatever the loops iterate. None when no loop names it."""
    variable = _assigned_variable(context, node)
    if isinstance(variable, cst.Subscript):
        return _counted_variable(context, variable)
    if not isinstance(variable, cst.Name):
        return None
    fetches = context.scope_facts().assignments.get(variable.value, [])
    naming: list[cst.BaseExpression] = []
    for assignment in fetches:
        value = assignment.value
        if not (isinstance(value, cst.Call) and context.resolve(value.func) in _GET_VARIABLE):
            return None
        naming.extend(a.value for a in value.args[:1] if a.keyword is None)
        naming.extend(a.value for a in value.args if a.keyword and a.keyword.value == "name")
    if not fetches:
        return None
    for ancestor in context.ancestors:
        if isinstance(ancestor, cst.With):
            for item in ancestor.items:
                call = item.item
                if isinstance(call, cst.Call) and context.resolve(call.func) in _VARIABLE_SCOPE:
                    naming.extend(a.value for a in call.args[:1] if a.keyword is None)
    used = set().union(*map(_names, naming))
    for position, loop in enumerate(context.loops):
        if isinstance(loop, cst.For) and used & _names(loop.target):
            return position
    return None


def _variables_loop(context: FileContext) -> int | None:
    """Where, in the enclosing loops, the outermost loop is whose items are variables of the
    graph: each iteration assigns one of them (``W.assign(...)``, ``tf.assign(b, ...)``, on a
    name its target binds). A data-dependent initialization, one set of ops per layer of the
    model: as many as the graph has variables, whatever else each iteration builds."""
    for position, loop in enumerate(context.loops):
        if not isinstance(loop, cst.For):
            continue
        targets = _names(loop.target)
        for call in context.loop_calls(loop):
            assigned = _assigned_variable(context, call)
            if isinstance(assigned, cst.Subscript) and isinstance(
                _index(assigned), cst.Integer | cst.SimpleString
            ):
                assigned = assigned.value  # ``pars[0]`` of ``for name, pars in layers.items():``
            if isinstance(assigned, cst.Name) and assigned.value in targets:
                return position
    return None


def _index(subscript: cst.Subscript) -> cst.BaseExpression | None:
    """The one index of ``subscript`` (``i`` of ``params[i]``), None for a slice or more."""
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return None
    return subscript.slice[0].slice.value


def _assigned_variable(context: FileContext, node: cst.Call) -> cst.BaseExpression | None:
    """The variable an assign call assigns: ``var`` of ``var.assign(x)`` (``assign_add``,
    ``assign_sub``) and of ``tf.assign(var, x)``; None for any other call."""
    if isinstance(node.func, cst.Attribute) and node.func.attr.value in _ASSIGN_METHODS:
        return node.func.value
    if context.resolve(node.func) in _ASSIGNS and node.args:
        return node.args[0].value
    return None


def _counted_variable(context: FileContext, variable: cst.Subscript) -> int | None:
    """Where the loop is whose counter picks the variable from a list of them
    (``self.parameters[i]`` in ``for i, k in enumerate(keys):``, or ``for i in range(n):``,
    also from a list of no known items, ``model.trainable_vars[i]``: what is assigned is a
    variable): each iteration assigns another variable, so the ops are as many as the list
    holds. None for another index (``params[step % 3]`` assigns the same ones again) and for
    a value known to be something else than a list of variables."""
    index = _index(variable)
    if not isinstance(index, cst.Name):
        return None
    held = context.type_of(variable.value)
    if held.kind is Kind.CONTAINER:
        element = held.atoms[0].element
        if element is not None and element.kind not in {Kind.TENSOR, Kind.UNKNOWN}:
            return None  # a list of numbers or of lists: not variables
    elif held.kind is not Kind.UNKNOWN:
        return None
    for position, loop in enumerate(context.loops):
        if isinstance(loop, cst.For) and _counter(loop) == index.value:
            return position
    return None


def _counter(loop: cst.For) -> str | None:
    """The name of a loop's counter: ``i`` of ``for i in range(...)`` or of ``for i, x in
    enumerate(...)``."""
    if not isinstance(loop.iter, cst.Call):
        return None
    called = dotted(loop.iter.func)
    target = loop.target
    if called == "range" and isinstance(target, cst.Name):
        return target.value
    if called == "enumerate" and isinstance(target, cst.Tuple) and target.elements:
        first = target.elements[0].value
        return first.value if isinstance(first, cst.Name) else None
    return None


def _names(node: cst.CSTNode) -> set[str]:
    """The names in an expression (a loop's target, a variable's name)."""
    return {n.value for n in descendants(node) if isinstance(n, cst.Name)}


def _graph_op(context: FileContext, node: cst.Call) -> Effect | None:
    """The nodes a call adds to the graph: the call itself, or through the project code it
    runs."""
    return next((e for e in context.effects(node) if e.kind is EffectKind.GRAPH_OP), None)


def _inside_graph_op(context: FileContext) -> bool:
    """The call is an argument of another graph op of the same statement (``tf.round(
    tf.sigmoid(x))``): the outermost op is reported."""
    for ancestor in reversed(context.ancestors[:-1]):
        if isinstance(ancestor, cst.BaseSmallStatement | cst.BaseCompoundStatement):
            return False
        if isinstance(ancestor, cst.Call) and any(
            e.kind is EffectKind.GRAPH_OP and not e.chain for e in context.effects(ancestor)
        ):
            return True
    return False


def _runs_graph(context: FileContext, call: cst.Call, graph_mode: bool) -> str:
    """How ``call`` runs the graph ("" when it does not): a session's ``run`` or a function
    made by ``K.function`` (directly or in the project code it runs), or in graph mode a Keras
    model's training or inference method."""
    for effect in context.effects(call):
        if effect.kind is EffectKind.RUN_GRAPH:
            return effect.text
        if graph_mode and effect.kind in {EffectKind.PREDICT, EffectKind.FIT}:
            return f"{effect.text}.{effect.kind.value}"
    receiver = method_call(call, keras.TRAINING_METHODS)
    if graph_mode and receiver is not None and context.is_model(receiver):
        return f"{dotted(receiver) or 'model'}.{_method(call)}"
    return ""


def _builds_nodes(context: FileContext, effect: Effect) -> bool:
    """The op builds graph nodes where it runs: always in graph mode; where eager execution is
    on (a project on TensorFlow 2 that never turns it off), only with a graph made the
    default, around the op in the project code the loop calls (``effect.in_graph``), around
    the loop's call or the loop itself (``with tf.compat.v1.Session() as sess:``), or by a
    caller of the loop's function; or in a file that builds placeholders when imported, where
    no graph is the default: it gets that far only with eager execution off. Elsewhere the op
    runs eagerly and keeps nothing."""
    if context.graph_mode or context.frameworks.tensorflow_major != 2:
        return True
    return (
        context.module_index.placeholders_at_import
        or effect.in_graph
        or any(_enters_graph(context, item) for w in context.open_withs() for item in w.items)
        or context.runs_in_graph()
    )


def _enters_graph(context: FileContext, item: cst.WithItem) -> bool:
    """The ``with`` item makes a graph the default (:func:`~tflint_leaks.analysis.graph.
    enters_graph`): a session made there, or ``g.as_default()`` for a graph."""
    call = item.item
    if not isinstance(call, cst.Call):
        return False
    receiver = method_call(call, frozenset({AS_DEFAULT}))
    made = None if receiver is None else _graph_made(context, receiver)
    if made is None and isinstance(receiver, cst.Attribute):
        made = f".{receiver.attr.value}"  # ``sess.graph``
    method = AS_DEFAULT if receiver is not None else None
    return enters_graph(context.resolve(call.func), method, made)


def _graph_made(
    context: FileContext, receiver: cst.BaseExpression, loops: tuple[LoopNode, ...] = ()
) -> str | None:
    """What made ``receiver``: the canonical name of the call (``tensorflow.Graph``), or
    :data:`GRAPH` for a name bound to a new graph (in one of ``loops`` when they are given)."""
    if isinstance(receiver, cst.Call):
        return context.resolve(receiver.func)
    name = dotted(receiver)
    within = set(loops)
    made = name is not None and any(
        (not loops or a.loops & within)
        and isinstance(a.value, cst.Call)
        and context.resolve(a.value.func) == GRAPH
        for a in context.scope_facts().assignments.get(name, ())
    )
    return GRAPH if made else None


def _new_graph(context: FileContext, item: cst.WithItem) -> bool:
    """``with tf.Graph().as_default():`` or ``with graph.as_default():`` for a graph made in
    the loop."""
    call = item.item
    receiver = method_call(call, frozenset({AS_DEFAULT})) if isinstance(call, cst.Call) else None
    return receiver is not None and _graph_made(context, receiver, tuple(context.loops)) == GRAPH


def _method(call: cst.Call) -> str:
    assert isinstance(call.func, cst.Attribute)
    return call.func.attr.value


def _message(context: FileContext, op: str, how_often: str, run: str) -> str:
    entry = context.entry_point
    if entry is None or context.loops:
        return (
            f"`{op}(...)` {how_often} adds nodes to the default graph of a loop that runs it "
            f"(`{run}`): the graph grows for as long as the loop runs; build it once before the "
            "loop (`graph.finalize()` catches this)"
        )
    return (
        f"`{op}(...)` {how_often} adds nodes to the default graph of {entry.what}, which runs "
        f"it (`{run}`): the graph grows with every {entry.unit}; build it once, outside "
        "(`graph.finalize()` catches this)"
    )
