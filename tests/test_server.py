"""The editor server: ``lint_source``, and ``tflint-leaks server`` driven over its pipes with raw
JSON-RPC (Content-Length framing) and by a real LSP client, Neovim's, run headless."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from tflint_leaks.cli import main
from tflint_leaks.config import Configuration
from tflint_leaks.engine.runner import lint_paths, lint_source

LEAKY = textwrap.dedent(
    """\
    import tensorflow as tf


    @tf.function
    def train_step(x, step):
        return x * step


    x = tf.ones([2])
    for step in range(100):
        train_step(x, step)
    """
)
CALL = "    train_step(x, step)\n"
CLEAN = LEAKY.replace(CALL, "    train_step(x, tf.constant(step))\n")
#: How long to wait for a message before calling the server hung: a guard against a hang, far
#: above what a lint takes on a busy machine, never a timing the tests rely on.
TIMEOUT = 300.0


def test_lint_source_lints_the_buffer_not_the_file(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(CLEAN)
    settings = Configuration().for_path(tmp_path / "train.py")
    from_buffer = lint_source(LEAKY, path, settings).diagnostics
    path.write_text(LEAKY)
    assert from_buffer == lint_paths([path], settings).diagnostics
    assert [(d.code, d.start.line, d.start.column) for d in from_buffer] == [("TFL101", 11, 19)]
    assert lint_source(CLEAN, path, settings).diagnostics == []
    assert path.read_text() == LEAKY


def test_lint_source_suppressions_and_syntax_errors(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    settings = Configuration().for_path(tmp_path / "train.py")
    suppressed = LEAKY.replace(CALL, "    train_step(x, step)  # noqa: TFL101\n")
    assert lint_source(suppressed, path, settings).diagnostics == []
    broken = lint_source("def f(:\n", path, settings).diagnostics
    assert [(d.code, d.start.line) for d in broken] == [("TFL001", 1)]


def test_one_index_per_file_kept_while_its_text_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server's index table (the engine's): a text indexed once is not parsed again,
    whether it is asked for as a buffer being linted or as another file of the project."""
    from tflint_leaks.engine import indexing

    calls: list[str] = []
    original = indexing.index_file

    def counting(path: Path, text: str | None = None) -> object:
        calls.append(str(text))
        return original(path, text)

    monkeypatch.setattr(indexing, "index_file", counting)
    indexes = indexing.Indexes()
    path = tmp_path / "train.py"
    settings = Configuration().for_path(path)
    first = lint_source(LEAKY, path, settings, indexes=indexes).diagnostics
    assert indexes.index(path, LEAKY) is indexes.known(path)
    assert lint_source(LEAKY, path, settings, indexes=indexes).diagnostics == first
    assert calls == [LEAKY]
    assert lint_source(CLEAN, path, settings, indexes=indexes).diagnostics == []
    assert calls == [LEAKY, CLEAN]


def test_the_linter_does_not_import_pygls() -> None:
    code = "import sys, tflint_leaks.cli; sys.exit('pygls' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_server_without_pygls_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pygls", None)
    monkeypatch.delitem(sys.modules, "tflint_leaks.server", raising=False)
    assert main(["server"]) == 2
    assert (
        "install the server extra (`pip install '.[server]'` in a clone" in capsys.readouterr().err
    )


# -- raw JSON-RPC over the server's pipes ------------------------------------------------------


class Client:
    """A minimal LSP client: Content-Length framed JSON-RPC over a subprocess's pipes."""

    def __init__(self, root: Path) -> None:
        pytest.importorskip("pygls")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tflint_leaks", "server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=root,
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.notifications: list[dict[str, Any]] = []
        self.next_id = 0
        assert self.process.stdout is not None
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            length = None
            while line := stream.readline():
                name, _, value = line.decode("ascii").partition(":")
                if not name.strip():
                    break
                if name.lower() == "content-length":
                    length = int(value)
            if not line:
                return
            if length is not None:
                self.messages.put(json.loads(stream.read(length)))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()

    def _next(self) -> dict[str, Any]:
        try:
            message = self.messages.get(timeout=TIMEOUT)
        except queue.Empty:
            pytest.fail(f"no message from the server in {TIMEOUT}s")
        if "method" in message and "id" in message:  # A request from the server.
            self.send({"id": message["id"], "result": None})
        elif "method" in message:
            self.notifications.append(message)
        return message

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self._next()
            if message.get("id") == self.next_id and "method" not in message:
                assert "error" not in message, message
                return message["result"]

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"method": method, "params": params})

    def diagnostics(self, uri: str) -> list[dict[str, Any]]:
        """The next diagnostics published for ``uri``."""
        while True:
            message = self._next()
            params = message.get("params", {})
            if message.get("method") == "textDocument/publishDiagnostics" and params["uri"] == uri:
                result: list[dict[str, Any]] = params["diagnostics"]
                return result

    def initialize(self, root: Path, options: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": {},
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "initializationOptions": options,
            },
        )
        self.notify("initialized", {})
        return result

    def open(self, path: Path, text: str) -> str:
        uri = path.as_uri()
        document = {"uri": uri, "languageId": "python", "version": 1, "text": text}
        self.notify("textDocument/didOpen", {"textDocument": document})
        return uri

    def close(self) -> int:
        assert self.request("shutdown", {}) is None
        self.notify("exit", {})
        return self.process.wait(timeout=TIMEOUT)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    started = Client(tmp_path)
    yield started
    started.kill()


def test_diagnostics_fixes_and_hover_over_json_rpc(client: Client, tmp_path: Path) -> None:
    capabilities = client.initialize(tmp_path)["capabilities"]
    assert capabilities["hoverProvider"]
    assert capabilities["codeActionProvider"] == {"codeActionKinds": ["quickfix"]}
    path = tmp_path / "train.py"
    path.write_text("")  # The server lints the buffer, not the file.
    uri = client.open(path, LEAKY)

    [diagnostic] = client.diagnostics(uri)
    assert diagnostic == {
        "range": {"start": {"line": 10, "character": 18}, "end": {"line": 10, "character": 22}},
        "severity": 2,
        "code": "TFL101",
        "codeDescription": {
            "href": "https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/rules/TFL101.md"
        },
        "source": "tflint-leaks",
        "message": "Python number `step` changes every iteration; each value retraces `train_step`",
        "relatedInformation": [
            {
                "location": {
                    "uri": uri,
                    "range": {
                        "start": {"line": 3, "character": 0},
                        "end": {"line": 3, "character": 12},
                    },
                },
                "message": "`train_step` is defined here",
            },
            {
                "location": {
                    "uri": uri,
                    "range": {
                        "start": {"line": 9, "character": 0},
                        "end": {"line": 9, "character": 22},
                    },
                },
                "message": "repeated by this loop",
            },
        ],
    }

    cursor = {"line": 10, "character": 4}
    actions = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": {"start": cursor, "end": cursor},
            "context": {"diagnostics": [diagnostic]},
        },
    )
    line_end = {"start": {"line": 10, "character": 23}, "end": {"line": 10, "character": 23}}
    assert actions == [
        {
            "title": "Wrap `step` in `tf.constant(..., tf.float32)` (unsafe)",
            "kind": "quickfix",
            "diagnostics": [diagnostic],
            "edit": {
                "documentChanges": [
                    {
                        "textDocument": {"uri": uri, "version": 1},
                        "edits": [
                            {
                                "range": diagnostic["range"],
                                "newText": "tf.constant(step, tf.float32)",
                            }
                        ],
                    }
                ]
            },
        },
        {
            "title": "Suppress TFL101 with noqa",
            "kind": "quickfix",
            "diagnostics": [diagnostic],
            "edit": {
                "documentChanges": [
                    {
                        "textDocument": {"uri": uri, "version": 1},
                        "edits": [{"range": line_end, "newText": "  # noqa: TFL101"}],
                    }
                ]
            },
        },
    ]

    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": cursor})
    assert hover["range"] == diagnostic["range"]
    assert hover["contents"]["kind"] == "markdown"
    value = hover["contents"]["value"]
    assert value.startswith("**TFL101** `python-scalar-argument`: Python number `step`")
    assert "## What it does" in value
    empty = {"textDocument": {"uri": uri}, "position": {"line": 8, "character": 0}}
    assert client.request("textDocument/hover", empty) is None

    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"text": CLEAN}],
        },
    )
    assert client.diagnostics(uri) == []
    no_actions = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": {"start": cursor, "end": cursor},
            "context": {"diagnostics": []},
        },
    )
    assert no_actions == []

    # An incremental change back to the leak, then a save: the buffer is linted again.
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 3},
            "contentChanges": [
                {
                    "range": {
                        "start": {"line": 10, "character": 18},
                        "end": {"line": 10, "character": 35},
                    },
                    "text": "step",
                }
            ],
        },
    )
    assert [d["code"] for d in client.diagnostics(uri)] == ["TFL101"]
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert [d["range"] for d in client.diagnostics(uri)] == [diagnostic["range"]]
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri) == []
    assert path.read_text() == ""
    assert client.close() == 0


def test_a_safe_fix_is_the_preferred_action(client: Client, tmp_path: Path) -> None:
    client.initialize(tmp_path)
    text = textwrap.dedent(
        """\
        import tensorflow as tf

        @tf.function
        def encode(tokens):
            return tokens

        x = tf.ones([100])
        for length in range(1, 100):
            encode(x[:length])
        """
    )
    uri = client.open(tmp_path / "encode.py", text)
    [diagnostic] = client.diagnostics(uri)
    assert diagnostic["code"] == "TFL105"
    [fix, _] = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": diagnostic["range"],
            "context": {"diagnostics": [diagnostic], "only": ["quickfix"]},
        },
    )
    assert fix["isPreferred"] is True
    assert "(unsafe)" not in fix["title"]
    [edit] = fix["edit"]["documentChanges"][0]["edits"]
    assert edit == {
        "range": {"start": {"line": 2, "character": 1}, "end": {"line": 2, "character": 12}},
        "newText": "tf.function(reduce_retracing=True)",
    }
    only_refactors = {"diagnostics": [diagnostic], "only": ["refactor"]}
    assert (
        client.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": uri}, "range": diagnostic["range"], "context": only_refactors},
        )
        == []
    )


def test_the_noqa_quick_fix_on_a_backslash_line_comments_the_last_line(
    client: Client, tmp_path: Path
) -> None:
    """Failed before: the comment went after the backslash (``\\  # noqa: TFL101``), a syntax
    error. It goes where ``--add-noqa`` puts it: after the continued statement."""
    client.initialize(tmp_path)
    text = LEAKY.replace(CALL, "    y = train_step(x, step) \\\n        + 1\n")
    uri = client.open(tmp_path / "train.py", text)
    [diagnostic] = client.diagnostics(uri)
    assert diagnostic["range"]["start"] == {"line": 10, "character": 22}
    [_, suppress] = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": diagnostic["range"],
            "context": {"diagnostics": [diagnostic]},
        },
    )
    assert suppress["edit"]["documentChanges"][0]["edits"] == [
        {
            "range": {"start": {"line": 11, "character": 11}, "end": {"line": 11, "character": 11}},
            "newText": "  # noqa: TFL101",
        }
    ]
    assert client.close() == 0


def test_a_buffer_with_a_lone_surrogate_does_not_break_the_others(
    client: Client, tmp_path: Path
) -> None:
    """Failed before: indexing the open buffer raised ``UnicodeEncodeError``, so linting every
    other open document failed too. Now that buffer is TFL001 and the others are linted."""
    client.initialize(tmp_path)
    broken_uri = client.open(tmp_path / "broken.py", "x = '\ud800'\n")
    [broken] = client.diagnostics(broken_uri)
    assert (broken["code"], broken["range"]["start"], broken["message"]) == (
        "TFL001",
        {"line": 0, "character": 5},
        "not valid Unicode: a lone surrogate U+D800",
    )
    uri = client.open(tmp_path / "train.py", LEAKY)
    assert [d["code"] for d in client.diagnostics(uri)] == ["TFL101"]
    assert client.close() == 0


def test_changes_are_debounced(client: Client, tmp_path: Path) -> None:
    """Failed before on a loaded machine: the changes were sent 0.3 s apart at most only by
    luck. Now the debounce is an hour (an initialization option), so no change is linted on its
    own, and the save lints the last version at once."""
    client.initialize(tmp_path, {"debounce": 3600})
    uri = client.open(tmp_path / "train.py", CLEAN)
    assert client.diagnostics(uri) == []
    for version in range(2, 12):
        text = LEAKY if version % 2 else CLEAN
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
        )
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert [d["code"] for d in client.diagnostics(uri)] == ["TFL101"]
    client.request("shutdown", {})
    published = [n for n in client.notifications if n["method"].endswith("publishDiagnostics")]
    assert [n["params"].get("version") for n in published] == [1, 11]


def test_cross_file_tf_function_from_disk_and_from_open_buffers(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "steps.py").write_text(
        "import tensorflow as tf\n\n\n@tf.function\ndef train_step(x, step):\n    return x\n"
    )
    train = "from steps import train_step\n\nfor step in range(100):\n    train_step(1.0, step)\n"
    client.initialize(tmp_path)
    uri = client.open(tmp_path / "train.py", train)
    [diagnostic] = client.diagnostics(uri)
    assert diagnostic["code"] == "TFL101"
    assert diagnostic["relatedInformation"][0]["location"] == {
        "uri": (tmp_path / "steps.py").as_uri(),
        "range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 12}},
    }
    # steps.py opened and edited (not saved) so that train_step is no tf.function any more.
    steps_uri = client.open(tmp_path / "steps.py", "def train_step(x, step):\n    return x\n")
    assert client.diagnostics(steps_uri) == []
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri) == []
    assert client.close() == 0


def test_each_document_uses_its_nearest_configuration_and_excludes(
    client: Client, tmp_path: Path
) -> None:
    """A monorepo: ``sub`` ignores TFL101 and excludes ``generated/``. The editor agrees with
    ``tflint-leaks .`` (one finding, in ``src/b.py``). Failed before: the command line used the
    settings found from the first path (none at the root) for every file and reported all
    three, while the editor reported one."""
    (tmp_path / "sub" / "generated").mkdir(parents=True)
    (tmp_path / "sub" / "pyproject.toml").write_text(
        '[tool.tflint-leaks]\nignore = ["TFL101"]\nextend-exclude = ["generated/"]\n'
    )
    (tmp_path / "src").mkdir()
    for name in ("sub/a.py", "sub/generated/g.py", "src/b.py"):
        (tmp_path / name).write_text(LEAKY)
    client.initialize(tmp_path)
    found = {}
    for name in ("sub/a.py", "sub/generated/g.py", "src/b.py"):
        uri = client.open(tmp_path / name, LEAKY)
        found[name] = [d["code"] for d in client.diagnostics(uri)]
    assert found == {"sub/a.py": [], "sub/generated/g.py": [], "src/b.py": ["TFL101"]}
    from_cli = lint_paths([tmp_path], Configuration()).diagnostics
    assert [(Path(d.file).relative_to(tmp_path).as_posix(), d.code) for d in from_cli] == [
        ("src/b.py", "TFL101")
    ]
    assert client.close() == 0


def test_configuration_and_position_encoding(client: Client, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.tflint-leaks]\nselect = ["TFL9"]\n')
    client.initialize(tmp_path)
    uri = client.open(tmp_path / "train.py", LEAKY)
    [problem] = client.diagnostics(uri)
    assert problem["severity"] == 1
    assert problem["message"].startswith("configuration error: ")
    assert "unknown rule selector `TFL9`" in problem["message"]

    # A character outside the Basic Multilingual Plane is two UTF-16 code units.
    (tmp_path / "pyproject.toml").write_text('[tool.tflint-leaks]\nignore = ["TFL105"]\n')
    emoji = LEAKY.replace(CALL, "    train_step('😋', step)\n")
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri) == []
    uri = client.open(tmp_path / "train.py", emoji)
    [diagnostic] = client.diagnostics(uri)
    # `step` is the 21st character of its line, and the 22nd UTF-16 code unit.
    assert diagnostic["range"]["start"] == {"line": 10, "character": 21}
    assert client.close() == 0


# -- a real LSP client: Neovim ---------------------------------------------------------------

NVIM_SCRIPT = """\
local client_id = vim.lsp.start_client({
  name = 'tflint-leaks',
  cmd = {PYTHON, '-m', 'tflint_leaks', 'server'},
  root_dir = ROOT,
})
vim.cmd('edit ' .. vim.fn.fnameescape(FILE))
local bufnr = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(bufnr, client_id)
local function wait_for(count)
  return vim.wait(300000, function() return #vim.diagnostic.get(bufnr) == count end, 50)
end
local found = {}
if wait_for(1) then
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(found, {lnum = d.lnum, col = d.col, end_lnum = d.end_lnum,
      end_col = d.end_col, code = d.code or (d.user_data and d.user_data.lsp.code),
      source = d.source, severity = d.severity, message = d.message})
  end
end
local position = {line = 10, character = 4}
local hovers = vim.lsp.buf_request_sync(bufnr, 'textDocument/hover',
  {textDocument = {uri = vim.uri_from_bufnr(bufnr)}, position = position}, 300000)
local hover = hovers and hovers[client_id] and hovers[client_id].result
-- Apply the first quick fix to the buffer (not the file): the diagnostics go away.
local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction', {
  textDocument = {uri = vim.uri_from_bufnr(bufnr)},
  range = {start = position, ['end'] = position},
  context = {diagnostics = vim.lsp.diagnostic.get_line_diagnostics(bufnr, 10)},
}, 300000)
local actions = responses and responses[client_id] and responses[client_id].result or {}
local titles = {}
for _, action in ipairs(actions) do table.insert(titles, action.title) end
if actions[1] then vim.lsp.util.apply_workspace_edit(actions[1].edit, 'utf-16') end
local cleared = wait_for(0)
vim.fn.writefile({vim.fn.json_encode({
  diagnostics = found,
  hover = hover and hover.contents.value or vim.NIL,
  actions = titles,
  fixed = vim.api.nvim_buf_get_lines(bufnr, 10, 11, false)[1],
  cleared = cleared,
})}, OUT)
vim.lsp.stop_client(client_id)
vim.wait(5000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 50)
vim.cmd('qa!')
"""


def _nvim() -> str:
    pytest.importorskip("pygls")
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("Neovim is not installed (`make pytest` installs it with apt-get as root)")
    return nvim


def test_neovim_shows_diagnostics_hover_and_applies_a_fix(tmp_path: Path) -> None:
    nvim = _nvim()
    path = tmp_path / "train.py"
    path.write_text(LEAKY)
    out = tmp_path / "out.json"
    values = {"PYTHON": sys.executable, "ROOT": str(tmp_path), "FILE": str(path), "OUT": str(out)}
    header = "".join(f"local {name} = {json.dumps(value)}\n" for name, value in values.items())
    script = tmp_path / "test.lua"
    script.write_text(header + NVIM_SCRIPT)
    run = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-c", f"luafile {script}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=540,  # a hang guard, below pytest-timeout's 600 s
        check=False,
    )
    assert out.is_file(), run.stderr
    result = json.loads(out.read_text())
    assert result["diagnostics"] == [
        {
            "lnum": 10,
            "col": 18,
            "end_lnum": 10,
            "end_col": 22,
            "code": "TFL101",
            "source": "tflint-leaks",
            "severity": 2,
            "message": "Python number `step` changes every iteration; "
            "each value retraces `train_step`",
        }
    ]
    assert result["hover"].startswith("**TFL101** `python-scalar-argument`")
    assert result["actions"] == [
        "Wrap `step` in `tf.constant(..., tf.float32)` (unsafe)",
        "Suppress TFL101 with noqa",
    ]
    assert result["fixed"] == "    train_step(x, tf.constant(step, tf.float32))"
    assert result["cleared"] is True
    assert path.read_text() == LEAKY


def test_the_readme_neovim_config_works(tmp_path: Path) -> None:
    nvim = _nvim()
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    section = readme[readme.index("### Editor integration") :]
    (tmp_path / "init.lua").write_text(section.split("```lua\n", 1)[1].split("```", 1)[0])
    (tmp_path / "train.py").write_text(LEAKY)
    out = tmp_path / "out.json"
    (tmp_path / "check.lua").write_text(
        "vim.wait(300000, function() return #vim.diagnostic.get(0) > 0 end, 50)\n"
        "local found = {}\n"
        "for _, d in ipairs(vim.diagnostic.get(0)) do\n"
        "  table.insert(found, {d.lnum, d.col, d.user_data.lsp.code})\n"
        "end\n"
        f"vim.fn.writefile({{vim.fn.json_encode(found)}}, {json.dumps(str(out))})\n"
        "vim.cmd('qa!')\n"
    )
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    run = subprocess.run(
        [nvim, "--headless", "-u", "init.lua", "-i", "NONE", "-c", "luafile check.lua", "train.py"],
        cwd=tmp_path,
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=540,  # a hang guard, below pytest-timeout's 600 s
        check=False,
    )
    assert out.is_file(), run.stderr
    assert json.loads(out.read_text()) == [[10, 18, "TFL101"]]
