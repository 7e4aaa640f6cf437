"""The TensorFlow and Keras a project runs, read from its pin files (issue 18, part 1): one row
per form, each with the exact versions, sources, major version and Keras found."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from tflint_leaks.frameworks import (
    Frameworks,
    Keras,
    Versions,
    conda_range,
    poetry_range,
    project_root,
    read_pins,
    specifier_range,
)

Summary = tuple[str | None, tuple[str, ...], int | None, Keras]


def _summary(root: Path) -> Summary:
    """TensorFlow's range and sources (relative to ``root``), its major version, the Keras."""
    found = read_pins(str(root))
    pin = found.tensorflow
    sources = tuple(s.replace(f"{root}/", "") for s in pin.sources) if pin is not None else ()
    return (
        str(pin.versions) if pin else None,
        sources,
        found.tensorflow_major,
        found.keras_flavour,
    )


def _project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


PIN_FILES: list[tuple[str, dict[str, str], Summary]] = [
    (
        "exact",
        {"requirements.txt": "tensorflow==1.14\n"},
        ("==1.14", ("requirements.txt:1",), 1, Keras.TF_KERAS),
    ),
    (
        # Azure's DeepLearningForTimeSeriesForecasting
        "capitalised name",
        {"Requirements.txt": "keras==2.2.4\ntensorflow==1.12.0\n"},
        ("==1.12", ("Requirements.txt:2",), 1, Keras.KERAS_2),
    ),
    (
        "range",
        {"requirements.txt": "numpy\ntensorflow >= 1.13, < 2\n"},
        (">=1.13,<2", ("requirements.txt:2",), 1, Keras.TF_KERAS),
    ),
    (
        "compatible release",
        {"requirements.txt": "tensorflow~=2.4\n"},
        (">=2.4,<3", ("requirements.txt:1",), 2, Keras.UNKNOWN),
    ),
    (
        "gpu distribution, trailing zero",
        {"requirements.txt": "tensorflow-gpu==1.15.0\n"},
        ("==1.15", ("requirements.txt:1",), 1, Keras.TF_KERAS),
    ),
    (
        "cpu distribution, wildcard",
        {"requirements.txt": "TensorFlow_CPU==2.10.*\n"},
        (">=2.10,<2.11", ("requirements.txt:1",), 2, Keras.TF_KERAS),
    ),
    (
        "nightly, unpinned",
        {"requirements.txt": "tf-nightly\n"},
        (">=2", ("requirements.txt:1",), 2, Keras.UNKNOWN),
    ),
    (
        "tensorflow from 2.16 ships Keras 3",
        {"requirements.txt": "tensorflow>=2.16\n"},
        (">=2.16", ("requirements.txt:1",), 2, Keras.KERAS_3),
    ),
    (
        "tf-keras keeps Keras 2",
        {"requirements.txt": "tensorflow==2.16.1\ntf-keras==2.16.0\n"},
        ("==2.16.1", ("requirements.txt:1",), 2, Keras.TF_KERAS),
    ),
    (
        "standalone keras 2",
        {"requirements.txt": "tensorflow==1.14\nkeras==2.2.4\n"},
        ("==1.14", ("requirements.txt:1",), 1, Keras.KERAS_2),
    ),
    (
        "keras 3, no tensorflow pin",
        {"requirements.txt": "keras>=3\n"},
        (None, (), None, Keras.KERAS_3),
    ),
    (
        "extras, pre-release",
        {"requirements.txt": "tensorflow[and-cuda]==2.15.0rc1\n"},
        ("==2.15", ("requirements.txt:1",), 2, Keras.TF_KERAS),
    ),
    (
        "markers are alternatives",
        {
            "requirements.txt": (
                'tensorflow==1.15; python_version < "3.8"\n'
                'tensorflow==2.4; python_version >= "3.8"\n'
            )
        },
        (">=1.15,<=2.4", ("requirements.txt:1", "requirements.txt:2"), None, Keras.TF_KERAS),
    ),
    (
        "comments, continuation, hashes",
        {
            "requirements.txt": (
                "# the book's versions\n"
                "tensorflow \\\n"
                "    ==1.14  # pinned\n"
                "keras==2.2.4 --hash=sha256:0123abcd\n"
                "-e git+https://example.com/tool.git#egg=tool\n"
                "--index-url https://example.com/simple\n"
            )
        },
        ("==1.14", ("requirements.txt:2",), 1, Keras.KERAS_2),
    ),
    (
        "include, relative to the including file",
        {
            "requirements.txt": "-r requirements/base.txt\n",
            "requirements/base.txt": "tensorflow>=1.13\n--constraint constraints.txt\n",
            "requirements/constraints.txt": "tensorflow<2\n",
        },
        (
            ">=1.13,<2",
            ("requirements/base.txt:1", "requirements/constraints.txt:1"),
            1,
            Keras.TF_KERAS,
        ),
    ),
    (
        "include cycle",
        {
            "requirements.txt": "-r requirements-dev.txt\ntensorflow>=1.13\n",
            "requirements-dev.txt": "-rrequirements.txt\ntensorflow<1.16\n",
        },
        (
            ">=1.13,<1.16",
            ("requirements.txt:2", "requirements-dev.txt:2"),
            1,
            Keras.TF_KERAS,
        ),
    ),
    (
        "constraints.txt",
        {"constraints.txt": "tensorflow<2\n"},
        ("<2", ("constraints.txt:1",), 1, Keras.TF_KERAS),
    ),
    (
        "unpinned",
        {"requirements.txt": "tensorflow\n"},
        ("any version", ("requirements.txt:1",), None, Keras.UNKNOWN),
    ),
    (
        "pyproject dependencies",
        {"pyproject.toml": '[project]\nname = "x"\ndependencies = ["tensorflow>=2.11"]\n'},
        (">=2.11", ("pyproject.toml: project.dependencies",), 2, Keras.UNKNOWN),
    ),
    (
        "pyproject extras",
        {
            "pyproject.toml": (
                '[project]\nname = "x"\ndependencies = ["numpy"]\n'
                '[project.optional-dependencies]\ngpu = ["tensorflow-gpu==1.15"]\n'
            )
        },
        ("==1.15", ("pyproject.toml: project.optional-dependencies.gpu",), 1, Keras.TF_KERAS),
    ),
    (
        "poetry caret",
        {"pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.7"\ntensorflow = "^1.15"\n'},
        (">=1.15,<2", ("pyproject.toml: tool.poetry.dependencies",), 1, Keras.TF_KERAS),
    ),
    (
        "poetry table in a group",
        {
            "pyproject.toml": (
                "[tool.poetry.group.ml.dependencies]\n"
                'tensorflow-cpu = {version = "~2.4", optional = true}\n'
            )
        },
        (">=2.4,<2.5", ("pyproject.toml: tool.poetry.group.ml.dependencies",), 2, Keras.TF_KERAS),
    ),
    (
        "pdm dev-dependencies",
        {"pyproject.toml": '[tool.pdm.dev-dependencies]\ntest = ["tensorflow==2.12.*"]\n'},
        (
            ">=2.12,<2.13",
            ("pyproject.toml: tool.pdm.dev-dependencies.test",),
            2,
            Keras.TF_KERAS,
        ),
    ),
    (
        "setup.cfg",
        {
            "setup.cfg": (
                "[metadata]\nname = x\n\n[options]\ninstall_requires =\n"
                "    numpy\n    # the graph-mode code\n    tensorflow>=1.12,<1.15\n"
            )
        },
        (">=1.12,<1.15", ("setup.cfg: options.install_requires",), 1, Keras.TF_KERAS),
    ),
    (
        "setup.py literal list",
        {
            "setup.py": (
                "from setuptools import setup\n\nsetup(\n    name='x',\n"
                "    install_requires=['numpy', 'tensorflow==1.13.1'],\n)\n"
            )
        },
        ("==1.13.1", ("setup.py:5",), 1, Keras.TF_KERAS),
    ),
    (
        "setup.py name bound to a list, extras",
        {
            "setup.py": (
                "import setuptools\n\nREQUIRED = [\n    'keras==2.3.1',\n]\n"
                "setuptools.setup(install_requires=REQUIRED,\n"
                "                 extras_require={'gpu': ['tensorflow-gpu>=1.15,<2']})\n"
            )
        },
        (">=1.15,<2", ("setup.py:7",), 1, Keras.KERAS_2),
    ),
    (
        "setup.py computed list is not run",
        {
            "setup.py": (
                "from setuptools import setup\n"
                "setup(install_requires=open('requirements.in').read().split())\n"
            ),
            "requirements.in": "tensorflow==1.14\n",
        },
        (None, (), None, Keras.UNKNOWN),
    ),
    (
        "Pipfile",
        {"Pipfile": '[packages]\ntensorflow = "==1.14"\nkeras = "*"\n'},
        ("==1.14", ("Pipfile: packages",), 1, Keras.UNKNOWN),
    ),
    (
        "environment.yml, conda and pip",
        {
            "environment.yml": (
                "name: gan\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.6\n"
                "  - conda-forge::tensorflow-gpu=1.14.0=h0d30ee6_0  # the GPU build\n"
                "  - pip\n  - pip:\n    - 'keras==2.2.4'\nprefix: /opt/env\n"
            )
        },
        (">=1.14,<1.14.1", ("environment.yml:6",), 1, Keras.KERAS_2),
    ),
    (
        "environment.yml, pip includes a requirements file",
        {
            "environment.yaml": "dependencies:\n- python\n- pip:\n  - -r reqs.txt\n",
            "reqs.txt": "tensorflow==2.3.0\n",
        },
        ("==2.3", ("reqs.txt:1",), 2, Keras.TF_KERAS),
    ),
    (
        "a conda environment under the project's own name; other YAML says nothing",
        {
            "treevae.yml": (
                "name: treevae\nchannels:\n  - conda-forge\ndependencies:\n"
                "  - python=3.9\n  - pip:\n    - tensorflow==2.10.0\n    - keras==2.10.0\n"
            ),
            "mkdocs.yml": "site_name: docs\nnav:\n  - index.md\n",
            "ci.yaml": "name: ci\ndependencies: []\njobs:\n  - tensorflow==1.14\n",
        },
        ("==2.10", ("treevae.yml:7",), 2, Keras.KERAS_2),
    ),
    (
        "files intersect",
        {
            "requirements.txt": "tensorflow==1.14\n",
            "setup.py": (
                "import setuptools\nsetuptools.setup(install_requires=['tensorflow>=1.13'])\n"
            ),
        },
        ("==1.14", ("requirements.txt:1", "setup.py:2"), 1, Keras.TF_KERAS),
    ),
    (
        "files that contradict each other allow any version they name",
        {
            "requirements.txt": "tensorflow==1.14\n",
            "pyproject.toml": '[project]\nname = "x"\ndependencies = ["tensorflow>=2"]\n',
        },
        (
            ">=1.14",
            ("pyproject.toml: project.dependencies", "requirements.txt:1"),
            None,
            Keras.UNKNOWN,
        ),
    ),
    (
        "a conda export whose pip section names another patch release",
        {
            "lstm-env.yml": (
                "name: lstm\nchannels:\n  - defaults\ndependencies:\n"
                "  - tensorflow-base=2.10.0=mkl_py310h6a7f48e_0\n  - pip:\n"
                "      - tensorflow==2.10.1\n"
            ),
        },
        (">=2.10,<=2.10.1", ("lstm-env.yml:5", "lstm-env.yml:7"), 2, Keras.TF_KERAS),
    ),
]


@pytest.mark.parametrize(
    ("files", "expected"),
    [pytest.param(files, expected, id=name) for name, files, expected in PIN_FILES],
)
def test_pin_files(tmp_path: Path, files: dict[str, str], expected: Summary) -> None:
    assert _summary(_project(tmp_path, files)) == expected


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-8-sig"])
def test_pin_files_with_a_byte_order_mark_are_read(tmp_path: Path, encoding: str) -> None:
    """PowerShell's ``pip freeze > requirements.txt`` and ``conda env export > env.yml`` write
    UTF-16 (AlexOmarov/ml_snippets' ``unix_environment.yaml``, set Z21 of stop 52)."""
    mark = {"utf-16": b"", "utf-16-be": codecs.BOM_UTF16_BE, "utf-8-sig": b""}[encoding]
    conda = (
        "name: service\nchannels:\n  - defaults\ndependencies:\n  - pip:\n    - tensorflow==2.9.1\n"
    )
    (tmp_path / "unix_environment.yaml").write_bytes(mark + conda.encode(encoding))
    (tmp_path / "requirements.txt").write_bytes(mark + "keras==2.9.0\n".encode(encoding))
    found = read_pins(str(tmp_path))
    assert (str(found.tensorflow), str(found.keras), found.notes) == (
        f"==2.9.1 ({tmp_path}/unix_environment.yaml:6)",
        f"==2.9 ({tmp_path}/requirements.txt:1)",
        (),
    )


def test_a_pin_file_in_another_encoding_is_noted(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_bytes("tensorflow==2.9  # café\n".encode("latin-1"))
    assert read_pins(str(tmp_path)).notes == (
        f"{tmp_path}/requirements.txt: cannot read: not UTF-8 or UTF-16 with a byte order mark",
    )


def test_a_contradiction_is_noted(tmp_path: Path) -> None:
    _project(
        tmp_path, {"requirements.txt": "tensorflow==1.14\n", "constraints.txt": "tensorflow>=2\n"}
    )
    assert read_pins(str(tmp_path)).notes == (
        f"the TensorFlow pins contradict each other (>=2 at {tmp_path}/constraints.txt:1; "
        f"==1.14 at {tmp_path}/requirements.txt:1): one of them, >=1.14",
    )


def test_a_missing_include_is_noted_and_the_rest_read(tmp_path: Path) -> None:
    _project(tmp_path, {"requirements.txt": "-r base.txt\ntensorflow==1.15\n"})
    found = read_pins(str(tmp_path))
    assert (str(found.tensorflow), found.notes) == (
        f"==1.15 ({tmp_path}/requirements.txt:2)",
        (f"{tmp_path}/requirements.txt:1: `-r base.txt`: no such file",),
    )


def test_broken_files_are_noted_not_fatal(tmp_path: Path) -> None:
    _project(
        tmp_path,
        {
            "pyproject.toml": "[project\n",
            "setup.py": "setup(install_requires=[\n",
            "requirements.txt": "tensorflow==${TF_VERSION}\nkeras==2.2.4\n",
        },
    )
    found = read_pins(str(tmp_path))
    assert (str(found.tensorflow), found.keras_flavour, len(found.notes)) == (
        f"any version ({tmp_path}/requirements.txt:1)",
        Keras.KERAS_2,
        3,
    )
    assert found.notes[0].startswith(f"{tmp_path}/pyproject.toml: invalid TOML: ")
    assert found.notes[1] == (
        f"{tmp_path}/requirements.txt:1: cannot read the version in "
        "`tensorflow==${TF_VERSION}`; taken as any"
    )
    assert found.notes[2].startswith(f"{tmp_path}/setup.py: cannot parse: ")


def test_no_pin_file_knows_nothing(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("no pins\n")
    assert read_pins(str(tmp_path)) == Frameworks(root=str(tmp_path))
    assert (Frameworks().tensorflow_major, Frameworks().keras_flavour) == (None, Keras.UNKNOWN)


def test_the_project_root_is_the_nearest_directory_with_a_pin_file(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("tensorflow==1.14\n")
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "setup.cfg").write_text("[metadata]\nname = sub\n")
    assert project_root(str(tmp_path / "src" / "pkg")) == str(tmp_path)
    assert project_root(str(tmp_path / "sub")) == str(tmp_path / "sub")


def test_a_conda_environment_by_any_name_makes_a_project_root(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "workflow.yml").write_text("on: push\njobs: {}\n")
    (tmp_path / "gpu-env.yaml").write_text(
        "channels: [defaults]\ndependencies: [tensorflow-gpu=1.15]\n"
    )
    assert project_root(str(tmp_path / "train")) == str(tmp_path)
    assert str(read_pins(str(tmp_path)).tensorflow) == f">=1.15,<1.16 ({tmp_path}/gpu-env.yaml:2)"


def test_the_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("tensorflow==1.14\n")
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "src").mkdir()
    assert project_root(str(tmp_path / "repo" / "src")) is None


@pytest.mark.parametrize(
    ("parse", "text", "expected"),
    [
        (specifier_range, "!=1.15", "any version"),
        (specifier_range, ">2.10", ">2.10"),
        (specifier_range, "~=1.15.0", ">=1.15,<1.16"),
        (specifier_range, "garbage", "None"),
        (poetry_range, ">= 1.2, < 2.0", ">=1.2,<2"),
        (poetry_range, "^0.2.3", ">=0.2.3,<0.3"),
        (poetry_range, "^1.0 || ^2.0", ">=1,<3"),
        (poetry_range, "1.14", "==1.14"),
        (conda_range, "==1.14.0", "==1.14"),
        (conda_range, " 1.14.* py36_0", ">=1.14,<1.15"),
        (conda_range, "1.13|1.15", ">=1.13,<1.16"),
    ],
)
def test_constraint_syntaxes(parse: object, text: str, expected: str) -> None:
    assert callable(parse)
    assert str(parse(text)) == expected


def _frameworks(tmp_path: Path, requirements: str) -> Frameworks:
    (tmp_path / "requirements.txt").write_text(requirements)
    return read_pins(str(tmp_path))


@pytest.mark.parametrize(
    ("requirements", "graph_mode", "applies"),
    [
        ("tensorflow==2.10\n", False, False),  # before the rule's 2.11
        ("tensorflow>=2.4\n", False, True),  # some allowed version is 2.11 or later
        ("tensorflow==2.15\n", True, False),  # eager only
        ("keras==2.3.1\n", False, False),  # keras outside the rule's range
        ("numpy\n", False, True),  # nothing known: the rule runs
    ],
)
def test_a_rule_applies_where_its_versions_meet_the_project(
    tmp_path: Path, requirements: str, graph_mode: bool, applies: bool
) -> None:
    versions = Versions(tensorflow=">=2.11", keras=">=2.4", eager_only=True)
    found = _frameworks(tmp_path, requirements)
    assert versions.applies(found, graph_mode=graph_mode) is applies


def test_a_declaration_must_be_a_specifier() -> None:
    with pytest.raises(ValueError, match=r"not a version specifier: '2\.11'"):
        Versions(tensorflow="2.11")


def test_targets_replace_the_pins_and_name_their_key(tmp_path: Path) -> None:
    found = _frameworks(tmp_path, "tensorflow==2.15\nkeras==2.15\n")
    targeted = found.with_targets("1.15", "2.2", "pyproject.toml: tool.tflint-leaks")
    assert str(targeted) == (
        "TensorFlow 1: >=1.15,<1.16 (pyproject.toml: tool.tflint-leaks.target-tensorflow); "
        "Keras: keras 2; keras: >=2.2,<2.3 (pyproject.toml: tool.tflint-leaks.target-keras)"
    )
