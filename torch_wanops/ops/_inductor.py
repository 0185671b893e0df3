"""Inductor's lowerings of the wanops ops, registered when the package is imported.

Inductor lowers an op it has no lowering for through an implicit fallback, whose first use in a process
formats a log line holding ``str`` of the op's inputs' IR (torch 2.11 formats it whether or not the line is
logged, 2.13 only when it is). An extern kernel's IR prints the kernels it reads, and theirs, back to the
graph's inputs, once per path. A compiled Wan decoder chunk on CUDA is nearly all extern kernels (convs and
wanops ops) with residual blocks sharing their inputs, so the string grows with each block: on an H100
(torch 2.11) Wan2.2 480x832's first graph had not left it after 350 s, and compiled in 10 s without it.
Registering the very fallback the implicit path would make (``make_fallback`` with the layout constraint that
path derives from the op's tags) skips the line and changes nothing else. Lowerings are global and outlive
``torch._dynamo.reset()``.
"""

from __future__ import annotations

import logging

import torch

from torch_wanops.ops._common import DEFINED_OPS

logger = logging.getLogger(__name__)


def wanops_overloads() -> list[torch._ops.OpOverload]:
    """Every op define_op has defined, as the overload Inductor lowers."""
    return [getattr(torch.ops.wanops, qualname.split("::")[1]).default for qualname in DEFINED_OPS]


def register_inductor_fallbacks() -> bool:
    """Register the implicit path's fallback for each wanops op Inductor has no lowering for; returns whether
    Inductor's lowerings hold every op afterwards.

    Where this torch lacks the private helpers the implicit path uses (False), that path lowers the ops itself,
    formatting its log line.
    """
    try:
        from torch._inductor import lowering
        from torch._library.utils import get_layout_constraint_tag

        for op in ops_without_lowering():
            # As GraphLowering.call_function's implicit fallback does for a custom op.
            constraint = lowering.tag_to_layout_constraint(get_layout_constraint_tag(op, with_default=True))
            lowering.make_fallback(op, layout_constraint=constraint, warn=False)
    except (ImportError, AttributeError, TypeError) as exc:  # another torch's private API: its own path stays
        logger.debug("torch_wanops: Inductor's implicit fallbacks will lower the wanops ops (%s)", exc)
        return False
    return True


def ops_without_lowering() -> list[torch._ops.OpOverload]:
    """The wanops ops Inductor has no lowering for (those its implicit fallback would lower)."""
    from torch._inductor import lowering

    return [op for op in wanops_overloads() if op not in lowering.lowerings]
