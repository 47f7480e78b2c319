"""Time the systems' correlation intervals: scipy row by row (the loop it replaced) against the batched rows.

    .venv/bin/python bench/system_correlations.py [--draws 1000] [--systems 4 8 16]

Per correlation and number of systems: seconds for `n_draws` bootstrap draws computed one scipy call per
draw (as `reports.analysis.systems._draw_interval` did before) and in one batch (`draw_correlations`, as it
does now), their ratio, and whether the values are equal bit for bit. Both run side by side in one process,
so a loaded machine slows both alike.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reports.analysis.systems import CORRELATIONS, _correlation, draw_correlations  # noqa: E402


def row_by_row(function, x, y):
    values = []
    for row_x, row_y in zip(x, y):
        keep = ~(np.isnan(row_x) | np.isnan(row_y))
        values.append(_correlation(function, row_x[keep], row_y[keep]))
    return np.array(values, dtype=float)


def timed(call, *args):
    start = time.perf_counter()
    result = call(*args)
    return time.perf_counter() - start, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--systems", type=int, nargs="+", default=[4, 8, 16])
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    draw_correlations("pearsonr", rng.random((3, 4)), rng.random((3, 4)))  # scipy imported before timing
    print(f"{'correlation':<12} {'systems':>7} {'row by row':>11} {'batched':>9} {'speed-up':>9}  equal")
    for n_systems in args.systems:
        x, y = rng.random((args.draws, n_systems)), rng.random((args.draws, n_systems))
        x[rng.random(x.shape) < 0.01] = np.nan  # a system missing from a draw now and then
        for function in CORRELATIONS.values():
            slow, expected = timed(row_by_row, function, x, y)
            fast, batched = timed(draw_correlations, function, x, y)
            equal = np.array_equal(expected, batched, equal_nan=True)
            print(f"{function:<12} {n_systems:>7} {slow:>10.3f}s {fast:>8.4f}s {slow / fast:>8.0f}x  {equal}")


if __name__ == "__main__":
    main()
