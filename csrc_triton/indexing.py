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


@triton.jit
def line_tile_program(c_blocks, w_blocks):
    """This program's (line group, channel block, width block), channel blocks fastest, then width
    blocks, then lines: the programs resident at one time cover a few whole lines instead of one
    narrow tile of thousands of lines. Measured on an H200 against the line-fastest grid
    (gpu-logs/session25/A): transposing copies 1.1-1.5x faster, same bits.

    The grid is (c_blocks, w_blocks, line groups), which CUDA runs in that order, where its y and z
    fit (``_backend.line_tile_grid``); else flat, in the same order, split here by division. Each
    32-bit division by a runtime size is ~25 dependent instructions before the program's first load.
    """
    if tl.num_programs(1) * tl.num_programs(2) > 1:
        return tl.program_id(2), tl.program_id(0), tl.program_id(1)
    program = tl.program_id(0).to(tl.uint32)
    c_blocks = tl.cast(c_blocks, tl.uint32)  # a cast, not .to: a kernel may pass a constant
    c_block = program % c_blocks
    rest = program // c_blocks
    w_blocks = w_blocks.to(tl.uint32)
    return (rest // w_blocks).to(tl.int32), c_block.to(tl.int32), (rest % w_blocks).to(tl.int32)


@triton.jit
def divide(n, magic, shift):
    """``n // d`` for 0 <= n < 2**31 by the divisor's (magic, shift) from ``_backend.division_magic(d)``: a
    multiply-high and a shift, where a 32-bit division by a runtime value is ~25 dependent instructions."""
    multiplier = magic.to(tl.uint32) + 0x80000000  # in [2**31, 2**32), passed less 2**31 to stay an int32
    return (tl.umulhi(n.to(tl.uint32) << 1, multiplier) >> shift.to(tl.uint32)).to(tl.int32)


@triton.jit
def split_line(line, height, height_magic, height_shift, frames, frames_magic, frames_shift):
    """(h, t, b) of a line index over (batch, frames, height), h fastest, each size with its
    ``_backend.division_magic``; ``line`` is at most 2**31 - 1, as the grid is."""
    rest = divide(line, height_magic, height_shift)
    b = divide(rest, frames_magic, frames_shift)
    return line - rest * height, rest - b * frames, b


@triton.jit
def dup_up3d_source_offset(b, c, t, h, w, frame_offset, sb, sc, st, sh, sw,
                           FACTOR_T: tl.constexpr, FACTOR_S: tl.constexpr, REPEATS: tl.constexpr):
    """The offset of the source element that DupUp3D copies to output element (b, c, t, h, w).

    DupUp3D repeats each source channel REPEATS times and reads the repeated channel axis as
    (out_channel, t_factor, h_factor, w_factor); ``frame_offset`` frames of its output were sliced
    off the front (drop_first). With every factor 1 it is the identity: the source's own element.
    """
    if FACTOR_T * FACTOR_S * REPEATS == 1:
        return b * sb + c * sc + t * st + h * sh + w * sw
    full_t = t + frame_offset
    repeated_channel = ((c * FACTOR_T + full_t % FACTOR_T) * FACTOR_S + h % FACTOR_S) * FACTOR_S + w % FACTOR_S
    return (b * sb + (repeated_channel // REPEATS) * sc + (full_t // FACTOR_T) * st
            + (h // FACTOR_S) * sh + (w // FACTOR_S) * sw)
