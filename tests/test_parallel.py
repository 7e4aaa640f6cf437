"""The worker pool's scheduling: with a cost, the workers take the items largest first (so no
worker is left with a large file while the others are done), and the results still come back in
the items' order."""

from __future__ import annotations

import os
from pathlib import Path

from tflint_leaks.engine.parallel import Phase

SIZES = [3, 50, 7, 20, 1, 40, 9, 33, 2, 27, 11, 5, 48, 16, 8, 30]


def _record(item: int, log: Path) -> int:
    with log.open("a", encoding="utf-8") as out:  # one short line per write: appended whole
        out.write(f"{os.getpid()} {item}\n")
    return item * 10


def _never(item: int, cause: str) -> int:
    raise AssertionError(f"a worker died on {item}: {cause}")


def test_workers_take_the_largest_items_first_and_results_keep_their_order(
    tmp_path: Path,
) -> None:
    log = tmp_path / "log"
    phase = Phase(_record, log, 2, _never, cost=lambda item: item)
    try:
        assert list(phase.run(SIZES)) == [size * 10 for size in SIZES]
    finally:
        phase.close()
    runs: dict[str, list[int]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        pid, item = line.split()
        runs.setdefault(pid, []).append(int(item))
    assert sorted(item for items in runs.values() for item in items) == sorted(SIZES)
    for items in runs.values():
        assert items == sorted(items, reverse=True)


def test_without_a_cost_items_run_in_their_order(tmp_path: Path) -> None:
    log = tmp_path / "log"
    phase = Phase(_record, log, 1, _never)
    assert list(phase.run(SIZES)) == [size * 10 for size in SIZES]
    assert [int(line.split()[1]) for line in log.read_text().splitlines()] == SIZES
