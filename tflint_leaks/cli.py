"""The ``tflint-leaks`` command.

``tflint-leaks [check] PATHS...`` lints (``check`` is the default command); ``rule CODE`` prints a
rule's docs; ``rules`` lists them; ``server`` runs the editor (LSP) server. Exit codes: 0 clean,
1 findings, 2 usage, configuration or internal error. :func:`main` takes ``argv`` and returns the
exit code, so tests call it directly.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

import click

from tflint_leaks import __version__
from tflint_leaks.engine.parallel import default_jobs
from tflint_leaks.reporters import FORMATS, render

if TYPE_CHECKING:
    from tflint_leaks.config import Configuration, Settings
    from tflint_leaks.engine import fixes
    from tflint_leaks.engine.runner import RunResult
    from tflint_leaks.runtime.confirm import ConfirmResult, Target

# The linter itself (libcst, the rules) is imported inside the commands, so that `--version`
# and `--help` start at once.

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
#: The path that means standard input.
STDIN = "-"
OUTPUT_FORMATS = FORMATS
#: ``--fix`` lints again after fixing while fixes were left over (overlapping ones).
MAX_FIX_ROUNDS = 10


def _split(values: Sequence[str]) -> list[str]:
    """``--select TFL101,TFL102 --select TFL2`` -> each code once, in order."""
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


#: Options the linting commands share.
output_format_option = click.option(
    "--output-format", type=click.Choice(OUTPUT_FORMATS), default="text", show_default=True
)
config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Use this pyproject.toml instead of the nearest one.",
)


class _Interrupts:
    """Ctrl-C (SIGINT) and SIGTERM stop a run alike: the workers are stopped, the findings of
    the files finished are printed, and the exit code is 128 + the signal's number (130, 143).
    Workers reset both (``engine/parallel.py``), so only this process handles them."""

    def __init__(self) -> None:
        self.signal = signal.SIGINT

    def _handle(self, number: int, frame: FrameType | None) -> None:
        self.signal = signal.Signals(number)
        raise KeyboardInterrupt

    @contextmanager
    def installed(self) -> Iterator[None]:
        self.signal = signal.SIGINT
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
        for number in previous:
            signal.signal(number, self._handle)
        try:
            yield
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)

    @property
    def exit_code(self) -> int:
        return 128 + self.signal

    @property
    def what(self) -> str:
        return "interrupted" if self.signal == signal.SIGINT else "terminated"


_INTERRUPTS = _Interrupts()


class DefaultCommandGroup(click.Group):
    """A group whose ``check`` command runs when the first argument is not a command name."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (
            args[0] not in self.commands and args[0] not in {"--help", "-h", "--version"}
        ):
            args = ["check", *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultCommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tflint-leaks")
def cli() -> None:
    """Find TensorFlow memory-leak and retracing patterns."""


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--select",
    multiple=True,
    help="Rule codes or prefixes to check (replaces the configured set); `ALL` for every rule.",
)
@click.option("--extend-select", multiple=True, help="Rule codes or prefixes to check in addition.")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes not to check.")
@click.option("--exclude", multiple=True, help="Glob patterns to exclude (replaces the defaults).")
@click.option("--extend-exclude", multiple=True, help="Glob patterns to exclude in addition.")
@click.option(
    "--force-exclude/--no-force-exclude",
    default=None,
    help="Apply excludes to files named explicitly too (for pre-commit).",
)
@output_format_option
@config_option
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", is_flag=True, help="Print the number of findings per rule.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the cache.")
@click.option(
    "--cache-dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Where to keep the cache (default: .tflint-leaks-cache in the project root).",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Worker processes (default: every available core).",
)
@click.option("--show-traceback", is_flag=True, help="Print the traceback of internal errors.")
@click.option("--fix", is_flag=True, help="Apply the safe fixes, then report what is left.")
@click.option(
    "--unsafe-fixes", is_flag=True, help="With --fix or --diff: apply the unsafe fixes too."
)
@click.option(
    "--diff",
    is_flag=True,
    help="Print the fixes as a unified diff without writing; exit 1 when there are any.",
)
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` to every line with a finding.")
@click.option(
    "--stdin-filename",
    type=click.Path(path_type=Path),
    help="Lint standard input (the path `-`) as the content of this file: its configuration, "
    "excludes (with --force-exclude) and notebook handling.",
)
@click.option(
    "--show-settings", is_flag=True, help="Print the resolved settings of each path and exit."
)
@click.option("--show-files", is_flag=True, help="Print the files that would be linted and exit.")
def check(
    paths: tuple[Path, ...],
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    extend_exclude: tuple[str, ...],
    force_exclude: bool | None,
    output_format: str,
    config_path: Path | None,
    exit_zero: bool,
    statistics: bool,
    no_cache: bool,
    cache_dir: Path | None,
    jobs: int | None,
    show_traceback: bool,
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    add_noqa: bool,
    stdin_filename: Path | None,
    show_settings: bool,
    show_files: bool,
) -> None:
    """Lint PATHS (default: the current directory; `-`: standard input)."""
    from tflint_leaks.config import CACHE_DIRECTORY, ConfigError, Configuration, Overrides
    from tflint_leaks.engine.runner import lint_paths

    if add_noqa and (fix or diff):
        raise _fail("error: --add-noqa cannot be combined with --fix or --diff")
    stdin = [str(path) for path in paths] == [STDIN] or (stdin_filename is not None and not paths)
    if not stdin and STDIN in (str(path) for path in paths):
        raise _fail("error: `-` (standard input) cannot be combined with other paths")
    if stdin and add_noqa:
        raise _fail("error: --add-noqa cannot edit standard input; use --fix or --diff")
    targets = [stdin_filename or Path(STDIN)] if stdin else list(paths) or [Path.cwd()]
    overrides = Overrides(
        select=tuple(_split(select)) or None,
        extend_select=tuple(_split(extend_select)),
        ignore=tuple(_split(ignore)),
        exclude=tuple(_split(exclude)) if exclude else None,
        extend_exclude=tuple(_split(extend_exclude)),
        force_exclude=force_exclude,
    )
    try:
        configuration = Configuration(overrides, config_path)
        if show_settings:
            _show_settings(targets, configuration, output_format)
        if show_files:
            _show_files(targets, configuration)
        cache = (
            None if no_cache else cache_dir or configuration.common(targets).root / CACHE_DIRECTORY
        )
    except ConfigError as error:
        raise _fail(f"error: {error}") from None
    if stdin:
        try:
            settings = configuration.for_path(targets[0])
        except ConfigError as error:
            raise _fail(f"error: {error}") from None
        result = _check_stdin(targets[0], settings, fix=fix, diff=diff, unsafe=unsafe_fixes)
        _finish(result, output_format, statistics, show_traceback, exit_zero, err=fix)

    def lint() -> RunResult:
        try:
            return lint_paths(targets, configuration, jobs=jobs or default_jobs(), cache_dir=cache)
        except ConfigError as error:
            raise _fail(f"error: {error}") from None

    result = lint()
    if not result.interrupted:
        if add_noqa:
            _add_noqa(result)
        if diff:
            _show_diff(result, unsafe_fixes)
        if fix:
            result = _fix(lint, result, unsafe_fixes)
    _finish(result, output_format, statistics, show_traceback, exit_zero)


def _finish(
    result: RunResult,
    output_format: str,
    statistics: bool,
    show_traceback: bool,
    exit_zero: bool,
    *,
    err: bool = False,
) -> None:
    """Print a run's warnings and findings (on stderr with ``err``: ``--fix`` of standard input
    prints the fixed text on stdout) and exit with its code."""
    from tflint_leaks.registry import INTERNAL_ERROR
    from tflint_leaks.reporters import text as text_reporter

    if result.interrupted:
        _report(output_format, result, complete=False)
        click.echo(
            f"error: {_INTERRUPTS.what}; the findings above are from the files finished", err=True
        )
        raise SystemExit(_INTERRUPTS.exit_code)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    if show_traceback:
        for trace in result.tracebacks:
            click.echo(trace, err=True)
    if statistics:
        click.echo(text_reporter.statistics(result.diagnostics), nl=False, err=err)
    else:
        _report(output_format, result, complete=not result.errors, err=err)
    for problem in result.errors:
        click.echo(f"error: {problem}", err=True)
    if result.files == 0 and not result.errors:
        click.echo("warning: no Python files found under the given paths", err=True)
    internal = any(d.code == INTERNAL_ERROR.code for d in result.diagnostics)
    if result.errors or internal:
        raise SystemExit(EXIT_ERROR)
    raise SystemExit(EXIT_FINDINGS if result.diagnostics and not exit_zero else EXIT_CLEAN)


def _report(output_format: str, result: RunResult, *, complete: bool, err: bool = False) -> None:
    """Print the findings. The text format's "All checks passed!" is not printed for a run that
    did not complete (interrupted, or a path that does not exist): nothing passed."""
    if result.diagnostics or complete or output_format != "text":
        click.echo(render(output_format, result.diagnostics), nl=False, err=err)


def _check_stdin(
    path: Path, settings: Settings, *, fix: bool, diff: bool, unsafe: bool
) -> RunResult:
    """Lint standard input as the content of ``path`` (``-`` when no ``--stdin-filename``):
    with ``--fix`` the fixed text goes to stdout (the input as it was when nothing is fixed, or
    when the path is excluded), with ``--diff`` the diff does."""
    from tflint_leaks.engine.indexing import unreadable
    from tflint_leaks.engine.runner import RunResult, lint_source
    from tflint_leaks.source import SourceError, decode_source

    data = sys.stdin.buffer.read()
    name = str(path)
    if settings.force_exclude and settings.excluded(path):
        if fix:
            _write_stdout(data)
        # One input, not linted: the warning says why (not "no Python files found").
        return RunResult(files=1, warnings=[f"{name}: excluded by the configuration; not linted"])
    try:
        text = decode_source(data)
    except SourceError as error:
        if fix:
            _write_stdout(data)
        return RunResult([unreadable(name, error)], files=1)
    texts = {name: text}

    def lint() -> RunResult:
        return lint_source(texts[name], path, settings)

    def keep(plans: list[fixes.FileFix], refused: set[str]) -> int:
        for plan in plans:
            texts[plan.path] = plan.fixed
        return sum(len(plan.applied) for plan in plans)

    result = lint()
    if diff:
        _show_diff(result, unsafe, texts)
    if fix:
        result = _fix(lint, result, unsafe, keep, texts)
        click.echo(texts[name], nl=False)
    return result


def _report_skipped(plans: list[fixes.FileFix]) -> None:
    from tflint_leaks.engine import fixes
    from tflint_leaks.reporters import text as text_reporter

    for plan in plans:
        for diagnostic, reason in plan.skipped:
            if reason != fixes.OVERLAPS:
                where = text_reporter.location(diagnostic)
                click.echo(f"warning: {where}: {diagnostic.code} {reason}", err=True)


def _write(plans: list[fixes.FileFix], refused: set[str]) -> int:
    """Write the changed files (atomically, each in its own encoding); a file that cannot be
    written -- read-only, or in a directory that is -- is left alone with a warning and added
    to ``refused``. Returns how many findings the written files fixed."""
    from tflint_leaks.engine.atomic import write_atomic

    done = 0
    for plan in plans:
        if not plan.changed or plan.path in refused:
            continue
        try:
            write_atomic(Path(plan.path), plan.fixed)
        except OSError as error:
            refused.add(plan.path)
            reason = error.strerror or str(error)
            click.echo(f"warning: {plan.path}: left unchanged: {reason}", err=True)
            continue
        done += len(plan.applied)
    return done


def _add_noqa(result: RunResult) -> None:
    """``--add-noqa``: suppress every current finding in place; exit 0 (2 on errors)."""
    from tflint_leaks.engine import fixes
    from tflint_leaks.registry import NEVER_NOQA

    plans = fixes.plan_noqa(result.diagnostics, NEVER_NOQA)
    _report_skipped(plans)
    added = _write(plans, set())
    click.echo(
        f"Added a noqa comment for {added} {'finding' if added == 1 else 'findings'}.", err=True
    )
    raise SystemExit(EXIT_ERROR if result.errors else EXIT_CLEAN)


def _show_diff(result: RunResult, unsafe: bool, texts: dict[str, str] | None = None) -> None:
    """``--diff``: print what ``--fix`` would change; exit 1 if anything, else 0."""
    from tflint_leaks.engine import fixes

    plans = fixes.plan(result.diagnostics, unsafe, texts)
    _report_skipped(plans)
    changed = [plan for plan in plans if plan.changed]
    for plan in changed:
        click.echo(fixes.unified_diff(plan), nl=False)
    count = sum(len(plan.applied) for plan in changed)
    click.echo(f"Would fix {count} {'finding' if count == 1 else 'findings'}.", err=True)
    raise SystemExit(EXIT_FINDINGS if changed else EXIT_CLEAN)


def _fix(
    lint: Callable[[], RunResult],
    result: RunResult,
    unsafe: bool,
    write: Callable[[list[fixes.FileFix], set[str]], int] = _write,
    texts: dict[str, str] | None = None,
) -> RunResult:
    """``--fix``: apply fixes and lint again (with the run's jobs and cache), until a round
    changes nothing (fixes that overlapped are applied on the next round); the last lint is
    what gets reported. ``write`` keeps the fixed texts (the files; for standard input,
    ``texts``, where the next round reads them)."""
    from tflint_leaks.engine import fixes

    fixed = 0
    refused: set[str] = set()
    for _ in range(MAX_FIX_ROUNDS):
        plans = [p for p in fixes.plan(result.diagnostics, unsafe, texts) if p.path not in refused]
        _report_skipped(plans)
        if not any(plan.changed for plan in plans):
            break
        fixed += write([plan for plan in plans if plan.changed], refused)
        if all(plan.path in refused for plan in plans if plan.changed):
            break  # nothing was written: linting again would change nothing
        result = lint()
        if result.interrupted:
            break
    click.echo(f"Fixed {fixed} {'finding' if fixed == 1 else 'findings'}.", err=True)
    hidden = sum(
        1 for d in result.diagnostics if d.fix is not None and not fixes.applies(d, unsafe)
    )
    if hidden:
        click.echo(f"{hidden} more can be fixed with `--fix --unsafe-fixes`.", err=True)
    return result


def _write_stdout(data: bytes) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _show_settings(targets: list[Path], configuration: Configuration, output_format: str) -> None:
    """``--show-settings``: every field of each path's resolved settings, and the codes it is
    checked with; exit 0."""
    from dataclasses import fields, is_dataclass

    def plain(value: object) -> object:
        if is_dataclass(value) and not isinstance(value, type):
            if output_format != "json" and type(value).__str__ is not object.__str__:
                return str(value)  # a value that says itself (the frameworks a project pins)
            return {f.name.replace("_", "-"): plain(getattr(value, f.name)) for f in fields(value)}
        if isinstance(value, tuple | list | frozenset | set):
            items = sorted(value) if isinstance(value, frozenset | set) else value
            return [plain(item) for item in items]
        if isinstance(value, dict):
            return {str(key): plain(item) for key, item in value.items()}
        if value is None or isinstance(value, str | int | float | bool):
            return value
        return str(value)  # a path, or a value of a type added later: as it prints

    shown = []
    for target in targets:
        settings = configuration.for_path(target)
        resolved = plain(settings)
        assert isinstance(resolved, dict)
        resolved["enabled"] = sorted(settings.enabled_codes() - settings.ignored_codes(target))
        shown.append({"path": str(target), "settings": resolved})
    if output_format == "json":
        click.echo(json.dumps(shown, indent=2))
        raise SystemExit(EXIT_CLEAN)
    for entry in shown:
        settings_table = entry["settings"]
        assert isinstance(settings_table, dict)
        source = settings_table["source"] or "none (the defaults)"
        click.echo(f"Resolved settings for: {entry['path']}\nSettings file: {source}")
        for key, value in settings_table.items():
            rows = value.items() if isinstance(value, dict) and key != "per-file-ignores" else None
            if rows is None:
                click.echo(f"{key} = {json.dumps(value)}")
                continue
            for inner, item in rows:
                click.echo(f"{key}.{inner} = {json.dumps(item)}")
    raise SystemExit(EXIT_CLEAN)


def _show_files(targets: list[Path], configuration: Configuration) -> None:
    """``--show-files``: the files a run would lint, in the order it lints them; exit 0 (2 for
    a path that does not exist)."""
    from tflint_leaks.engine.discovery import discover

    found = discover(targets, configuration)
    for path in found.files:
        click.echo(str(path))
    for problem in found.errors:
        click.echo(f"error: {problem}", err=True)
    raise SystemExit(EXIT_ERROR if found.errors else EXIT_CLEAN)


def _fail(message: str) -> SystemExit:
    click.echo(message, err=True)
    return SystemExit(EXIT_ERROR)


class SplitArgsCommand(click.Command):
    """A command whose arguments after ``--`` go to the user's program, untouched."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            split = args.index("--")
            args, ctx.meta["program_args"] = args[:split], tuple(args[split + 1 :])
        return super().parse_args(ctx, args)


def _confirm_target(
    target: str | None,
    paths: tuple[Path, ...],
    module: str | None,
    pytest_args: tuple[str, ...],
    program_args: tuple[str, ...],
) -> tuple[Target, tuple[Path, ...]]:
    """What ``confirm`` runs, and the paths it lints; exits 2 on a target it cannot run."""
    from tflint_leaks.engine.notebook import NotebookError, is_notebook, load
    from tflint_leaks.runtime.confirm import Target, TargetKind, find_module_path

    given = {"module": module is not None, "pytest": bool(pytest_args)}
    if sum(given.values()) > 1 or not (target or any(given.values())):
        raise _fail("error: give exactly one target: a script, `-m MODULE` or `--pytest SELECTION`")
    if any(given.values()) and target is not None:
        # with -m or --pytest, every positional argument is a path to lint
        paths = (Path(target), *paths)
    if pytest_args:
        spec = Target(kind="pytest", args=(*pytest_args, *program_args))
    elif module is not None:
        if find_module_path(module) is None:
            raise _fail(
                f"error: no module named `{module}` (looked in the current directory "
                "and on sys.path)"
            )
        spec = Target(kind="module", module=module, args=program_args)
    else:
        if target is None or not Path(target).is_file():
            raise _fail(f"error: {target}: no such script")
        if is_notebook(target):
            try:
                load(Path(target).read_text(encoding="utf-8"))
            except (NotebookError, UnicodeDecodeError) as error:
                raise _fail(f"error: {target}: {error}") from None
        kind: TargetKind = "notebook" if is_notebook(target) else "script"
        spec = Target(kind=kind, path=target, args=program_args)
    return spec, paths


def _write_report(path: Path, result: ConfirmResult, target: str) -> None:
    from tflint_leaks.runtime.report import render as render_report

    try:
        path.write_text(render_report(result, target), encoding="utf-8")
    except OSError as error:
        raise _fail(f"error: cannot write the report: {error}") from None


@cli.command(cls=SplitArgsCommand)
@click.argument("target", required=False)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("-m", "--module", help="Run this module as `python -m MODULE` would.")
@click.option(
    "--pytest", "pytest_args", multiple=True, help="Run pytest with this selection (repeatable)."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=600.0,
    show_default=True,
    help="Seconds before the target is stopped; what was measured until then still counts.",
)
@click.option(
    "--memory-limit",
    type=click.IntRange(min=1),
    default=None,
    help="Megabytes the target may allocate on top of TensorFlow's own (RLIMIT_AS).",
)
@click.option("--select", multiple=True, help="Rule codes or prefixes of the static pass.")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to leave out.")
@click.option(
    "--report",
    "report_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write an HTML report: per finding, its verdict and charts of what was measured.",
)
@click.option(
    "--profile-dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Record a TensorFlow Profiler trace of the measured loop iterations here (TensorBoard).",
)
@config_option
@output_format_option
@click.pass_context
def confirm(
    ctx: click.Context,
    target: str | None,
    paths: tuple[Path, ...],
    module: str | None,
    pytest_args: tuple[str, ...],
    timeout: float,
    memory_limit: int | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    report_path: Path | None,
    profile_dir: Path | None,
    config_path: Path | None,
    output_format: str,
) -> None:
    """Run TARGET (`train.py -- ARGS`, `-m package.module -- ARGS`, or `--pytest SELECTION`)
    with TensorFlow and give each static finding in PATHS (default: the target's own file or
    package) a verdict: confirmed, not-reproduced, not-executed or error.

    Exit codes: 0 nothing confirmed, 1 a finding confirmed (or a runtime-only retrace found),
    2 usage error, TensorFlow missing, or the target failed (raised, crashed, exited with an
    error status, or pytest could not run the selection).
    """
    from tflint_leaks.config import ConfigError, Configuration, Overrides
    from tflint_leaks.diagnostics import Verdict
    from tflint_leaks.engine.runner import lint_paths
    from tflint_leaks.runtime import INSTALL_HINT, tensorflow_available
    from tflint_leaks.runtime.confirm import run_confirm

    program_args: tuple[str, ...] = ctx.meta.get("program_args", ())
    spec, paths = _confirm_target(target, paths, module, pytest_args, program_args)
    if not tensorflow_available():
        raise _fail(f"error: {INSTALL_HINT}")
    static_paths = [Path(p) for p in paths] or [Path(p) for p in spec.default_paths()]
    overrides = Overrides(select=tuple(_split(select)) or None, ignore=tuple(_split(ignore)))
    try:
        configuration = Configuration(overrides, config_path)
        static = lint_paths(static_paths, configuration)
        settings = configuration.common(static_paths)
    except ConfigError as error:
        raise _fail(f"error: {error}") from None
    result = run_confirm(
        spec,
        static.diagnostics,
        timeout=timeout,
        memory_limit_mb=memory_limit,
        max_python_values=settings.options.max_python_values,
        user_paths=[str(path) for path in static_paths],
        # what the run is doing, on a terminal and beside the text format only
        progress=sys.stderr if output_format == "text" and sys.stderr.isatty() else None,
        profile_dir=str(profile_dir) if profile_dir else None,
    )
    run = result.run
    if report_path is not None:
        _write_report(report_path, result, spec.name)
    click.echo(f"target {run.status}: {run.description}", err=True)
    if run.traceback and run.failure and "could not import" not in run.failure:
        click.echo(run.traceback, err=True)
    for note in run.notes:
        click.echo(f"note: {note}", err=True)
    if result.diagnostics or not run.failure:
        click.echo(render(output_format, result.diagnostics), nl=False)
    if run.failure:
        raise _fail(f"error: {run.failure}")
    confirmed = any(
        d.confirmation is not None and d.confirmation.verdict is Verdict.CONFIRMED
        for d in result.diagnostics
    )
    raise SystemExit(EXIT_FINDINGS if confirmed else EXIT_CLEAN)


@cli.command()
@click.argument("code")
def rule(code: str) -> None:
    """Print the documentation of CODE (a code such as TFL101, or a name)."""
    from tflint_leaks.registry import find

    found = find(code)
    if found is None:
        raise _fail(f"error: unknown code `{code}`; `tflint-leaks rules` lists them")
    click.echo(f"# {found.name} ({found.code})\n\n{found.docs()}")


@cli.command()
@click.option(
    "--output-format", type=click.Choice(("text", "json")), default="text", show_default=True
)
def rules(output_format: str) -> None:
    """List every code: the rules, and the codes of the engine and the runtime mode."""
    from tflint_leaks.registry import CODES

    if output_format == "json":
        entries: list[dict[str, Any]] = [
            {
                "code": c.code,
                "name": c.name,
                "summary": c.summary,
                "kind": c.kind.value,
                "default": c.default_enabled,
                "fix": c.fix.value if c.fix else None,
                "url": c.url,
            }
            for c in CODES
        ]
        click.echo(json.dumps(entries, indent=2))
        return
    for c in CODES:
        note = "" if c.default_enabled else " (opt-in)"
        if not c.is_rule:
            note = f" ({c.kind.value})"
        click.echo(f"{c.code}  {c.name:<34} {c.summary}{note}")


@cli.command()
def server() -> None:
    """Run the Language Server Protocol server on stdin/stdout, for editors (diagnostics,
    quick fixes, rule docs on hover). Needs the `server` extra."""
    try:
        from tflint_leaks.server import serve
    except ModuleNotFoundError as error:
        if (error.name or "").partition(".")[0] not in {"pygls", "lsprotocol"}:
            raise
        raise _fail(
            "error: `tflint-leaks server` needs pygls: install the server extra "
            "(`pip install '.[server]'` in a clone of tflint-leaks)"
        ) from None
    serve()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv``; return the exit code (never raises SystemExit)."""
    with _INTERRUPTS.installed():
        try:
            cli.main(
                args=list(argv) if argv is not None else None,
                prog_name="tflint-leaks",
                standalone_mode=False,
            )
        except SystemExit as exit_:
            return exit_.code if isinstance(exit_.code, int) else EXIT_ERROR
        except click.exceptions.Abort:
            # A signal before or after the linting (which reports what it finished).
            click.echo("Aborted.", err=True)
            return _INTERRUPTS.exit_code
        except click.ClickException as error:
            error.show()
            return EXIT_ERROR
        except OSError as error:
            where = f"{error.filename}: " if error.filename else ""
            click.echo(f"error: {where}{error.strerror or error}", err=True)
            return EXIT_ERROR
        except Exception as error:
            # A bug in this tool: one line and exit 2, the traceback with --show-traceback.
            click.echo(f"error: internal error: {type(error).__name__}: {error}", err=True)
            if "--show-traceback" in (sys.argv[1:] if argv is None else argv):
                click.echo(traceback.format_exc(), err=True, nl=False)
            return EXIT_ERROR
    return EXIT_CLEAN


def entry_point() -> NoReturn:
    """The ``tflint-leaks`` command: run, flush what was written, and leave without tearing down
    the hundreds of thousands of objects the project's index holds (mypy's ``hard_exit``): on
    tf-keras's sources that teardown was 0.8 s of a 5.4 s run. Nothing is left to do at exit:
    the cache is written, the workers are reaped and every file is closed by then."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a closed pipe (`| head`), a closed stream
            stream.flush()
    os._exit(code)
