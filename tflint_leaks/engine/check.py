"""Lint one indexed file: decide from the ``ast`` index what the libcst pass must see, then run
it. libcst and the rule modules are imported only when a file needs the libcst pass, so a run in
which no file does (nothing uses TensorFlow, or every unit was left out) never loads them."""

from __future__ import annotations

import traceback

from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.diagnostics import Diagnostic
from tflint_leaks.engine.deep import MAX_NESTING, call_with_deep_stack
from tflint_leaks.engine.indexing import ParsedFile
from tflint_leaks.engine.relevance import blanked_source, combine, reached_source
from tflint_leaks.registry import INTERNAL_ERROR, RULES, SYNTAX_ERROR
from tflint_leaks.rulekit.options import RuleOptions


def is_relevant(parsed: ParsedFile, project: ProjectIndex) -> bool:
    """Whether any rule can fire: the file uses TensorFlow, imports project code that does, or
    is imported by project code that does (directly or through other project modules), which
    may hand it models and sessions (:meth:`~tflint_leaks.analysis.project.ProjectIndex.
    in_tensorflow_program`)."""
    return project.in_tensorflow_program(parsed.index)


def check_file(
    parsed: ParsedFile,
    project: ProjectIndex,
    options: RuleOptions,
    codes: frozenset[str],
    *,
    prefilter: bool = True,
) -> tuple[list[Diagnostic], list[str]]:
    """:func:`_check_file`, with a failure of the engine itself on this file (the prefilter's
    questions to the whole-program facts, say) reported as ``TFL002`` for this file, with its
    traceback, so that the run goes on with the other files."""
    try:
        return _check_file(parsed, project, options, codes, prefilter=prefilter)
    except Exception as error:  # any bug of ours: this file's TFL002, not a crash
        message = f"the analysis failed on this file: {type(error).__name__}: {error}"
        return [INTERNAL_ERROR.at(parsed.path, message)], [
            f"{parsed.path}\n{traceback.format_exc()}"
        ]


def _check_file(
    parsed: ParsedFile,
    project: ProjectIndex,
    options: RuleOptions,
    codes: frozenset[str],
    *,
    prefilter: bool = True,
) -> tuple[list[Diagnostic], list[str]]:
    """Lint one indexed file: its diagnostics and the tracebacks of rules that failed on it.
    Only the rules whose ``versions`` hold for the file's project and execution mode run.

    With ``prefilter`` (the default), functions and methods that no rule can fire in (enabled
    or not: what a rule finds does not depend on which others are selected) are left out of
    the libcst parse (:mod:`tflint_leaks.engine.relevance`); without it every
    line is parsed and walked, which tests use to prove the prefilter loses nothing."""
    if not is_relevant(parsed, project):
        return [], []
    graph = project.graph_mode(parsed.index, options.frameworks)
    world = project.world(parsed.index, options.frameworks)
    eagerly = project.functions_eagerly(parsed.index)
    applicable = [
        code
        for code in RULES
        if code.versions.applies(world, graph_mode=graph, functions_eagerly=eagerly)
    ]
    rules = [code for code in applicable if code.code in codes]
    text = reached_source(parsed.text, parsed.index)
    if prefilter:
        # What every rule would need, whichever are selected: a rule finds in a file what it
        # finds with the others (a tape that keeps a loop for TFL201 shows TFL403 the model
        # its call fits), so ``--select TFL403`` gives what ``--select ALL`` gives of TFL403.
        needs = combine(
            (code.triggers for code in applicable), parsed.index, project, parsed.statements
        )
        blanked = blanked_source(text, parsed.index, needs, parsed.statements)
        if blanked is None:
            return [], []
        text = blanked
    depth = parsed.index.units.depth
    if depth > MAX_NESTING:
        message = f"too deeply nested to parse ({depth} levels; the limit is {MAX_NESTING})"
        return [SYNTAX_ERROR.at(parsed.path, message)], []
    from tflint_leaks.engine.walker import lint_module

    return call_with_deep_stack(lambda: lint_module(parsed, text, project, options, rules))
