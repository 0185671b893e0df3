"""wanops::channels_last_copy against ATen's ``x.contiguous(memory_format=...)``: same values, same strides, a new tensor."""

import pytest
import torch
import torch.nn.functional as F
from conftest import DTYPES, HAS_CUDA, KERNEL_DEVICE, cuda, impl_params, random_tensor, run_impl
from hypothesis import example, given
from hypothesis import strategies as st
from test_decoder import assert_same_decode, pair, real_or_tiny_latents

from torch_wanops import decoder as decoder_module
from torch_wanops.configs import CONFIGS
from torch_wanops.ops import channels_last_copy
from torch_wanops.ops._common import aten_suggests_channels_last, dense_strides


def channels_last_of(x: torch.Tensor) -> torch.Tensor:
    """ATen's own copy: what a conv with a channels-last input makes of a contiguous weight."""
    return x.contiguous(memory_format=torch.channels_last_3d if x.dim() == 5 else torch.channels_last)


def canonical_strides(x: torch.Tensor) -> tuple:
    layout = torch.channels_last_3d if x.dim() == 5 else torch.channels_last
    return torch.empty(x.shape, device="meta", memory_format=layout).stride()


def assert_copied(x: torch.Tensor, impl: str) -> torch.Tensor:
    out = run_impl(impl, channels_last_copy, x)
    assert out.dtype == x.dtype and out.device == x.device and out.shape == x.shape
    assert torch.equal(out, x)
    assert out.stride() == canonical_strides(x)
    assert out.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    return out


@impl_params()
@given(
    shape=st.one_of(
        st.tuples(st.integers(1, 70), st.integers(1, 70), st.integers(1, 4), st.integers(1, 4), st.integers(1, 4)),
        st.tuples(st.integers(1, 70), st.integers(1, 70), st.integers(1, 5), st.integers(1, 9)),
    ),
    dtype=st.sampled_from(DTYPES),
    seed=st.integers(0, 2**16),
)
@example(shape=(96, 96, 3, 3, 3), dtype=torch.bfloat16, seed=0)  # a Wan2.1 conv weight
@example(shape=(17, 33, 3, 1, 1), dtype=torch.float16, seed=1)  # a time conv's
@example(shape=(5, 7, 3, 3), dtype=torch.float32, seed=2)  # an upsampler Conv2d's
def test_copies_contiguous_tensors_channels_last(device, impl, shape, dtype, seed):
    x = random_tensor(shape, dtype, device, seed)
    out = assert_copied(x, impl)
    if not x.is_contiguous(memory_format=torch.channels_last_3d if x.dim() == 5 else torch.channels_last):
        assert out.stride() == channels_last_of(x).stride()  # the tensor ATen's conv would have made


@impl_params()
@pytest.mark.parametrize("layout", ["channels_last", "permuted", "cropped", "expanded"])
def test_other_layouts_take_the_reference(device, impl, layout):
    """Non-contiguous x (already channels-last, permuted, a cropped view, a broadcast): a fresh channels-last copy too."""
    base = random_tensor((6, 10, 3, 4, 5), torch.bfloat16, device, 3)
    x = {
        "channels_last": base.contiguous(memory_format=torch.channels_last_3d),
        "permuted": base.permute(0, 2, 1, 3, 4).contiguous().permute(0, 2, 1, 3, 4),
        "cropped": base[1:5, 2:9, :, 1:, :4],
        "expanded": base[:1, :, :, :, :1].expand(3, 10, 3, 4, 7),
    }[layout]
    assert_copied(x, impl)


@pytest.mark.parametrize(
    "x,error,match",
    [
        ("x", TypeError, "x must be a torch.Tensor"),
        (torch.ones(2, 3, 4), ValueError, "x must be a 4-D or 5-D tensor"),
        (torch.ones(1, 2, 3, 4, 5, 6), ValueError, "x must be a 4-D or 5-D tensor"),
    ],
)
def test_invalid_arguments_are_named(x, error, match):
    with pytest.raises(error, match=match):
        channels_last_copy(x)
    if isinstance(x, torch.Tensor):  # the op itself checks too (a call that skips the wrapper)
        with pytest.raises(error, match=match):
            torch.ops.wanops.channels_last_copy(x)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_opcheck(requires_grad):
    for device in ["cpu"] + (["cuda"] if HAS_CUDA else []):
        for shape in ((7, 5, 3, 2, 3), (4, 6, 3, 3)):
            x = random_tensor(shape, torch.float32, device, 4).requires_grad_(requires_grad)
            torch.library.opcheck(torch.ops.wanops.channels_last_copy.default, (x,))


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_conv_with_the_copy_gives_the_same_output(compiled):
    """A conv handed the copy as its weight computes what it computes with the contiguous weight."""
    device = KERNEL_DEVICE or "cpu"
    x = random_tensor((1, 8, 3, 5, 6), torch.float32, device, 5).contiguous(memory_format=torch.channels_last_3d)
    weight = random_tensor((4, 8, 3, 3, 3), torch.float32, device, 6)

    def conv_with_copy(a, w):
        return F.conv3d(a, channels_last_copy(w))

    run = torch.compile(conv_with_copy, fullgraph=True, backend="aot_eager") if compiled else conv_with_copy
    out, expected = run(x, weight), F.conv3d(x, weight)
    assert torch.equal(out, expected) and out.stride() == expected.stride()


def test_decoder_hands_convs_the_copy_only_where_aten_would_copy(monkeypatch):
    """CUDA channels-last inputs with large contiguous weights of their dtype get the copy; everything else the weight itself."""
    copies = []
    monkeypatch.setattr(decoder_module, "channels_last_copy", lambda w: copies.append(w) or channels_last_of(w))
    monkeypatch.setattr(torch.Tensor, "is_cuda", property(lambda self: True))  # the rule, not a GPU, is under test
    weight = torch.ones(4, 3, 3, 3, 3)
    monkeypatch.setattr(decoder_module, "_COPIED_WEIGHT_ELEMENTS", weight.numel() + 1)
    channels_last = torch.ones(1, 3, 4, 5, 6).contiguous(memory_format=torch.channels_last_3d)
    assert decoder_module._conv_weight_for(weight, channels_last) is weight  # small: ATen's copy is cheaper
    monkeypatch.setattr(decoder_module, "_COPIED_WEIGHT_ELEMENTS", weight.numel())
    assert decoder_module._conv_weight_for(weight, channels_last).is_contiguous(memory_format=torch.channels_last_3d)
    assert copies == [weight]
    conv2d_weight = torch.ones(4, 3, 3, 9)
    conv2d_input = torch.ones(2, 3, 5, 6).contiguous(memory_format=torch.channels_last)
    assert decoder_module._conv_weight_for(conv2d_weight, conv2d_input).is_contiguous(memory_format=torch.channels_last)
    assert copies == [weight, conv2d_weight]
    for other_weight, padded in [
        (weight, channels_last.contiguous()),  # stock's layout: ATen keeps the weight contiguous
        (channels_last_of(weight), channels_last),  # already laid out: ATen copies nothing
        (weight.half(), channels_last),  # another dtype: ATen's copy would convert too
        (torch.ones(40, 3, 1, 1, 1), channels_last),  # 1x1x1: contiguous is channels-last already
    ]:
        assert decoder_module._conv_weight_for(other_weight, padded) is other_weight
    monkeypatch.setattr(decoder_module, "CHANNELS_LAST_WEIGHT_COPIES", False)
    assert decoder_module._conv_weight_for(weight, channels_last) is weight
    assert copies == [weight, conv2d_weight]


def test_decode_keeps_one_copy_of_each_small_weight(monkeypatch):
    """Inside weight_copies_kept, a small weight ATen would copy is copied once, as ATen copies it, and handed on
    until it changes; past the budget, outside the block or with the switch off, the weight itself goes."""
    monkeypatch.setattr(torch.Tensor, "is_cuda", property(lambda self: True))  # the rule, not a GPU, is under test
    small, other = torch.randn(4, 3, 3, 3, 3), torch.randn(5, 3, 3, 3, 3)
    padded = torch.ones(1, 3, 4, 5, 6).contiguous(memory_format=torch.channels_last_3d)
    conv2d_weight, conv2d_input = torch.randn(4, 3, 3, 9), torch.ones(2, 3, 5, 6).contiguous(
        memory_format=torch.channels_last)
    assert decoder_module._conv_weight_for(small, padded) is small
    monkeypatch.setattr(decoder_module, "DECODE_WEIGHT_COPY_BYTES", (small.numel() + conv2d_weight.numel()) * 4)
    with decoder_module.weight_copies_kept():
        copy = decoder_module._conv_weight_for(small, padded)
        assert torch.equal(copy, small) and copy.stride() == channels_last_of(small).stride()
        assert decoder_module._conv_weight_for(small, padded) is copy
        conv2d_copy = decoder_module._conv_weight_for(conv2d_weight, conv2d_input)
        assert torch.equal(conv2d_copy, conv2d_weight)
        assert conv2d_copy.stride() == channels_last_of(conv2d_weight).stride()
        assert decoder_module._conv_weight_for(other, padded) is other  # over the budget
        assert decoder_module._conv_weight_for(small, padded.contiguous()) is small  # stock's layout
        with torch.no_grad():
            small.add_(1.0)  # a weight changed in place is copied again
        changed = decoder_module._conv_weight_for(small, padded)
        assert changed is not copy and torch.equal(changed, small)
    assert decoder_module._conv_weight_for(small, padded) is small
    monkeypatch.setattr(decoder_module, "DECODE_WEIGHT_COPIES", False)
    with decoder_module.weight_copies_kept():
        assert decoder_module._conv_weight_for(small, padded) is small


def test_decode_keeps_the_per_chunk_weights_first_large_ones_too(monkeypatch):
    """The per-chunk stages' weights are kept whatever their size (a large one copied once, by channels_last_copy),
    in their order while they fit in PER_CHUNK_WEIGHT_COPY_BYTES, without spending the other weights' budget; a
    large weight outside them is copied on every call; with PER_CHUNK_WEIGHT_COPIES off none is preferred."""
    monkeypatch.setattr(torch.Tensor, "is_cuda", property(lambda self: True))  # the rule, not a GPU, is under test
    copied = []
    monkeypatch.setattr(decoder_module, "channels_last_copy", lambda w: copied.append(w) or channels_last_of(w))
    large, large_other, small, small_other, over = (torch.randn(shape) for shape in (
        (6, 3, 3, 3, 3), (7, 3, 3, 3, 3), (4, 3, 3, 3, 3), (5, 3, 3, 3, 3), (3, 3, 3, 3, 3)))
    monkeypatch.setattr(decoder_module, "_COPIED_WEIGHT_ELEMENTS", large.numel())
    padded = torch.ones(1, 3, 4, 5, 6).contiguous(memory_format=torch.channels_last_3d)
    monkeypatch.setattr(decoder_module, "DECODE_WEIGHT_COPY_BYTES", small_other.numel() * 4)
    monkeypatch.setattr(decoder_module, "PER_CHUNK_WEIGHT_COPY_BYTES", (large.numel() + small.numel()) * 4)
    with decoder_module.weight_copies_kept([large, small, over]):
        copy = decoder_module._conv_weight_for(large, padded)
        assert torch.equal(copy, large) and copy.stride() == channels_last_of(large).stride() and copied == [large]
        assert decoder_module._conv_weight_for(large, padded) is copy and copied == [large]
        small_copy = decoder_module._conv_weight_for(small, padded)
        assert small_copy is not small and decoder_module._conv_weight_for(small, padded) is small_copy
        other_copy = decoder_module._conv_weight_for(small_other, padded)  # the other budget, untouched
        assert other_copy is not small_other and torch.equal(other_copy, small_other)
        assert decoder_module._conv_weight_for(over, padded) is over  # past the per-chunk budget, and the other's
        for _ in range(2):  # a large weight outside them: channels_last_copy on every call
            assert decoder_module._conv_weight_for(large_other, padded) is not large_other
        assert copied == [large, large_other, large_other]
        with torch.no_grad():
            large.add_(1.0)  # changed in place: copied again
        changed = decoder_module._conv_weight_for(large, padded)
        assert changed is not copy and torch.equal(changed, large) and copied[-1] is large
    monkeypatch.setattr(decoder_module, "PER_CHUNK_WEIGHT_COPIES", False)
    copied.clear()
    with decoder_module.weight_copies_kept([large, small]):
        for _ in range(2):
            assert decoder_module._conv_weight_for(large, padded) is not large
        assert copied == [large, large]


@pytest.mark.parametrize("arch", ["wan2.1-tiny", "wan2.2-tiny"])
@pytest.mark.parametrize("through_second_up_block", [True, False], ids=["second-up-block", "first-up-block"])
def test_per_chunk_conv_weights_are_the_ones_every_later_chunk_runs(arch, through_second_up_block, monkeypatch):
    """per_chunk_conv_weights names exactly the conv weights _decode_after_latent_stage computes with (recorded at
    every conv call of a decode), once each, whichever up block the latent stage ends at."""
    monkeypatch.setattr(decoder_module, "LATENT_STAGE_THROUGH_SECOND_UP_BLOCK", through_second_up_block)
    in_later_stages, used, stage_blocks = [False], {}, []
    for conv_class in (torch.nn.Conv2d, torch.nn.Conv3d):
        def recording_conv(self, x, weight, bias, conv=conv_class._conv_forward):
            if in_later_stages[0]:
                used[id(weight)] = weight
            return conv(self, x, weight, bias)

        monkeypatch.setattr(conv_class, "_conv_forward", recording_conv)
    later_stages = decoder_module.OmniWanDecoder._decode_after_latent_stage

    def recording_later_stages(self, *args, **kwargs):
        stage_blocks.append(args[-1])
        in_later_stages[0] = True
        try:
            return later_stages(self, *args, **kwargs)
        finally:
            in_later_stages[0] = False

    monkeypatch.setattr(decoder_module.OmniWanDecoder, "_decode_after_latent_stage", recording_later_stages)
    vae = decoder_module.OmniAutoencoderKLWan(**CONFIGS[arch]).eval()
    with torch.no_grad():
        vae.decoder.decode_latents(vae.post_quant_conv(torch.randn(1, 4, 3, 4, 4)), [None] * 64)
    assert stage_blocks == [2 if through_second_up_block else 1] * 2
    weights = decoder_module.per_chunk_conv_weights(vae.decoder, stage_blocks[0])
    assert len({id(weight) for weight in weights}) == len(weights) == len(used)
    assert all(used.get(id(weight)) is weight for weight in weights)


def test_decode_latents_keeps_weight_copies_for_its_frames(monkeypatch):
    """decode_latents runs every chunk inside one weight_copies_kept block, and leaves it when it returns."""
    seen = []
    causal_conv = decoder_module.causal_conv
    monkeypatch.setattr(decoder_module, "causal_conv", lambda *args, **kwargs: seen.append(
        decoder_module._decode_weight_copies.get()) or causal_conv(*args, **kwargs))
    vae = decoder_module.OmniAutoencoderKLWan(**CONFIGS["wan2.1-tiny"]).eval()
    latents = torch.randn(1, 4, 3, 4, 4)
    with torch.no_grad():
        vae.decoder.decode_latents(vae.post_quant_conv(latents), [None] * 64)
    assert seen and seen[0] is not None and all(copies is seen[0] for copies in seen)
    assert decoder_module._decode_weight_copies.get() is None


@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(1024, 1024, 3, 3, 3), (512, 1024, 3, 3, 3), (2048, 1024, 3, 1, 1), (512, 512, 3, 3),
                                   (96, 96, 3, 3, 3), (12, 256, 3, 3, 3)])
def test_decoder_weights_on_cuda(dtype, shape):
    """The Wan decoders' conv weights: ATen's channels-last copy, bit for bit and stride for stride."""
    x = random_tensor(shape, dtype, "cuda", 7)
    out = assert_copied(x, "triton")
    assert out.stride() == channels_last_of(x).stride()


@cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_wan22_decode_copies_its_large_weights_on_cuda(dtype, monkeypatch):
    """Wan2.2's decoder (real config, random weights) hands its large conv weights to channels_last_copy, and
    decodes stock's bits: the lever must not stop paying silently. The per-chunk stages' large weights are copied
    once for the decode where they fit in PER_CHUNK_WEIGHT_COPY_BYTES (all of bf16's 154 MiB, part of fp32's),
    the others once per chunk."""
    copied = []
    copy = decoder_module.channels_last_copy
    monkeypatch.setattr(decoder_module, "channels_last_copy", lambda w: copied.append(tuple(w.shape)) or copy(w))
    stock, omni = pair("wan2.2", dtype, "cuda")
    z = real_or_tiny_latents("wan2.2", dtype)
    assert_same_decode(stock, omni, z)
    assert (1024, 1024, 3, 3, 3) in copied
    assert all(torch.Size(shape).numel() >= decoder_module._COPIED_WEIGHT_ELEMENTS for shape in copied)
    weights = decoder_module.per_chunk_conv_weights(omni.decoder, decoder_module.stage_up_blocks(omni.decoder, z))
    kept = decoder_module.DecodeWeightCopies(0, weights, decoder_module.PER_CHUNK_WEIGHT_COPY_BYTES).per_chunk
    assert (len(kept) == len(weights)) == (dtype == torch.bfloat16)
    for shape in [(512, 512, 3, 3, 3), (512, 1024, 3, 3, 3)]:
        of_shape = [weight for weight in weights if weight.shape == shape]
        once = sum(id(weight) in kept for weight in of_shape)
        assert of_shape and copied.count(shape) == once + (len(of_shape) - once) * z.shape[2]


def test_a_weight_goes_as_it_is_where_aten_calls_the_input_contiguous(monkeypatch):
    """One frame of a (B, H, W, T, C)-stored upsampler input: dense channels-last, but its batch stride is the
    channels' span, so ATen's conv takes it as contiguous; a channels-last weight would switch ATen's kernels
    (fp32 tiny decodes changed bits on the H200). The weight then goes as it is, large or small."""
    monkeypatch.setattr(torch.Tensor, "is_cuda", property(lambda self: True))
    one_frame = torch.empty_strided((1, 32, 8, 12), (32, 1, 384, 32))
    assert one_frame.is_contiguous(memory_format=torch.channels_last)
    small, large = torch.randn(16, 32, 3, 3), torch.empty(1 << 22, 1, 1, 3)
    with decoder_module.weight_copies_kept():
        assert decoder_module._conv_weight_for(small, one_frame) is small
        assert decoder_module._conv_weight_for(large, torch.empty_strided((1, 1, 8, 12), (1, 1, 12, 1))) is large
        canonical = decoder_module._conv_weight_for(small, torch.empty(1, 32, 8, 12, memory_format=torch.channels_last))
        assert canonical is not small and canonical.is_contiguous(memory_format=torch.channels_last)


def dense_layout(shape, order):
    """A dense tensor of ``shape`` with dims laid out innermost first in ``order``."""
    return torch.empty_strided(shape, dense_strides(shape, order))


@given(
    rank=st.sampled_from([4, 5]),
    sizes=st.lists(st.sampled_from([1, 1, 2, 3, 5]), min_size=5, max_size=5),
    order_seed=st.randoms(use_true_random=False),
    from_storage=st.booleans(),
)
@example(rank=4, sizes=[1, 4, 2, 3, 1], order_seed=None, from_storage=False)
def test_aten_suggests_channels_last_as_atens_conv_decides(rank, sizes, order_seed, from_storage):
    """aten_suggests_channels_last against ATen's own choice of layout for a conv of that input with a contiguous
    weight (asked as for the CPU's oneDNN backend, which follows the input's suggest_memory_format in 4-D and 5-D),
    on dense tensors in every order of their dims, size-1 dims included, and on slices of frames stored inside each
    pixel."""
    shape = tuple(sizes[:rank])
    order = list(range(rank))[::-1]
    if order_seed is not None:
        order_seed.shuffle(order)
    x = dense_layout(shape, order)
    if from_storage:  # a frame slice of a (B, H, W, T, C)-stored tensor, viewed as (B * T, C, H, W) per frame
        frames = dense_layout((1, shape[1], 3, *shape[2:4]), (1, 2, 4, 3, 0))[:, :, 1]
        x = frames if rank == 4 else frames.unsqueeze(2)
    weight = torch.empty(2, x.shape[1], *([1] * (rank - 2)))
    chosen = torch._C._conv_determine_backend_memory_format(x, weight, torch._C._ConvBackend.Mkldnn)
    assert aten_suggests_channels_last(x) == (chosen in (torch.channels_last, torch.channels_last_3d))
