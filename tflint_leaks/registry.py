"""Every code the tool can emit, in one table: the rules, the engine's own codes, the runtime's.

Each line says what the code is called, what it reports in one sentence, how it is shown, whether
a rule is on by default and has a fix, what a rule needs a unit to mention before the libcst pass
is worth running (:class:`~tflint_leaks.analysis.triggers.Triggers`), how ``confirm`` judges its
findings, and where its implementation lives. The command line (``rule``, ``rules``), the
configuration (selectors), ``noqa`` validation, every output format, the docs generator and the
runtime verdicts all read this table, so no code is known to one part of the tool and unknown to
another.

A rule's ``versions`` (:class:`~tflint_leaks.frameworks.Versions`) are the TensorFlow and Keras
versions and the execution mode its reason holds in; it does not run on files of other projects.

The table describes rules without importing their modules: a rule class (and libcst) is loaded
only when a file needs the libcst pass. Adding a rule is its module under ``tflint_leaks/rules/``
plus its line here (see ``DEVELOPING.md``).
"""

from __future__ import annotations

import enum
import importlib
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from tflint_leaks import DOCS_URL
from tflint_leaks.analysis import keras
from tflint_leaks.analysis.triggers import Triggers, identifiers
from tflint_leaks.diagnostics import Applicability, Diagnostic, Location, Severity
from tflint_leaks.frameworks import Versions

if TYPE_CHECKING:
    from tflint_leaks.rulekit.rule import Rule


class Kind(str, enum.Enum):
    """Who emits a code: a rule, the engine itself, or the runtime mode."""

    RULE = "rule"
    ENGINE = "engine"
    RUNTIME = "runtime"


class Judgement(str, enum.Enum):
    """How ``tflint-leaks confirm`` judges a rule's findings (see ``docs/runtime.md``)."""

    @property
    def retracing(self) -> bool:
        """Judged on traces (rather than on sampled counters)."""
        return self in {Judgement.TRACES, Judgement.NEW_FUNCTIONS, Judgement.NEW_INSTANCES}

    #: Distinct traces of the ``tf.function`` the finding names, and what changed between them.
    TRACES = "traces"
    #: Traces of the ``tf.function`` objects created at the finding (a function re-created).
    NEW_FUNCTIONS = "new-functions"
    #: Traces counted per ``tf.function`` object at the finding's calls (new instances).
    NEW_INSTANCES = "new-instances"
    #: The Python body ran on fewer calls than the function was called (it only ran tracing).
    SIDE_EFFECT = "side-effect"
    #: Like ``SIDE_EFFECT`` for a read: the other calls used the value read while tracing (a
    #: function that traced on every call read the current value each time).
    FROZEN_READ = "frozen-read"
    #: Exact counters (and memory) sampled at the finding's loop grow per iteration.
    GROWTH = "growth"
    #: Like ``GROWTH``, on the tensors that tapes hold.
    TAPES = "tapes"
    #: What a persistent tape still holds when the work after its last use runs, per run.
    TAPE_AFTER_GRADIENT = "tape-after-gradient"
    #: What a recording tape adds while the finding's statement runs inside its block.
    TAPE_RECORDS = "tape-records"
    #: What tapes from earlier iterations hold at the start of each iteration of the loop.
    TAPES_KEPT = "tapes-kept"
    #: The bytes of graph constants in each trace of the ``tf.function`` the finding is in.
    CONSTANTS = "constants"
    #: Like ``GROWTH``, on the live eager tensors and their memory.
    TENSORS = "tensors"
    #: Like ``GROWTH``, on the nodes of the default graph (TF1 graph mode).
    GRAPH_NODES = "graph-nodes"


@dataclass(frozen=True)
class Code:
    code: str
    name: str
    #: One line, no final period: ``rules``, SARIF's short description, the README table.
    summary: str
    kind: Kind = Kind.RULE
    severity: Severity = Severity.WARNING
    #: Opinionated rules are off unless selected explicitly.
    default_enabled: bool = True
    #: The fix a rule offers, if any; its docs' *Fix safety* section explains it.
    fix: Applicability | None = None
    judgement: Judgement | None = None
    #: What a unit must mention for the rule to fire in it; None: the rule needs every unit.
    triggers: Triggers | None = None
    #: Where the rule's reason holds; the rule does not run on files of other projects.
    versions: Versions = field(default_factory=Versions)
    #: ``module.Class`` under ``tflint_leaks.rules`` (rules only).
    implementation: str = ""
    #: The documentation (Markdown) of a code that is not a rule (a rule's is its docstring).
    text: str = ""
    #: ``select``, ``ignore`` and ``per-file-ignores`` apply to it (every rule; TFL003).
    selectable: bool = True

    @property
    def is_rule(self) -> bool:
        return self.kind is Kind.RULE

    @property
    def url(self) -> str:
        return f"{DOCS_URL}/rules/{self.code}.md"

    def load(self) -> type[Rule]:
        """The rule class (imports the rule's module, and libcst, on first use)."""
        return _load(self.implementation)

    def at(self, path: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
        """A finding of this code at one position (the engine's and the runtime's own)."""
        start = Location(max(line, 1), max(column, 1))
        return Diagnostic(self.code, self.name, message, self.severity, path, start, start)

    def docs(self) -> str:
        """The documentation (Markdown): a rule's docstring, or the text of another code."""
        import inspect

        if self.is_rule:
            return inspect.cleandoc(self.load().__doc__ or "")
        return inspect.cleandoc(self.text)


@cache
def _load(implementation: str) -> type[Rule]:
    module, _, name = implementation.rpartition(".")
    rule: type[Rule] = getattr(importlib.import_module(f"tflint_leaks.rules.{module}"), name)
    return rule


_CALLS_TF_FUNCTION = Triggers(loop_names=frozenset({"function"}), project_loop_names=True)
_TAPES = Triggers(names=frozenset({"GradientTape"}))
_TRACED = Triggers(names=frozenset({"function"}), traced=True)
#: Rules about eager memory: quiet in graph mode.
_EAGER = Versions(eager_only=True)
#: Rules about what tracing a `tf.function` does: quiet where every one runs eagerly.
_TRACES = Versions(traced_only=True)

CODES: tuple[Code, ...] = (
    Code(
        "TFL001",
        "syntax-error",
        "The file cannot be read or parsed as Python; it is skipped",
        kind=Kind.ENGINE,
        severity=Severity.ERROR,
        selectable=False,
        text="""
        ## What it does
        Reports a file that cannot be linted: it does not parse as Python (the message gives the
        parser's reason and position), it cannot be decoded (a NUL byte, an undeclared
        non-UTF-8 encoding, an unknown encoding), it is nested too deeply to parse, or it is a
        notebook that is not valid nbformat 4 JSON. In a notebook, a cell IPython would not run
        (read as IPython reads it: magics, shell escapes and help syntax are fine) is reported
        with its cell number and its position in the cell, and skipped; the other cells are
        still linted. A `.py` file whose only syntax errors are IPython lines (a notebook
        exported as a script) is not reported: it is linted as IPython runs it, and a warning
        names the IPython lines.

        ## Why is this bad?
        Nothing in the file is checked, so every finding it would have had is missing. The rest
        of the run goes on: one broken file never hides the findings of the others.

        This code cannot be deselected or suppressed with `noqa`: a file the linter could not
        read is always worth knowing about.

        ## Example
        ```python
        def train(:
            ...
        ```

        ## Use instead
        Fix the syntax error (or the encoding declaration) so that Python itself can run the
        file.

        ## References
        - [PEP 263: source code encodings](https://peps.python.org/pep-0263/)
        """,
    ),
    Code(
        "TFL002",
        "internal-error",
        "A rule failed on this file; the other rules still ran",
        kind=Kind.ENGINE,
        severity=Severity.ERROR,
        selectable=False,
        text="""
        ## What it does
        Reports that a rule raised an exception on this file (a bug in tflint-leaks), naming the
        rule and the error. The rule is switched off for the rest of the file; every other rule
        still runs, and the run exits with code 2. It also reports a file on which two worker
        processes (`--jobs`) died, one after the other (killed, a segfault): the other files
        are still linted.

        ## Why is this bad?
        The failing rule's findings for this file are missing. `--show-traceback` prints the
        traceback to include in a bug report.

        This code cannot be deselected or suppressed with `noqa`.

        ## Example
        ```console
        $ tflint-leaks train.py --show-traceback
        train.py:1:1: TFL002 rule TFL101 (python-scalar-argument) failed on this file: ...
        ```

        ## Use instead
        Report the traceback; meanwhile `--ignore` the failing rule for that file with
        `per-file-ignores` if it blocks CI.

        ## References
        - [tflint-leaks issues](https://github.com/tflint-leaks/tflint-leaks/issues)
        """,
    ),
    Code(
        "TFL003",
        "unused-noqa",
        "A `noqa` code suppresses no finding",
        kind=Kind.ENGINE,
        fix=Applicability.SAFE,
        text="""
        ## What it does
        Reports a code in a `noqa` directive that suppresses nothing: `# noqa: TFL101` on a
        line with no `TFL101` finding, or `# tflint-leaks: noqa: TFL105` in a file with no
        `TFL105` finding. Only codes of rules that ran on the file are judged:

        - a code of a rule that is not selected, is ignored, or is turned off for the file by
          `per-file-ignores` is left alone (a run with `--select TFL1` cannot tell whether a
          `# noqa: TFL401` is still needed, and its fix would delete a suppression that a full
          run needs; Ruff's RUF100 reports such codes as "non-enabled", tflint-leaks does not);
        - a bare `# noqa` is left alone (flake8, Ruff and others read it too), and so is the
          whole-file `# tflint-leaks: noqa`;
        - codes of other tools (`# noqa: E501`) are left alone, and an unknown `TFL` code gets
          its own warning instead.

        A finding suppressed by both a line's `noqa` and a file-level one uses both: removing
        either alone keeps it suppressed, but removing both would bring it back.

        `--add-noqa` never adds this code; `--fix` removes the unused codes. This code is
        selected, ignored and suppressed like a rule's (`--ignore TFL003`,
        `# noqa: TFL101, TFL003` keeps a code that is not used today).

        ## Why is this bad?
        A suppression that suppresses nothing hides the next real finding on that line, and a
        baseline made with `--add-noqa` goes stale without anyone noticing as findings are
        fixed.

        ## Example
        ```python
        import tensorflow as tf

        @tf.function
        def train_step(x, step):
            ...

        for step in range(1000):
            train_step(x, tf.constant(step))  # noqa: TFL101
        ```

        ## Use instead
        ```python
        import tensorflow as tf

        @tf.function
        def train_step(x, step):
            ...

        for step in range(1000):
            train_step(x, tf.constant(step))
        ```

        ## Fix safety
        The fix is safe: it removes the unused codes from the directive (`# noqa: E501,
        TFL101` becomes `# noqa: E501`), or the whole directive when no code is left (the
        comment, or its line when the comment is alone on it; other text in the comment
        stays). No finding that this run reports or suppresses changes.

        ## References
        - [Ruff: unused-noqa (RUF100)](https://docs.astral.sh/ruff/rules/unused-noqa/)
        """,
    ),
    Code(
        "TFL101",
        "python-scalar-argument",
        "A Python number that changes every iteration is passed to a `tf.function`",
        fix=Applicability.UNSAFE,
        judgement=Judgement.TRACES,
        triggers=_CALLS_TF_FUNCTION,
        versions=_TRACES,
        implementation="tfl101_python_scalar_argument.PythonScalarArgument",
    ),
    Code(
        "TFL102",
        "python-object-argument",
        "A Python object that is new or different every iteration is passed to a `tf.function`",
        judgement=Judgement.TRACES,
        triggers=_CALLS_TF_FUNCTION,
        versions=_TRACES,
        implementation="tfl102_python_object_argument.PythonObjectArgument",
    ),
    Code(
        "TFL103",
        "function-recreated",
        "A new `tf.function` is created every iteration or every call",
        judgement=Judgement.NEW_FUNCTIONS,
        triggers=Triggers(names=frozenset({"function"}), project_loop_names=True),
        versions=_TRACES,
        implementation="tfl103_function_recreated.FunctionRecreated",
    ),
    Code(
        "TFL104",
        "function-method-per-instance",
        "A class with `tf.function` methods is instantiated and used in every iteration",
        judgement=Judgement.NEW_INSTANCES,
        triggers=Triggers(project_loop_names=True),
        versions=_TRACES,
        implementation="tfl104_function_method_per_instance.FunctionMethodPerInstance",
    ),
    Code(
        "TFL105",
        "varying-shape-argument",
        "A tensor whose shape changes every iteration is passed to a `tf.function`",
        fix=Applicability.SAFE,
        judgement=Judgement.TRACES,
        triggers=_CALLS_TF_FUNCTION,
        versions=_TRACES,
        implementation="tfl105_varying_shape_argument.VaryingShapeArgument",
    ),
    Code(
        "TFL201",
        "persistent-tape-not-released",
        "A persistent `GradientTape` created per call or iteration is never deleted",
        fix=Applicability.UNSAFE,
        judgement=Judgement.TAPE_AFTER_GRADIENT,
        triggers=_TAPES,
        versions=_EAGER,
        implementation="tfl201_persistent_tape_not_released.PersistentTapeNotReleased",
    ),
    Code(
        "TFL202",
        "gradient-inside-persistent-tape",
        "`gradient` or `apply_gradients` runs inside the block of a tape still recording it",
        judgement=Judgement.TAPE_RECORDS,
        triggers=_TAPES,
        versions=_EAGER,
        implementation="tfl202_gradient_inside_persistent_tape.GradientInsidePersistentTape",
    ),
    Code(
        "TFL203",
        "tape-spans-loop",
        "A gradient tape's `with` block contains a loop over a dataset",
        judgement=Judgement.TAPES,
        triggers=_TAPES,
        versions=_EAGER,
        implementation="tfl203_tape_spans_loop.TapeSpansLoop",
    ),
    Code(
        "TFL204",
        "tape-kept-across-iterations",
        "A gradient tape is stored where it outlives the loop iteration",
        judgement=Judgement.TAPES_KEPT,
        triggers=_TAPES,
        versions=_EAGER,
        implementation="tfl204_tape_kept_across_iterations.TapeKeptAcrossIterations",
    ),
    Code(
        "TFL301",
        "python-container-mutation",
        "A Python container that outlives a `tf.function` call is mutated inside it",
        judgement=Judgement.SIDE_EFFECT,
        triggers=_TRACED,
        versions=_TRACES,
        implementation="tfl301_python_container_mutation.PythonContainerMutation",
    ),
    Code(
        "TFL302",
        "variable-created-per-call",
        "`tf.Variable` is created inside a `tf.function` without a first-call guard",
        judgement=Judgement.SIDE_EFFECT,
        triggers=_TRACED,
        versions=_TRACES,
        implementation="tfl302_variable_created_per_call.VariableCreatedPerCall",
    ),
    Code(
        "TFL303",
        "python-side-effect",
        "Python state or an impure Python call inside a `tf.function`",
        judgement=Judgement.SIDE_EFFECT,
        triggers=_TRACED,
        versions=_TRACES,
        implementation="tfl303_python_side_effect.PythonSideEffect",
    ),
    Code(
        "TFL304",
        "print-in-function",
        "Builtin `print` inside a `tf.function` runs only while tracing",
        default_enabled=False,
        judgement=Judgement.SIDE_EFFECT,
        triggers=_TRACED,
        versions=_TRACES,
        implementation="tfl304_print_in_function.PrintInFunction",
    ),
    Code(
        "TFL305",
        "python-state-frozen",
        "A `tf.function` reads Python state that is assigned again after it traces",
        judgement=Judgement.FROZEN_READ,
        triggers=_TRACED,
        versions=_TRACES,
        implementation="tfl305_python_state_frozen.PythonStateFrozen",
    ),
    Code(
        "TFL401",
        "model-built-in-loop",
        "A Keras model is built every iteration of a loop without `clear_session()`",
        fix=Applicability.UNSAFE,
        judgement=Judgement.GROWTH,
        triggers=Triggers(
            loop_names=identifiers(keras.MODEL_CLASSES | keras.MODEL_LOADERS)
            | {"applications", keras.FROM_PRETRAINED}
            # what a passed factory makes is a model by its use (keras.model_use)
            | keras.MODEL_ONLY_METHODS
            | {"fit"},
            project_loop_names=True,
        ),
        implementation="tfl401_model_built_in_loop.ModelBuiltInLoop",
    ),
    Code(
        "TFL402",
        "predict-in-loop",
        "`model.predict` is called every iteration of a loop",
        judgement=Judgement.GROWTH,
        triggers=Triggers(loop_names=keras.PREDICT_METHODS, project_loop_names=True),
        # Multi-backend Keras (before 2.4) runs one `K.function` per model, made once: no
        # pipeline per call.
        versions=Versions(keras=">=2.4", eager_only=True, keras_on_tensorflow=True),
        implementation="tfl402_predict_in_loop.PredictInLoop",
    ),
    Code(
        "TFL403",
        "fit-in-loop",
        "A model built every iteration is also `fit` every iteration",
        judgement=Judgement.GROWTH,
        triggers=Triggers(loop_names=frozenset({"fit"}), project_loop_names=True),
        # tensorflow/tensorflow#61791: the gradient registry keeps every fit's graphs (2.11 on),
        # a `tf.keras` fit's; multi-backend Keras (before 2.4) never ran on TensorFlow 2.11.
        versions=Versions(
            tensorflow=">=2.11", keras=">=2.4", eager_only=True, keras_on_tensorflow=True
        ),
        implementation="tfl403_fit_in_loop.FitInLoop",
    ),
    Code(
        "TFL404",
        "dataset-rebuilt-in-loop",
        "A `tf.data` pipeline is constructed every iteration of a training loop",
        judgement=Judgement.GROWTH,
        # `Dataset.range` and `Dataset.zip` are reached through the class: a loop must mention
        # `Dataset` (or an alias of it), not the builtin `range` or `zip` most loops use.
        triggers=Triggers(
            loop_names=identifiers(
                s for s in keras.DATASET_SOURCES if not s.startswith("tensorflow.data.Dataset.")
            )
            | {"Dataset"},
            project_loop_names=True,
        ),
        implementation="tfl404_dataset_rebuilt_in_loop.DatasetRebuiltInLoop",
    ),
    Code(
        "TFL405",
        "fit-per-step",
        "A model's `fit` of one epoch runs per step, in a loop inside another repetition",
        judgement=Judgement.GROWTH,
        triggers=Triggers(loop_names=frozenset({"fit"}), project_loop_names=True),
        # Multi-backend Keras (before 2.4) runs one `K.function` per model, made once: no
        # pipeline per call.
        versions=Versions(keras=">=2.4", eager_only=True, keras_on_tensorflow=True),
        implementation="tfl405_fit_per_step.FitPerStep",
    ),
    Code(
        "TFL501",
        "array-captured-as-constant",
        "A `tf.function` reads a NumPy array or a large Python list from an enclosing scope",
        fix=Applicability.UNSAFE,
        judgement=Judgement.CONSTANTS,
        triggers=_TRACED,
        versions=_TRACES,
        implementation="tfl501_array_captured_as_constant.ArrayCapturedAsConstant",
    ),
    Code(
        "TFL502",
        "step-tensors-kept",
        "A training loop keeps every step's gradients, model outputs or new variables",
        judgement=Judgement.TENSORS,
        triggers=Triggers(loop_names=keras.TRAINING_STEPS),
        versions=_EAGER,
        implementation="tfl502_step_tensors_kept.StepTensorsKept",
    ),
    Code(
        "TFL503",
        "graph-grows-in-loop",
        "Graph-mode code adds ops to the default graph every iteration of a loop that runs it",
        judgement=Judgement.GRAPH_NODES,
        triggers=Triggers(
            loop_names=frozenset({"run", "partial_run", "eval", "function"})
            | keras.TRAINING_METHODS,
            project_graph_runners=True,
        ),
        implementation="tfl503_graph_grows_in_loop.GraphGrowsInLoop",
    ),
    Code(
        "TFL900",
        "runtime-retracing",
        "A `tf.function` retraced on most calls at runtime where no static finding points",
        kind=Kind.RUNTIME,
        text="""
        ## What it does
        Reported only by `tflint-leaks confirm`: a `tf.function` of your code that traced again
        on most of its calls while the target ran, where no static finding names it. The
        finding sits on the function's definition; its confirmation names what changed between
        traces (an argument's Python value, shape or dtype, a new `tf.function` object).

        ## Why is this bad?
        Every trace builds and keeps a new graph: the program spends its time tracing and its
        memory grows with each one. The static rules missed the cause (it may be spread over
        code they cannot see), but the run measured it.

        ## Example
        ```python
        @tf.function
        def step(x, scale):
            return x * scale

        for batch, scale in schedule():     # `scale` is a new Python float each time
            step(batch, scale)
        ```

        ## Use instead
        Pass tensors instead of Python values (`tf.constant(scale)`), give the function an
        `input_signature`, or `reduce_retracing=True` for shapes.

        ## References
        - [tf.function: rules of tracing](https://www.tensorflow.org/guide/function#rules_of_tracing)
        - [tflint-leaks confirm](../runtime.md)
        """,
    ),
)

BY_CODE: dict[str, Code] = {code.code: code for code in CODES}
BY_NAME: dict[str, Code] = {code.name: code for code in CODES}
#: The rules, in code order.
RULES: tuple[Code, ...] = tuple(code for code in CODES if code.is_rule)

SYNTAX_ERROR = BY_CODE["TFL001"]
INTERNAL_ERROR = BY_CODE["TFL002"]
RUNTIME_RETRACING = BY_CODE["TFL900"]
UNUSED_NOQA = BY_CODE["TFL003"]
#: Codes the engine reports itself that cannot be deselected or suppressed.
ENGINE_CODES = frozenset(
    code.code for code in CODES if code.kind is Kind.ENGINE and not code.selectable
)
#: Codes ``--add-noqa`` and the editor's quick fix never write a ``noqa`` for: the engine's
#: errors, and an unused ``noqa`` (its remedy is its fix).
NEVER_NOQA = ENGINE_CODES | {UNUSED_NOQA.code}
#: Codes that ``select``, ``ignore`` and ``per-file-ignores`` apply to, in code order.
SELECTABLE: tuple[Code, ...] = tuple(
    code for code in CODES if code.kind is not Kind.RUNTIME and code.selectable
)


def find(code_or_name: str) -> Code | None:
    """A code by its code (any case) or its kebab-case name."""
    return BY_CODE.get(code_or_name.upper()) or BY_NAME.get(code_or_name)
