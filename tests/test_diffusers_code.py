"""The walk stands in only for diffusers code it mirrors (torch_wanops.diffusers_code).

A diffusers release, or a patch on a class, that changed a mirrored function must not leave the walk computing the
old code: that class's modules then run their own forward, and the decode keeps stock's bits. The digests ignore
what does not change the computation (docstrings, annotations, comments, layout, the function's name) and tell
apart what does.
"""

import ast
import functools
import inspect
import logging
import textwrap

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from diffusers.models.autoencoders import autoencoder_kl_wan
from diffusers.models.autoencoders.autoencoder_kl_wan import AutoencoderKLWan, WanDecoder3d, WanResidualBlock
from test_decoder import assert_same_decode, latents, pair

import torch_wanops
from torch_wanops import cli, diffusers_code
from torch_wanops import decoder as decoder_module


def test_the_installed_diffusers_code_is_recorded():
    """CI runs this under diffusers 0.42.1 and 0.35.0: both ends of RECORDED_VERSIONS."""
    assert diffusers_code.changed_functions() == []
    digests = diffusers_code.digests_in_source(inspect.getsource(autoencoder_kl_wan))
    assert {name: digest in diffusers_code.MIRRORED_CODE[name] for name, digest in digests.items()} == {
        name: True for name in diffusers_code.MIRRORED_CODE
    }


BASE = '''
def forward(self, x, feat_cache=None, feat_idx=[0]):
    h = self.conv(x, feat_cache[feat_idx[0]])
    return x + h * 2
'''

SAME_COMPUTATION = {
    "docstring": '''
def forward(self, x, feat_cache=None, feat_idx=[0]):
    """A docstring."""
    h = self.conv(x, feat_cache[feat_idx[0]])
    return x + h * 2
''',
    "annotations": '''
def forward(self, x: torch.Tensor, feat_cache: list | None = None, feat_idx: list[int] = [0]) -> torch.Tensor:
    h = self.conv(x, feat_cache[feat_idx[0]])
    return x + h * 2
''',
    "comments and layout": '''
def forward(self, x,
            feat_cache=None, feat_idx=[0]):  # a comment
    # another
    h = self.conv(
        x, feat_cache[feat_idx[0]],
    )
    return (x + (h * 2))
''',
    "name": '''
def patched(self, x, feat_cache=None, feat_idx=[0]):
    h = self.conv(x, feat_cache[feat_idx[0]])
    return x + h * 2
''',
}

OTHER_COMPUTATION = {  # variant: (BASE's text, its replacement)
    "operator": ("x + h * 2", "x - h * 2"),
    "constant type": ("h * 2\n", "h * 2.0\n"),
    "operand order": ("x + h * 2", "h * 2 + x"),
    "keyword argument": ("self.conv(x, feat_cache", "self.conv(x, cache_x=feat_cache"),
    "default": ("feat_idx=[0]", "feat_idx=[1]"),
    "statement": ("feat_idx[0]])", "feat_idx[0]]).clone()"),
}


def _digest(source):
    return diffusers_code.tree_digest(ast.parse(source).body[0])


@pytest.mark.parametrize("variant", sorted(SAME_COMPUTATION))
def test_the_digest_ignores_what_does_not_change_the_computation(variant):
    assert _digest(SAME_COMPUTATION[variant]) == _digest(BASE)


@pytest.mark.parametrize("variant", sorted(OTHER_COMPUTATION))
def test_the_digest_tells_other_code_apart(variant):
    text, replacement = OTHER_COMPUTATION[variant]
    assert BASE.count(text) == 1
    assert _digest(BASE.replace(text, replacement)) != _digest(BASE)


def _installed_source(qualified):
    class_name, name = qualified.split(".")
    return textwrap.dedent(inspect.getsource(getattr(getattr(autoencoder_kl_wan, class_name), name)))


@given(qualified=st.sampled_from(sorted(diffusers_code.MIRRORED_CODE)), data=st.data())
def test_comments_anywhere_in_the_installed_code_keep_its_digest(qualified, data):
    """Full-line comments between any of its lines (inside brackets too)."""
    lines = _installed_source(qualified).splitlines()
    insert_at = data.draw(st.lists(st.integers(1, len(lines)), max_size=6), label="comment lines before")
    for index in sorted(insert_at, reverse=True):
        lines.insert(index, "    # " + data.draw(st.text("abc =+-()", max_size=12), label="comment"))
    assert _digest("\n".join(lines)) in diffusers_code.MIRRORED_CODE[qualified]


def _constants(tree):
    return [node for node in ast.walk(tree) if isinstance(node, ast.Constant) and type(node.value) in (int, float)]


@given(qualified=st.sampled_from(sorted(name for name in diffusers_code.MIRRORED_CODE
                                        if _constants(ast.parse(_installed_source(name))))),
       data=st.data())
def test_any_changed_number_in_the_installed_code_changes_its_digest(qualified, data):
    tree = ast.parse(_installed_source(qualified))
    constant = data.draw(st.sampled_from(_constants(tree)), label="constant")
    constant.value += data.draw(st.sampled_from([1, -1, 0.5]), label="change")
    assert diffusers_code.tree_digest(tree.body[0]) not in diffusers_code.MIRRORED_CODE[qualified]


def test_code_that_cannot_be_read_has_no_digest():
    assert diffusers_code.code_digest(lambda self, x: x) is None
    assert diffusers_code.code_digest(torch.add) is None
    assert diffusers_code.code_digest(WanResidualBlock.forward) in diffusers_code.MIRRORED_CODE[
        "WanResidualBlock.forward"]


def test_a_wrapper_of_the_recorded_code_has_no_digest():
    """inspect reads a functools.wraps wrapper's source from the function it wraps: not the wrapper's code."""
    recorded = WanResidualBlock.forward

    @functools.wraps(recorded)
    def wrapper(self, x, feat_cache=None, feat_idx=[0]):  # noqa: B006 - the stock signature
        return recorded(self, x, feat_cache, feat_idx) * 0.5

    assert diffusers_code.tree_digest(ast.parse(textwrap.dedent(inspect.getsource(wrapper))).body[0]) in \
        diffusers_code.MIRRORED_CODE["WanResidualBlock.forward"]
    assert diffusers_code.code_digest(wrapper) is None


def test_the_digest_leaves_the_tree_as_it_was():
    tree = ast.parse(SAME_COMPUTATION["annotations"])
    before = ast.dump(tree)
    diffusers_code.tree_digest(tree.body[0])
    assert ast.dump(tree) == before


def test_what_the_walk_does_not_mirror_counts_as_recorded():
    assert diffusers_code.runs_recorded_code(torch.nn.Conv2d)
    assert diffusers_code.runs_recorded_code(WanDecoder3d, "__init__")  # not a mirrored function
    assert diffusers_code.runs_recorded_code(torch_wanops.OmniWanDecoder)  # by WanDecoder3d.forward


@pytest.fixture
def halved_residual_blocks(monkeypatch):
    """WanResidualBlock.forward replaced, on the class, by code that computes something else (a wrapper, as patches
    are often written, whose source inspect would take from the recorded forward)."""
    recorded = WanResidualBlock.forward

    @functools.wraps(recorded)
    def halved(self, x, feat_cache=None, feat_idx=[0]):  # noqa: B006 - the stock signature
        return recorded(self, x, feat_cache, feat_idx) * 0.5

    monkeypatch.setattr(WanResidualBlock, "forward", halved)
    return halved


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("arch", ["wan2.1-tiny", "wan2.2-tiny"])
@pytest.mark.slow
def test_a_changed_block_runs_its_own_code(halved_residual_blocks, monkeypatch, caplog, arch, dtype):
    stock, omni = pair(arch, dtype)
    z = latents(arch, dtype, "cpu", frames=3)
    with caplog.at_level(logging.WARNING, logger=diffusers_code.__name__):
        got = assert_same_decode(stock, omni, z)
        assert_same_decode(stock, omni, z)
    assert caplog.text.count("WanResidualBlock.forward") == 1  # one warning
    assert diffusers_code.changed_functions() == ["WanResidualBlock.forward"]
    # Had the walk taken it for the recorded code, it would have computed that: other bits.
    monkeypatch.setitem(diffusers_code._verdicts, halved_residual_blocks, True)
    with torch.no_grad():
        assert not torch.equal(omni.decode(z, return_dict=False)[0], got)


def test_info_names_the_changed_code(halved_residual_blocks, capsys):
    assert cli.main(["--device", "cpu", "info"]) == 0
    out = capsys.readouterr().out.split("decoder code")[1]
    assert "changed, run as diffusers has them: WanResidualBlock.forward" in out


def test_info_says_when_the_code_is_as_recorded(capsys):
    assert cli.main(["--device", "cpu", "info"]) == 0
    assert capsys.readouterr().out.split("decoder code")[1].splitlines()[1].strip() == "as recorded"


def _recording(monkeypatch, cls, name):
    """cls.name replaced by a wrapper that records its calls and runs the recorded code: code the walk does not
    know, which computes what stock's does."""
    recorded, calls = getattr(cls, name), []

    def wrapper(*args, **kwargs):
        calls.append(name)
        return recorded(*args, **kwargs)

    monkeypatch.setattr(cls, name, wrapper)
    return wrapper, calls


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compile_vae"])
def test_a_changed_decoder_forward_runs_as_diffusers_has_it(monkeypatch, compiled):
    stock, omni = pair("wan2.2-tiny", torch.float32)
    if compiled:  # fp32 on the CPU is a pair whose graphs give stock's bits: only the changed forward keeps it eager
        assert torch_wanops.compile_vae(omni)
    z = latents("wan2.2-tiny", torch.float32, "cpu", frames=3)
    wrapper, calls = _recording(monkeypatch, WanDecoder3d, "forward")
    assert_same_decode(stock, omni, z)
    stock_calls = 3  # one per latent frame
    assert len(calls) == 2 * stock_calls  # stock's decode and omni's both ran it
    if not compiled:  # the control: taken for the recorded code, the walk runs instead
        calls.clear()
        monkeypatch.setitem(diffusers_code._verdicts, wrapper, True)
        assert_same_decode(stock, omni, z)
        assert len(calls) == stock_calls


def test_a_changed_decode_loop_runs_as_diffusers_has_it(monkeypatch):
    # The batched frame loop on the CPU too (by default CUDA only), so that decode_batching_latent_stage would take it.
    monkeypatch.setattr(decoder_module, "LATENT_STAGE_DEVICES", frozenset({"cpu", "cuda"}))
    monkeypatch.setattr(decoder_module, "LATENT_STAGE_MIN_ELEMENTS", 0)
    stock, omni = pair("wan2.1-tiny", torch.float32)
    z = latents("wan2.1-tiny", torch.float32, "cpu", frames=3)
    wrapper, calls = _recording(monkeypatch, AutoencoderKLWan, "_decode")
    assert_same_decode(stock, omni, z)
    assert calls == ["_decode", "_decode"]
    calls.clear()
    monkeypatch.setitem(diffusers_code._verdicts, wrapper, True)
    assert_same_decode(stock, omni, z)
    assert calls == ["_decode"]  # stock's only: omni's frame loop ran

