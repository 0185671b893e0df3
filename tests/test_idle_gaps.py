"""benchmarks/idle_gaps.py: the GPU's idle stretches from a kernel timeline (no GPU needed)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

from idle_gaps import Gap, idle_gaps  # noqa: E402


def test_gaps_are_the_stretches_no_kernel_covers():
    # b overlaps a (another stream), c starts after both end, d inside c, e after a gap from c's end.
    kernels = [(10.0, 20.0, "a"), (15.0, 25.0, "b"), (30.0, 50.0, "c"), (35.0, 40.0, "d"), (52.5, 60.0, "e")]
    span, gaps = idle_gaps(list(reversed(kernels)))  # any order
    assert span == 50.0
    assert gaps == [Gap(5.0, 15.0, "b", "c"), Gap(2.5, 40.0, "c", "e")]


def test_back_to_back_kernels_leave_no_gap():
    span, gaps = idle_gaps([(0.0, 1.0, "a"), (1.0, 2.0, "b"), (2.0, 3.5, "c")])
    assert (span, gaps) == (3.5, [])
