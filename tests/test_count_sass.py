"""benchmarks/count_sass.py: which instructions count as the kernel's main path (no GPU needed)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

from count_sass import main_path_opcodes  # noqa: E402

SASS = """Function:cat_pad_5d_kernel
--:-:-:-:1\tLDC R1, c[0x0][0x28];
--:-:0:-:1\tS2R R3, SR_CTAID.X;
LBB1:
--:-:-:-:5\t@!P5 BRA LBB2;
--:-:-:-:1\tMUFU.RCP R48, R25;
--:-:-:-:7\t@!P4 EXIT;
--:-:-:-:1\tFFMA R17, -R25, R48, 1;
--:-:-:-:5\tRET.REL.NODEC R48 0x0;
"""


def test_main_path_ends_at_the_first_exit_and_drops_predicates_and_labels():
    assert main_path_opcodes(SASS) == ["LDC", "S2R", "BRA", "MUFU.RCP"]
