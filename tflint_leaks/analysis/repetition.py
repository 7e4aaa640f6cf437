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
- ``VIEWS``: a Django view, a top-level function of a ``views`` module taking ``request``.

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
  registering call does (inside a loop of its own function, or a ``sched`` action that
  schedules itself again).

Not seen: a registration made inside a lambda (``ds.map(lambda x: tf.py_function(f, [x],
tf.float32))``: the index keeps no lambda bodies; name the wrapper), and a function wrapped
in a lambda (``study.optimize(lambda t: objective(t, data))``; ``functools.partial`` is
followed).

Nothing here runs or imports project code: the table is matched against canonical names
(:mod:`.names`), the project index and the solver's values.
"""

from __future__ import annotations

import ast
import enum
import weakref
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING

from tflint_leaks.analysis import keras
from tflint_leaks.analysis.lattice import FunctionRef, Kind
from tflint_leaks.analysis.names import resolve_dotted
from tflint_leaks.analysis.symbolic import Expr, Op
from tflint_leaks.source import SourceError, read_source

if TYPE_CHECKING:
    from tflint_leaks.analysis.facts import Body, Span
    from tflint_leaks.analysis.index import ClassFacts, ModuleIndex
    from tflint_leaks.analysis.inference import Where
    from tflint_leaks.analysis.program import Program
    from tflint_leaks.analysis.project import ProjectIndex


class Form(enum.Enum):
    """How the project hands a function to the framework."""

    DECORATOR = "decorator"
    METHOD = "method"
    ARGUMENT = "argument"
    VIEWS = "views"


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
    #: ARGUMENT on an object the index cannot type (``study.optimize``): the registering
    #: module must import this package.
    package: str = ""
    #: ARGUMENT: the registering module must also call one of these (a scikit-learn search
    #: over a Keras wrapper).
    with_call: tuple[str, ...] = ()
    #: The framework calls ``clear_session()`` before each call itself.
    clears_session: bool = False
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


@dataclass(frozen=True)
class EntryPoint:
    """A function a framework calls many times."""

    row: Row
    #: How many calls, when the registration says (``n_trials=100``).
    count: int | None = None
    #: Where the framework is told: the registering call or the class (None with
    #: ``decorator``), in ``path``.
    place: Span | None = None
    path: str | None = None
    #: DECORATOR: the index of the decorator among the function's.
    decorator: int | None = None

    @property
    def framework(self) -> str:
        return self.row.framework

    @property
    def unit(self) -> str:
        return self.row.unit

    @property
    def what(self) -> str:
        return self.row.what

    @property
    def clears_session(self) -> bool:
        return self.row.clears_session


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
        example=_example(
            "import optuna\n" + _PREDICT + "\n"
            "def entry(trial):\n    return float(MODEL.predict(x)[0])\n\n"
            "study = optuna.create_study()\n"
            "study.optimize(entry, n_trials=100)\n"
        ),
    ),
    Row(
        "Ray Tune",
        "trainable",
        "trial",
        Form.ARGUMENT,
        ("ray.tune.run", "ray.tune.Tuner", "ray.tune.tuner.Tuner"),
        argument=(0, "trainable"),
        example=_example(
            "from ray import tune\n" + _PREDICT + "\n"
            "def entry(config):\n    return {'score': float(MODEL.predict(x)[0])}\n\n"
            "tune.run(entry, num_samples=20)\n"
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
        methods=frozenset({"build"}),
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

#: The library calls of ARGUMENT rows that the index would otherwise leave out of a body's
#: calls (TensorFlow and Keras calls are kept only when some fact needs them).
REGISTERING_CALLS = frozenset(
    name
    for row in ENTRY_POINTS
    if row.form is Form.ARGUMENT
    for name in row.names
    if name.startswith(("tensorflow.", "keras."))
)


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in patterns)


# -- the function the walker is in ---------------------------------------------------------------


def entry_point(program: Program, module: ModuleIndex, qualname: str) -> EntryPoint | None:
    """The framework that calls the project function ``qualname`` of ``module`` many times,
    if one does: by its decorators, its class's bases, its module (a Django view), or a call
    anywhere in the project that hands it to a framework."""
    function = module.functions.get(qualname)
    if function is None:
        return None
    project = program.project
    for index, decorator in enumerate(function.decorators):
        callee = decorator.func if decorator.op is Op.CALL else decorator
        if callee.op is not Op.REF:
            continue
        name = canonical_name(callee.text, module, project)
        for row in ENTRY_POINTS:
            if row.form is Form.DECORATOR and _matches(name, row.names):
                return EntryPoint(row, decorator=index)
    owner, _, method = qualname.rpartition(".")
    klass = module.classes.get(owner) if owner else None
    if klass is not None:
        found = _method_entry(project, module, klass, method)
        if found is not None:
            return found
    if (
        not owner
        and function.params[:1] == ("request",)
        and (Path(module.path).name == "views.py" or Path(module.path).parent.name == "views")
    ):
        return EntryPoint(next(r for r in ENTRY_POINTS if r.form is Form.VIEWS))
    return registrations(program).get(FunctionRef(module.path, qualname))


def entry_functions(program: Program, module: ModuleIndex) -> frozenset[str]:
    """The qualified names of ``module``'s functions and methods that are entry points."""
    return frozenset(q for q in module.functions if entry_point(program, module, q) is not None)


def _method_entry(
    project: ProjectIndex, module: ModuleIndex, klass: ClassFacts, method: str
) -> EntryPoint | None:
    bases = [base for _, owner in project.mro(module, klass) for base in owner.bases]
    for row in ENTRY_POINTS:
        if row.form is not Form.METHOD:
            continue
        public = "*" in row.methods and not method.startswith("_")
        if (public or method in row.methods) and any(_matches(b, row.names) for b in bases):
            return EntryPoint(row, place=klass.span, path=module.path)
    return None


def canonical_name(text: str, module: ModuleIndex, project: ProjectIndex) -> str:
    """The canonical name of a dotted expression of ``module``, where a name bound at module
    level to a call stands for an instance of what it calls (``app = Flask(__name__)``:
    ``app.route`` is ``flask.Flask.route``), through the project's imports."""
    for _ in range(4):  # project modules re-exporting an instance; deeper is not followed
        head, dot, rest = text.partition(".")
        if head in module.imports:
            found = project.global_of(head, module)
            if found is None:
                break
            module, text = found.module, ".".join([found.name, *found.attributes]) + dot + rest
            continue
        value = next((a.value for a in module.body.assigns if a.target == head), None)
        if value is None or value.op is not Op.CALL or value.func.op is not Op.REF:
            break
        text = value.func.text + dot + rest
    return resolve_dotted(text, module.imports) or text


# -- functions handed to a framework -------------------------------------------------------------


_REGISTRATIONS: weakref.WeakKeyDictionary[Program, dict[FunctionRef, EntryPoint]] = (
    weakref.WeakKeyDictionary()
)


def registrations(program: Program) -> dict[FunctionRef, EntryPoint]:
    """Every project function that some call of the project hands to a framework (an
    ARGUMENT row), with the first such call; computed once per program."""
    found = _REGISTRATIONS.get(program)
    if found is None:
        found = _REGISTRATIONS[program] = _registrations(program)
    return found


def _registrations(program: Program) -> dict[FunctionRef, EntryPoint]:
    inference = program.inference
    table = inference.calls_named()
    rows: dict[str, list[Row]] = {}
    for row in ENTRY_POINTS:
        if row.form is Form.ARGUMENT:
            for pattern in row.names:
                rows.setdefault(pattern.rpartition(".")[2], []).append(row)
    found: dict[FunctionRef, EntryPoint] = {}
    looped: dict[str, frozenset[tuple[int, int]]] = {}
    for last, candidates in sorted(rows.items()):
        for site in table.get(last, ()):
            call, where = inference.site(site)
            name = _callee(call.func, where.module, program.project)
            for row in candidates:
                if name is None or not _matches(name, row.names):
                    continue
                if not _registers(row, call, where, program.project):
                    continue
                span = where.body.calls[site[2]].span
                for function in _handed(program, call, row, where):
                    if function in found:
                        continue
                    in_loop = _in_loop(where.module.path, span, looped)
                    if row.once and not (in_loop or _repeats(row, call, where, function)):
                        continue
                    # Registered again by a loop: the count per registration is not the total.
                    count = None if in_loop else _count(program, call, row, where)
                    found[function] = EntryPoint(row, count, span, where.module.path)
    return found


def _callee(func: Expr, module: ModuleIndex, project: ProjectIndex) -> str | None:
    """A callee's canonical name; a chain of calls reads ``schedule.every().minutes.do``."""
    parts: list[str] = []
    while func.op is not Op.REF:
        if func.op not in {Op.ATTR, Op.CALL}:
            return None
        parts.append("()" if func.op is Op.CALL else f".{func.text}")
        func = func.parts[0]
    return canonical_name(func.text, module, project) + "".join(reversed(parts))


def _registers(row: Row, call: Expr, where: Where, project: ProjectIndex) -> bool:
    module = where.module
    if row.package and not _made_by(row.package, call, where, project):
        return False
    if row.with_call:
        return any(
            site.call.func.op is Op.REF
            and _matches(resolve_dotted(site.call.func.text, module.imports) or "", row.with_call)
            for body in _bodies(module)
            for site in body.calls
        )
    return True


def _made_by(package: str, call: Expr, where: Where, project: ProjectIndex) -> bool:
    """A method call (``study.optimize(...)``) whose receiver is made by ``package``: bound,
    in the function, in its class's ``self.x = ...`` or at module level, to a call of it
    (``study = optuna.create_study()``), or such a call itself. A receiver of unknown origin,
    or a project object (a wrapper with its own ``optimize``), is not the framework's."""
    method = call.method
    if method is None:
        return False
    receiver: Expr | None = method[0]
    for _ in range(4):  # ``app.router`` is bound through ``app``; deeper is not followed
        if receiver is None:
            return False
        if receiver.op is Op.CALL:
            made = _callee(receiver.func, where.module, project) or ""
            return made == package or made.startswith(f"{package}.")
        if receiver.op is not Op.REF:
            return False
        receiver = _binding(receiver.text, where)
    return False


def _binding(text: str, where: Where) -> Expr | None:
    """What the dotted name ``text`` (its head, or ``self.x``) is assigned where it is read."""
    head, _, rest = text.partition(".")
    name = f"self.{rest.partition('.')[0]}" if head == "self" else head
    bodies = [where.body]
    klass = where.klass
    if name.startswith("self.") and klass is not None:
        bodies = [
            function.body
            for method in klass.methods
            if (function := where.module.functions.get(f"{klass.name}.{method}")) is not None
        ]
    elif where.function is not None:
        bodies.append(where.module.body)
    return next((a.value for body in bodies for a in body.assigns if a.target == name), None)


def _bodies(module: ModuleIndex) -> list[Body]:
    return [module.body, *(f.body for f in module.functions.values())]


def _handed(program: Program, call: Expr, row: Row, where: Where) -> list[FunctionRef]:
    """The project functions a registering call hands over (through ``functools.partial``)."""
    position, keyword = row.argument
    argument = call.keyword(keyword) if position < 0 else call.argument(position, keyword)
    if argument is None:
        return []
    if argument.op is Op.CALL and argument.func.op is Op.REF:
        wrapper = resolve_dotted(argument.func.text, where.module.imports)
        if wrapper == "functools.partial" and argument.positional:
            argument = argument.positional[0]
    value = program.value(argument, where)
    return sorted(a.ref for a in value.atoms_of(Kind.FUNCTION) if isinstance(a.ref, FunctionRef))


def _count(program: Program, call: Expr, row: Row, where: Where) -> int | None:
    total = 1
    for position, keyword, default in row.count:
        argument = call.keyword(keyword) if position < 0 else call.argument(position, keyword)
        if argument is None:
            if default is None:
                return None
            total *= default
            continue
        ints = program.value(argument, where).ints
        if not ints:
            return None
        total *= max(ints)
    return total if row.count else None


def _repeats(row: Row, call: Expr, where: Where, function: FunctionRef) -> bool:
    """A ``once`` registration outside a loop runs its function more than once: it passes the
    argument that makes it repeat, or is made by the function itself (a ``sched`` action
    scheduling itself again)."""
    if row.repeats_with is not None:
        position, keyword = row.repeats_with
        if call.argument(position, keyword) is not None:
            return True
    return function == FunctionRef(where.module.path, where.qualname)


def _in_loop(path: str, span: Span, looped: dict[str, frozenset[tuple[int, int]]]) -> bool:
    """The registering call at ``span`` is repeated by a loop of its own function."""
    if path not in looped:
        looped[path] = _calls_in_loops(path)
    return (span.line, span.column) in looped[path]


def _calls_in_loops(path: str) -> frozenset[tuple[int, int]]:
    """The positions (line, 1-based column) of the calls of a Python file that a loop of their
    own scope repeats (read with ``ast``; a notebook or an unreadable file has none)."""
    if not path.endswith(".py"):
        return frozenset()
    try:
        tree = ast.parse(read_source(Path(path)))
    except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    found: set[tuple[int, int]] = set()
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, looped = stack.pop()
        if isinstance(node, ast.Call) and looped:
            found.add((node.lineno, node.col_offset + 1))
        scope = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        inner = False if scope else looped or isinstance(node, _LOOPS)
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return frozenset(found)


_LOOPS = (
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
