"""Test-wide set-up: the cache's signing key lives in a temporary directory, not in the home of
whoever runs the tests (subprocesses inherit it through the environment)."""

from __future__ import annotations

import os
import tempfile

os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="tflint-leaks-tests-")
