"""benchmarks/count_sass.py: which instructions count as the kernel's main path (no GPU needed)."""

import os
import re
import subprocess
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


def test_an_explicit_address_branch_is_followed():
    sass = "\n".join(f"--:-:-:-:1\t{op}" for op in ("FMUL R1, R2, R3;", "@P4 BRA P5, 0x40;", "MUFU.RCP R2, R3;",
                                                    "FCHK P4, R1, R2;", "BSYNC B2;", "EXIT;"))
    assert main_path_opcodes(sass) == ["FMUL", "BRA", "BSYNC"]


def test_the_ptx_norm_arithmetic_takes_fewer_instructions_per_element():
    """The fused norm kernel built for sm_90 (Triton's ptxas, no GPU) at a decoder launch, both layouts of x."""
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks", "count_sass.py")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, check=True).stdout
    per_element = {name: float(count) for name, count in re.findall(r"^(.+?): tile .* ([0-9.]+) per element$", out, re.M)}
    for layout in ("raw channels-last x + bias", "NCDHW x"):
        assert per_element[f"{layout}, norm_ptx"] < 0.9 * per_element[f"{layout}, div.rn"]
