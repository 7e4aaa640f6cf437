"""``confirm --report``: the HTML report opened in a real headless Chromium (Debian's package):
its charts render, and the page loads nothing from the network."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from tests.runtime.conftest import TARGETS, requires_tensorflow
from tflint_leaks.cli import main
from tflint_leaks.runtime.report import LEFT, LINE_COLOURS, RIGHT, WIDTH

pytestmark = [pytest.mark.runtime, requires_tensorflow]

CHROMIUM = shutil.which("chromium")
#: Without the background-networking flags, Chromium's own connections are refused by this
#: closed network and slow it down; none of them concern the page.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: The initiator of the requests Chromium makes for itself; a page's requests name its origin.
BROWSER = "not an origin"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "report.html"
    code = main(
        ["confirm", str(TARGETS / "python_scalar.py"), "--timeout", "300", "--report", str(path)]
    )
    assert code == 1
    return path


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (`make chromium` installs Debian's package)")
    profile = tmp_path / "profile"
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )


def test_report_charts_render_in_chromium(report: Path, tmp_path: Path) -> None:
    screenshot = tmp_path / "report.png"
    chromium(tmp_path, "--window-size=1100,1400", f"--screenshot={screenshot}", report.as_uri())
    image = Image.open(screenshot).convert("RGB")
    wanted = {bytes.fromhex(colour[1:]): colour for colour in LINE_COLOURS}
    data = image.tobytes()
    drawn: dict[str, list[tuple[int, int]]] = {}
    for offset in range(0, len(data), 3):
        colour = wanted.get(data[offset : offset + 3])
        if colour is not None:
            y, x = divmod(offset // 3, image.width)
            drawn.setdefault(colour, []).append((x, y))
    # the finding's four charts (its traces against calls; traces, graph functions and RSS
    # against loop iterations), each in its own colour, and nothing else
    assert sorted(drawn) == sorted(LINE_COLOURS[:4])
    plot_width = WIDTH - LEFT - RIGHT
    for colour, found in drawn.items():
        assert len(found) > 100, f"the chart drawn in {colour} has {len(found)} pixels"
        xs = [x for x, _ in found]
        # the line crosses the whole plot, and the chart is below the report's header
        assert max(xs) - min(xs) >= plot_width - 10, colour
        assert min(y for _, y in found) > 100, colour


def test_report_dom_has_the_charts_and_nothing_from_outside(report: Path, tmp_path: Path) -> None:
    net_log = tmp_path / "net.json"
    dom = chromium(tmp_path, f"--log-net-log={net_log}", "--dump-dom", report.as_uri()).stdout
    charts = re.findall(r'<svg class="chart".*?</svg>', dom, flags=re.DOTALL)
    titles = [re.findall(r'aria-label="([^"]+)"', chart)[0] for chart in charts]
    assert titles == [
        "distinct traces of `step`",
        "traces of any tf.function",
        "graph functions registered",
        "process memory (RSS, MB)",
    ]
    for chart in charts:
        (points,) = re.findall(r'<polyline points="([^"]+)"', chart)
        assert len(points.split()) >= 10
    assert "<script" not in dom
    log = json.loads(net_log.read_text(encoding="utf-8"))
    names = {number: name for name, number in log["constants"]["logEventTypes"].items()}
    requests = [
        event["params"]
        for event in log["events"]
        if names.get(event["type"]) == "URL_REQUEST_START_JOB" and "url" in event.get("params", {})
    ]
    assert [r["url"] for r in requests if r.get("initiator") != BROWSER] == []
