"""Repetition that is not a loop: the entry points a framework calls many times.

A Flask route runs once per request, an Optuna objective once per trial, a Keras callback's
``on_train_batch_end`` once per batch: the repetition is the framework's, and no loop of the
project shows it. :data:`ENTRY_POINTS` is the one table of them, each row with the unit its
messages count in ("every request", "every trial (100 in all)") and the form by which the
project hands a function to the framework:

- ``DECORATOR``: ``@app.route(...)`` on a function, where ``app`` is made by a row's
  constructor (``flask.Flask``) or the decorator is a row's name (``celery.shared_task``);
- ``METHOD``: a method of a class deriving (through the project's classes) from a row's base
  (``keras.callbacks.Callback``: ``on_train_batch_end``);
- ``ARGUMENT``: a function passed to a row's call, anywhere in the project
  (``study.optimize(objective, n_trials=100)``; the count is read from the call's arguments);
- ``VIEWS``: a Django view, a top-level function of a ``views`` module taking ``request``;
- ``SCRIPT``: the module-level code of a script that imports a row's package
  (``streamlit``), which the framework runs again from the top on every interaction. A module
  that another project module imports is not the script (an import runs its code once).

A function decorated with one of :data:`MEMOIZERS` (``@st.cache_resource``,
``@functools.lru_cache``) runs its body once per distinct arguments: a call of it in an entry
point or a loop returns what the first call made.

Read from the libraries' own documentation and source, and checked where it matters:

- ``Dataset.map(fn)`` is *not* a row: ``map`` traces ``fn`` once into a graph (measured with
  TensorFlow 2.21: a Python counter in ``fn`` reads 1 after iterating 10 elements twice).
  What runs per element is a ``tf.py_function``/``tf.numpy_function`` inside it (10 for 10
  elements), and a ``from_generator`` generator runs once per pass over the dataset (its own
  loop yields the elements).
- KerasTuner clears the session itself: ``Tuner._try_build`` (keras-tuner 1.4.8,
  ``keras_tuner/src/engine/tuner.py``) calls ``keras.backend.clear_session()`` and
  ``gc.collect()`` before every ``hypermodel.build(hp)``, so the rows of a ``build(hp)`` say
  ``clears_session``. Optuna, Ray Tune, Hyperopt and the scikit-learn wrappers do not.
- A row marked ``once`` runs its function once per registration (a ``threading.Thread``'s
  target, a ``sched`` event, an APScheduler job without a trigger): it repeats only where the
  registering call does (inside a loop of its own function, as many times as that loop runs:
  once per item of what it iterates, a loop over the machine's devices counted as one; or a
  ``sched`` action that schedules itself again).

Not seen: a registration made inside a lambda (``ds.map(lambda x: tf.py_function(f, [x],
tf.float32))``: the index keeps no lambda bodies; name the wrapper), and a function wrapped
in a lambda (``study.optimize(lambda t: objective(t, data))``; ``functools.partial`` is
followed).

Nothing here runs or imports project code: the table is matched against canonical names
(:mod:`.names`), the project index and the solver's values.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from tflint_leaks.analysis import keras


class Form(enum.Enum):
    """How the project hands a function to the framework."""

    DECORATOR = "decorator"
    METHOD = "method"
    ARGUMENT = "argument"
    VIEWS = "views"
    SCRIPT = "script"


@dataclass(frozen=True)
class Row:
    """One kind of entry point."""

    framework: str
    #: What the function is to the framework, for messages: "the Flask *route*".
    role: str
    #: What one call is: "every *request*".
    unit: str
    form: Form
    #: Patterns (``fnmatch``, over canonical dotted names) of the decorator (an instance's
    #: method is named by its constructor: ``flask.Flask.route``), the base class, or the
    #: registering call (``schedule.every().*.do`` for a chain of calls).
    names: tuple[str, ...] = ()
    #: METHOD: the methods the framework calls (``"*"``: every public method).
    methods: frozenset[str] = frozenset()
    #: ARGUMENT: the parameter the function is passed as (its position, -1 when keyword-only,
    #: and its name).
    argument: tuple[int, str] = (0, "")
    #: ARGUMENT: the parameters whose product is the number of calls (position, name, default:
    #: None when an absent argument means "not known").
    count: tuple[tuple[int, str, int | None], ...] = ()
    #: ARGUMENT: the count is not known when a module of the project calls one of these (a
    #: Ray Tune ``grid_search`` repeats every sample for each point of its grid).
    count_unknown_with: tuple[str, ...] = ()
    #: ARGUMENT on an object the index cannot type (``study.optimize``): the registering
    #: module must import this package.
    package: str = ""
    #: ARGUMENT: the registering module must also call one of these (a scikit-learn search
    #: over a Keras wrapper).
    with_call: tuple[str, ...] = ()
    #: The framework calls ``clear_session()`` before each call itself.
    clears_session: bool = False
    #: ARGUMENT: the parameter listing callables the framework calls after each call
    #: (Optuna's ``callbacks``): one of them that calls ``clear_session()`` clears it per call.
    after_each: tuple[int, str] | None = None
    #: METHOD: the parameters (method, position after ``self``) the framework passes a model
    #: built anew for each call (KerasTuner's ``HyperModel.fit(hp, model)``: what ``build(hp)``
    #: just returned).
    new_models: tuple[tuple[str, int], ...] = ()
    #: Runs once per registration; repeated only where the registration is (see the module).
    once: bool = False
    #: ``once`` rows: the registration repeats after all when it passes this argument
    #: (APScheduler's ``add_job(func, "interval", ...)``: any trigger but the default ``date``).
    repeats_with: tuple[int, str] | None = None
    #: A minimal project for the table's tests: the entry point's body predicts with the
    #: module-level Keras model ``MODEL``.
    example: str = ""

    @property
    def what(self) -> str:
        return f"the {self.framework} {self.role}"


_HTTP = frozenset({"get", "post", "put", "patch", "delete", "head", "options"})
_ROUTES = ("route", "get", "post", "put", "patch", "delete", "api_route", "websocket")
_KERAS = ("keras.*", "tensorflow.keras.*")
_BATCH_HOOKS = frozenset(
    {
        "on_batch_begin",
        "on_batch_end",
        "on_train_batch_begin",
        "on_train_batch_end",
        "on_test_batch_begin",
        "on_test_batch_end",
        "on_predict_batch_begin",
        "on_predict_batch_end",
    }
)
_EPOCH_HOOKS = frozenset({"on_epoch_begin", "on_epoch_end"})
_SEARCHES = (
    "sklearn.model_selection.*SearchCV",
    "sklearn.model_selection.cross_val*",
    "sklearn.model_selection.cross_validate",
    "sklearn.grid_search.*SearchCV",
    "skopt.BayesSearchCV",
    "skopt.searchcv.BayesSearchCV",
)
_TUNERS = ("RandomSearch", "Hyperband", "BayesianOptimization", "GridSearch")

_PREDICT = 'MODEL = tf.keras.models.load_model("model.keras")\n'
#: A Ray Tune trainable that predicts, before the call that hands it over.
_RAY_TRAINABLE = (
    "from ray import tune\n" + _PREDICT + "\n"
    "def entry(config):\n    return {'score': float(MODEL.predict(x)[0])}\n\n"
)


def _example(body: str) -> str:
    return f"import tensorflow as tf\n{body}"


ENTRY_POINTS: tuple[Row, ...] = (
    # -- web handlers: every request ---------------------------------------------------------
    Row(
        "Flask",
        "route",
        "request",
        Form.DECORATOR,
        tuple(f"flask.{app}.{r}" for app in ("Flask", "Blueprint") for r in _ROUTES),
        example=_example(
            "from flask import Flask\n" + _PREDICT + "app = Flask(__name__)\n\n"
            '@app.route("/predict", methods=["POST"])\n'
            "def entry():\n    return MODEL.predict(x)\n"
        ),
    ),
    Row(
        "Flask",
        "view",
        "request",
        Form.ARGUMENT,
        ("*.add_url_rule",),
        argument=(2, "view_func"),
        package="flask",
        example=_example(
            "import flask\n" + _PREDICT + "app = flask.Flask(__name__)\n\n"
            "def entry():\n    return MODEL.predict(x)\n\n"
            'app.add_url_rule("/predict", "predict", entry)\n'
        ),
    ),
    Row(
        "FastAPI",
        "route",
        "request",
        Form.DECORATOR,
        tuple(
            f"fastapi.{app}.{r}"
            for app in ("FastAPI", "APIRouter", "routing.APIRouter")
            for r in _ROUTES
        ),
        example=_example(
            "from fastapi import APIRouter\n" + _PREDICT + "router = APIRouter()\n\n"
            '@router.post("/predict")\n'
            "async def entry(x: list[float]):\n    return MODEL.predict(x)\n"
        ),
    ),
    Row(
        "Django",
        "view",
        "request",
        Form.VIEWS,
        example=_example(
            "from django.http import JsonResponse\n" + _PREDICT + "\n"
            "def entry(request):\n    return JsonResponse(MODEL.predict(x))\n"
        ),
    ),
    Row(
        "Django",
        "view",
        "request",
        Form.METHOD,
        (
            "django.views.*",
            "rest_framework.views.*",
            "rest_framework.viewsets.*",
            "rest_framework.generics.*",
        ),
        methods=_HTTP | {"list", "create", "retrieve", "update", "partial_update", "destroy"},
        example=_example(
            "from django.views import View\n" + _PREDICT + "\n"
            "class Predict(View):\n"
            "    def post(self, request):\n        return MODEL.predict(x)\n"
        ),
    ),
    Row(
        "Django",
        "view",
        "request",
        Form.ARGUMENT,
        ("django.urls.path", "django.urls.re_path", "django.conf.urls.url"),
        argument=(1, "view"),
        example=_example(
            "from django.urls import path\n" + _PREDICT + "\n"
            "def entry(request):\n    return MODEL.predict(x)\n\n"
            'urlpatterns = [path("predict/", entry)]\n'
        ),
    ),
    Row(
        "aiohttp",
        "handler",
        "request",
        Form.DECORATOR,
        tuple(f"aiohttp.web.RouteTableDef.{r}" for r in (*_ROUTES, "view")),
        example=_example(
            "from aiohttp import web\n" + _PREDICT + "routes = web.RouteTableDef()\n\n"
            '@routes.post("/predict")\n'
            "async def entry(request):\n    return MODEL.predict(x)\n"
        ),
    ),
    Row(
        "aiohttp",
        "handler",
        "request",
        Form.ARGUMENT,
        tuple(f"*.add_{m}" for m in sorted(_HTTP)) + tuple(f"aiohttp.web.{m}" for m in _HTTP),
        argument=(1, "handler"),
        package="aiohttp",
        example=_example(
            "from aiohttp import web\n" + _PREDICT + "\n"
            "async def entry(request):\n    return MODEL.predict(x)\n\n"
            "app = web.Application()\n"
            'app.router.add_post("/predict", entry)\n'
        ),
    ),
    Row(
        "aiohttp",
        "handler",
        "request",
        Form.ARGUMENT,
        ("*.add_route",),
        argument=(2, "handler"),
        package="aiohttp",
        example=_example(
            "from aiohttp import web\n" + _PREDICT + "\n"
            "async def entry(request):\n    return MODEL.predict(x)\n\n"
            "app = web.Application()\n"
            'app.router.add_route("POST", "/predict", entry)\n'
        ),
    ),
    Row(
        "Flask",
        "resource",
        "request",
        Form.METHOD,
        ("flask_restful.Resource", "flask_restx.Resource", "flask.views.MethodView"),
        methods=_HTTP,
        example=_example(
            "from flask_restful import Resource\n" + _PREDICT + "\n"
            "class Predict(Resource):\n"
            "    def get(self):\n        return MODEL.predict(x).tolist()\n"
        ),
    ),
    Row(
        "aiohttp",
        "view",
        "request",
        Form.METHOD,
        ("aiohttp.web.View", "aiohttp.web_urldispatcher.View"),
        methods=_HTTP,
        example=_example(
            "from aiohttp import web\n" + _PREDICT + "\n"
            "class Predict(web.View):\n"
            "    async def post(self):\n        return MODEL.predict(x)\n"
        ),
    ),
    Row(
        "Starlette",
        "endpoint",
        "request",
        Form.ARGUMENT,
        ("starlette.routing.Route", "starlette.routing.WebSocketRoute"),
        argument=(1, "endpoint"),
        example=_example(
            "from starlette.routing import Route\n" + _PREDICT + "\n"
            "async def entry(request):\n    return MODEL.predict(x)\n\n"
            'routes = [Route("/predict", entry, methods=["POST"])]\n'
        ),
    ),
    Row(
        "Starlette",
        "endpoint",
        "request",
        Form.DECORATOR,
        tuple(f"starlette.applications.Starlette.{r}" for r in ("route", "websocket_route")),
        example=_example(
            "from starlette.applications import Starlette\n" + _PREDICT + "app = Starlette()\n\n"
            '@app.route("/predict")\n'
            "async def entry(request):\n    return MODEL.predict(x)\n"
        ),
    ),
    Row(
        "Starlette",
        "endpoint",
        "request",
        Form.METHOD,
        ("starlette.endpoints.HTTPEndpoint",),
        methods=_HTTP,
        example=_example(
            "from starlette.endpoints import HTTPEndpoint\n" + _PREDICT + "\n"
            "class Predict(HTTPEndpoint):\n"
            "    async def post(self, request):\n        return MODEL.predict(x)\n"
        ),
    ),
    Row(
        "Tornado",
        "handler",
        "request",
        Form.METHOD,
        ("tornado.web.RequestHandler", "tornado.websocket.WebSocketHandler"),
        methods=_HTTP | {"on_message"},
        example=_example(
            "import tornado.web\n" + _PREDICT + "\n"
            "class Predict(tornado.web.RequestHandler):\n"
            "    def post(self):\n        self.write(MODEL.predict(x))\n"
        ),
    ),
    Row(
        "gRPC",
        "servicer method",
        "request",
        Form.METHOD,
        ("*_pb2_grpc.*Servicer",),
        methods=frozenset({"*"}),
        example=_example(
            "import predict_pb2_grpc\n" + _PREDICT + "\n"
            "class Predictor(predict_pb2_grpc.PredictorServicer):\n"
            "    def entry(self, request, context):\n        return MODEL.predict(x)\n"
        ),
    ),
    Row(
        "Celery",
        "task",
        "task",
        Form.DECORATOR,
        ("celery.Celery.task", "celery.shared_task", "celery.app.shared_task"),
        example=_example(
            "from celery import shared_task\n" + _PREDICT + "\n"
            "@shared_task\n"
            "def entry(x):\n    return MODEL.predict(x)\n"
        ),
    ),
    # -- search objectives: every trial --------------------------------------------------------
    Row(
        "Optuna",
        "objective",
        "trial",
        Form.ARGUMENT,
        ("*.optimize",),
        argument=(0, "func"),
        count=((1, "n_trials", None),),
        package="optuna",
        after_each=(5, "callbacks"),
        example=_example(
            "import optuna\n" + _PREDICT + "\n"
            "def entry(trial):\n    return float(MODEL.predict(x)[0])\n\n"
            "study = optuna.create_study()\n"
            "study.optimize(entry, n_trials=100)\n"
        ),
    ),
    # ``num_samples`` trials (default 1), each grid point of a ``grid_search`` that many times
    # (https://docs.ray.io/en/latest/tune/api/doc/ray.tune.TuneConfig.html), -1 without end.
    Row(
        "Ray Tune",
        "trainable",
        "trial",
        Form.ARGUMENT,
        ("ray.tune.run", "ray.tune.tune.run"),
        argument=(0, "run_or_experiment"),
        count=((-1, "num_samples", 1),),
        count_unknown_with=("ray.tune.grid_search",),
        example=_example(_RAY_TRAINABLE + "tune.run(entry, num_samples=20)\n"),
    ),
    # The count is ``tune_config``'s (a ``TuneConfig`` made elsewhere): not known here.
    Row(
        "Ray Tune",
        "trainable",
        "trial",
        Form.ARGUMENT,
        ("ray.tune.Tuner", "ray.tune.tuner.Tuner"),
        argument=(0, "trainable"),
        example=_example(
            _RAY_TRAINABLE
            + "tune.Tuner(entry, tune_config=tune.TuneConfig(num_samples=20)).fit()\n"
        ),
    ),
    Row(
        "Hyperopt",
        "objective",
        "trial",
        Form.ARGUMENT,
        ("hyperopt.fmin", "hyperopt.fmin.fmin"),
        argument=(0, "fn"),
        count=((3, "max_evals", None),),
        example=_example(
            "from hyperopt import fmin, hp, tpe\n" + _PREDICT + "\n"
            "def entry(params):\n    return float(MODEL.predict(x)[0])\n\n"
            'fmin(fn=entry, space=hp.uniform("lr", 0, 1), algo=tpe.suggest, max_evals=50)\n'
        ),
    ),
    Row(
        "KerasTuner",
        "model-building function",
        "trial",
        Form.ARGUMENT,
        tuple(f"{p}.{t}" for p in ("keras_tuner*", "kerastuner*") for t in _TUNERS),
        argument=(0, "hypermodel"),
        count=((2, "max_trials", None), (-1, "executions_per_trial", 1)),
        clears_session=True,
        example=_example(
            "import keras_tuner\n" + _PREDICT + "\n"
            "def entry(hp):\n    MODEL.predict(x)\n    return MODEL\n\n"
            'tuner = keras_tuner.RandomSearch(entry, objective="val_loss", max_trials=30)\n'
        ),
    ),
    Row(
        "KerasTuner",
        "hypermodel",
        "trial",
        Form.METHOD,
        tuple(f"{p}*.HyperModel" for p in ("keras_tuner", "kerastuner")),
        # ``Tuner.run_trial`` calls ``self.hypermodel.fit(hp, model, ...)`` (keras-tuner 1.1+)
        # with the model ``self.hypermodel.build(hp)`` has just built
        methods=frozenset({"build", "fit"}),
        new_models=(("fit", 1),),
        clears_session=True,
        example=_example(
            "import keras_tuner\n" + _PREDICT + "\n"
            "class Search(keras_tuner.HyperModel):\n"
            "    def build(self, hp):\n        MODEL.predict(x)\n        return MODEL\n"
        ),
    ),
    Row(
        "KerasTuner",
        "tuner",
        "trial",
        Form.METHOD,
        tuple(f"{p}*.{t}" for p in ("keras_tuner", "kerastuner") for t in (*_TUNERS, "Tuner")),
        methods=frozenset({"run_trial"}),
        example=_example(
            "import keras_tuner\n" + _PREDICT + "\n"
            "class Search(keras_tuner.RandomSearch):\n"
            "    def run_trial(self, trial, *args, **kwargs):\n"
            "        return float(MODEL.predict(x)[0])\n"
        ),
    ),
    Row(
        "scikit-learn search",
        "build function",
        "fit",
        Form.ARGUMENT,
        tuple(
            f"{p}.{w}"
            for p in ("keras.wrappers.scikit_learn", "scikeras.wrappers")
            for w in ("KerasClassifier", "KerasRegressor")
        ),
        argument=(0, "build_fn"),
        with_call=_SEARCHES,
        example=_example(
            "from sklearn.model_selection import GridSearchCV\n"
            "from tensorflow.keras.wrappers.scikit_learn import KerasClassifier\n"
            + _PREDICT
            + "\ndef entry(units=8):\n    MODEL.predict(x)\n    return MODEL\n\n"
            "search = GridSearchCV(KerasClassifier(build_fn=entry), {'units': [8, 16]})\n"
        ),
    ),
    Row(
        "scikit-learn search",
        "build function",
        "fit",
        Form.ARGUMENT,
        ("scikeras.wrappers.KerasClassifier", "scikeras.wrappers.KerasRegressor"),
        argument=(0, "model"),
        with_call=_SEARCHES,
        example=_example(
            "from scikeras.wrappers import KerasRegressor\n"
            "from sklearn.model_selection import cross_val_score\n"
            + _PREDICT
            + "\ndef entry():\n    MODEL.predict(x)\n    return MODEL\n\n"
            "scores = cross_val_score(KerasRegressor(model=entry), x, y, cv=20)\n"
        ),
    ),
    # -- Keras callbacks: every batch, every epoch ----------------------------------------------
    Row(
        "Keras",
        "callback",
        "batch",
        Form.METHOD,
        (f"{keras.CALLBACKS}*",),
        methods=_BATCH_HOOKS,
        example=_example(
            _PREDICT + "\n"
            "class Monitor(tf.keras.callbacks.Callback):\n"
            "    def on_train_batch_end(self, batch, logs=None):\n"
            "        MODEL.predict(x)\n"
        ),
    ),
    Row(
        "Keras",
        "callback",
        "epoch",
        Form.METHOD,
        (f"{keras.CALLBACKS}*",),
        methods=_EPOCH_HOOKS,
        example=_example(
            _PREDICT + "\n"
            "class Monitor(tf.keras.callbacks.Callback):\n"
            "    def on_epoch_end(self, epoch, logs=None):\n"
            "        MODEL.predict(x)\n"
        ),
    ),
    *(
        Row(
            "Keras",
            "callback",
            unit,
            Form.ARGUMENT,
            ("keras.callbacks.LambdaCallback",),
            argument=(-1, hook),
            example=_example(
                _PREDICT + "\n"
                "def entry(number, logs):\n    MODEL.predict(x)\n\n"
                f"monitor = tf.keras.callbacks.LambdaCallback({hook}=entry)\n"
            ),
        )
        for hook, unit in (
            ("on_batch_begin", "batch"),
            ("on_batch_end", "batch"),
            ("on_epoch_begin", "epoch"),
            ("on_epoch_end", "epoch"),
        )
    ),
    # -- tf.data: what runs in Python per element ------------------------------------------------
    Row(
        "TensorFlow",
        "py_function",
        "element",
        Form.ARGUMENT,
        ("tensorflow.py_function", "tensorflow.numpy_function", "tensorflow.compat.v1.py_func"),
        argument=(0, "func"),
        example=_example(
            _PREDICT + "\n"
            "def entry(x):\n    return MODEL.predict(x)\n\n"
            "def classify(x):\n    return tf.py_function(entry, [x], tf.float32)\n\n"
            "ds = tf.data.Dataset.range(100).map(classify)\n"
        ),
    ),
    Row(
        "tf.data",
        "generator",
        "pass over the dataset",
        Form.ARGUMENT,
        ("tensorflow.data.Dataset.from_generator",),
        argument=(0, "generator"),
        example=_example(
            _PREDICT + "\n"
            "def entry():\n    yield MODEL.predict(x)\n\n"
            "ds = tf.data.Dataset.from_generator(entry, output_types=tf.float32)\n"
        ),
    ),
    # -- environments: every step, every episode ------------------------------------------------
    Row(
        "Gym",
        "environment",
        "step",
        Form.METHOD,
        tuple(f"{g}.{c}" for g in ("gym", "gymnasium") for c in ("Env", "core.Env", "*Wrapper")),
        methods=frozenset({"step"}),
        example=_example(
            "import gymnasium\n" + _PREDICT + "\n"
            "class Game(gymnasium.Env):\n"
            "    def step(self, action):\n        return MODEL.predict(x), 0.0, False, False, {}\n"
        ),
    ),
    Row(
        "Gym",
        "environment",
        "episode",
        Form.METHOD,
        tuple(f"{g}.{c}" for g in ("gym", "gymnasium") for c in ("Env", "core.Env", "*Wrapper")),
        methods=frozenset({"reset"}),
        example=_example(
            "import gym\n" + _PREDICT + "\n"
            "class Game(gym.Env):\n"
            "    def reset(self):\n        return MODEL.predict(x)\n"
        ),
    ),
    # -- threads and schedulers -----------------------------------------------------------------
    Row(
        "threading",
        "thread target",
        "thread",
        Form.ARGUMENT,
        ("threading.Thread",),
        argument=(1, "target"),
        once=True,
        example=_example(
            "import threading\n" + _PREDICT + "\n"
            "def entry(i):\n    MODEL.predict(x)\n\n"
            "for i in range(20):\n"
            "    threading.Thread(target=entry, args=(i,)).start()\n"
        ),
    ),
    Row(
        "sched",
        "action",
        "run",
        Form.ARGUMENT,
        ("*.enter", "*.enterabs"),
        argument=(2, "action"),
        package="sched",
        once=True,
        example=_example(
            "import sched\n" + _PREDICT + "scheduler = sched.scheduler()\n\n"
            "def entry():\n    MODEL.predict(x)\n    scheduler.enter(60, 1, entry)\n"
        ),
    ),
    Row(
        "schedule",
        "job",
        "run",
        Form.ARGUMENT,
        ("schedule.every()*.do",),
        argument=(0, "job_func"),
        example=_example(
            "import schedule\n" + _PREDICT + "\n"
            "def entry():\n    MODEL.predict(x)\n\n"
            "schedule.every(10).minutes.do(entry)\n"
        ),
    ),
    Row(
        "APScheduler",
        "job",
        "run",
        Form.ARGUMENT,
        ("*.add_job",),
        argument=(0, "func"),
        package="apscheduler",
        once=True,
        repeats_with=(1, "trigger"),
        example=_example(
            "from apscheduler.schedulers.blocking import BlockingScheduler\n"
            + _PREDICT
            + "scheduler = BlockingScheduler()\n\n"
            "def entry():\n    MODEL.predict(x)\n\n"
            'scheduler.add_job(entry, "interval", minutes=5)\n'
        ),
    ),
    # -- demo apps: every event ----------------------------------------------------------------
    Row(
        "Gradio",
        "interface function",
        "request",
        Form.ARGUMENT,
        ("gradio.Interface", "gradio.interface.Interface"),
        argument=(0, "fn"),
        example=_example(
            "import gradio as gr\n" + _PREDICT + "\n"
            "def entry(image):\n    return MODEL.predict(image)\n\n"
            'gr.Interface(fn=entry, inputs="image", outputs="label").launch()\n'
        ),
    ),
    Row(
        "Gradio",
        "event handler",
        "event",
        Form.ARGUMENT,
        tuple(f"*.{event}" for event in ("click", "change", "submit", "input", "select", "upload")),
        argument=(0, "fn"),
        package="gradio",
        example=_example(
            "import gradio as gr\n" + _PREDICT + "\n"
            "def entry(image):\n    return MODEL.predict(image)\n\n"
            "with gr.Blocks() as demo:\n"
            "    image = gr.Image()\n    label = gr.Label()\n"
            '    button = gr.Button("Classify")\n'
            "    button.click(fn=entry, inputs=image, outputs=label)\n"
        ),
    ),
    # -- scripts a framework reruns ------------------------------------------------------------
    Row(
        "Streamlit",
        "script",
        "rerun",
        Form.SCRIPT,
        ("streamlit",),
        example=_example(
            "import streamlit as st\n\n"
            "@st.cache_resource\n"
            'def load():\n    return tf.keras.models.load_model("model.keras")\n\n'
            'MODEL = load()\nx = st.file_uploader("image")\nMODEL.predict(x)\n'
        ),
    ),
    Row(
        "APScheduler",
        "job",
        "run",
        Form.DECORATOR,
        ("apscheduler.schedulers.*.scheduled_job",),
        example=_example(
            "from apscheduler.schedulers.background import BackgroundScheduler\n"
            + _PREDICT
            + "scheduler = BackgroundScheduler()\n\n"
            '@scheduler.scheduled_job("interval", minutes=5)\n'
            "def entry():\n    MODEL.predict(x)\n"
        ),
    ),
)

#: Decorators whose function runs its body once per distinct arguments (canonical names).
MEMOIZERS = frozenset(
    {
        "functools.lru_cache",
        "functools.cache",
        "streamlit.cache_resource",
        "streamlit.cache_data",
        "streamlit.cache",
        "streamlit.experimental_singleton",
        "streamlit.experimental_memo",
    }
)

#: The packages whose import makes a module a script the framework reruns (SCRIPT rows).
SCRIPT_PACKAGES = frozenset(
    name for row in ENTRY_POINTS if row.form is Form.SCRIPT for name in row.names
)

#: The library calls of ARGUMENT rows that the index would otherwise leave out of a body's
#: calls (TensorFlow and Keras calls are kept only when some fact needs them).
REGISTERING_CALLS = frozenset(
    name
    for row in ENTRY_POINTS
    if row.form is Form.ARGUMENT
    for name in row.names
    if name.startswith(("tensorflow.", "keras."))
)
