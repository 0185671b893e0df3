"""Index math shared by the kernels."""

import triton
import triton.language as tl  # noqa: F401  (the interpreter looks it up in a jit function's globals)


@triton.jit
def split_index(index, size0, size1, size2):
    """The coordinates of a row-major linear ``index`` over (rest, size2, size1, size0), fastest first:
    ``(i0, i1, i2, rest)``."""
    i0 = index % size0
    rest = index // size0
    i1 = rest % size1
    rest = rest // size1
    return i0, i1, rest % size2, rest // size2
