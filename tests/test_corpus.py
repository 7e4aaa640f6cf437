"""The reduced real-code corpus lints without an internal error (issue 7).

The corpus is the tf-keras wheel from the package registry (about 2 MB, fetched once into
``benchmarks/.cache/``). The test is skipped only when that is impossible because the registry is
unreachable; the full corpus run is ``benchmarks/precision.py``.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture
def corpus(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("corpus")


@pytest.fixture
def precision(corpus: ModuleType) -> ModuleType:
    return importlib.import_module("precision")


def test_reduced_corpus_has_no_internal_error(corpus: ModuleType, precision: ModuleType) -> None:
    try:
        root = corpus.package_root(precision.REDUCED_PACKAGE)
    except corpus.RegistryUnreachable as exc:
        pytest.skip(f"corpus not cached and the package registry is unreachable: {exc}")
    paths = precision.reduced_files(root)
    assert len(paths) == precision.REDUCED_SIZE

    findings = precision.lint(paths, root)

    def listing(code: str) -> list[str]:
        return [
            f"{f['filename']}:{f['location']['row']}: {f['name']}: {f['message']}"
            for f in findings
            if f["code"] == code
        ]

    assert listing(precision.INTERNAL_ERROR) == []
    # Every file of the sample is valid Python that libcst parses.
    assert listing(precision.PARSE_ERROR) == []


def test_unreachable_registry_is_told_apart(
    corpus: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The skip above rests on this: pip failing to connect raises RegistryUnreachable."""
    for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing listens there
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")

    with pytest.raises(corpus.RegistryUnreachable, match="registry is unreachable"):
        corpus.download_wheel("tf-keras", "2.21.0", tmp_path)
