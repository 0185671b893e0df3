"""The wanops ops' Inductor lowerings (torch_wanops/ops/_inductor.py): registered at import, the fallback
Inductor's implicit path would make, without that path's formatting of the inputs' IR."""

import logging
import subprocess
import sys

import pytest
import torch
from torch._inductor import lowering
from torch._inductor.exc import OperatorIssue

import torch_wanops
from torch_wanops.ops._inductor import ops_without_lowering, register_inductor_fallbacks


def test_import_registers_a_lowering_for_every_wanops_op():
    # A fresh interpreter: this one's earlier compiles may have made the lowerings the implicit way.
    code = (
        "import torch, torch_wanops\n"
        "from torch_wanops.ops._common import DEFINED_OPS\n"
        "from torch_wanops.ops._inductor import ops_without_lowering\n"
        "names = sorted(n for n in torch._C._dispatch_get_all_op_names() if n.startswith('wanops::'))\n"
        "print(names == sorted(DEFINED_OPS), ops_without_lowering() == [])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.split() == ["True", "True"], result.stderr


class _FormattingHandler(logging.Handler):
    """Formats each record, as a handler that writes it would (torch >= 2.13 formats the implicit fallback's
    line only then)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.format(record)


@pytest.fixture
def formatted_ops(monkeypatch):
    """The targets whose inputs Inductor formats for its implicit fallback's log line, with that line logged."""
    targets = []
    original = OperatorIssue.operator_str

    def recording(target, args, kwargs):
        targets.append(target)
        return original(target, args, kwargs)

    monkeypatch.setattr(OperatorIssue, "operator_str", staticmethod(recording))
    logger = logging.getLogger("torch._inductor.graph")
    handler, level = _FormattingHandler(), logger.level
    logger.setLevel(logging.INFO)  # setLevel, not the attribute: it clears the loggers' cached levels
    logger.addHandler(handler)
    yield targets
    logger.removeHandler(handler)
    logger.setLevel(level)


def _compile_and_check_cat_pad_5d():
    """A compiled graph (no caches) around cat_pad_5d, equal to eager."""
    def fn(x):
        return torch_wanops.cat_pad_5d((x + 1).contiguous(memory_format=torch.channels_last_3d), None,
                                       (1, 1, 1, 1, 2, 0))[0] * 2

    torch._dynamo.reset()
    x = torch.randn(2, 3, 2, 4, 5)
    with torch._inductor.config.patch(force_disable_caches=True):
        got = torch.compile(fn, fullgraph=True)(x)
    expected = fn(x)
    assert got.stride() == expected.stride() and torch.equal(got, expected)


def test_registered_fallback_is_the_implicit_one_without_formatting_the_ir(formatted_ops, monkeypatch):
    op = torch.ops.wanops.cat_pad_5d.default
    constraints = lowering._maybe_layout_constraints
    # Without a lowering, Inductor's implicit path lowers the op and formats its inputs: the fixture sees it.
    monkeypatch.delitem(lowering.lowerings, op)
    monkeypatch.delitem(constraints, op, raising=False)
    _compile_and_check_cat_pad_5d()
    assert op in formatted_ops and op in lowering.lowerings
    implicit_constraint = constraints.get(op)
    assert implicit_constraint is not None  # the op's exact-strides tag

    monkeypatch.delitem(lowering.lowerings, op)
    monkeypatch.delitem(constraints, op)
    formatted_ops.clear()
    assert register_inductor_fallbacks()
    assert ops_without_lowering() == []
    assert constraints.get(op) is implicit_constraint
    _compile_and_check_cat_pad_5d()
    assert op not in formatted_ops


def test_a_torch_without_the_helpers_keeps_the_implicit_path(monkeypatch):
    op = torch.ops.wanops.dup_up3d_add.default
    monkeypatch.delitem(lowering.lowerings, op)
    monkeypatch.delattr(lowering, "tag_to_layout_constraint")
    assert register_inductor_fallbacks() is False
    assert op not in lowering.lowerings
