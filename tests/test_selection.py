"""The test suite's own selection: what a GPU run picks with ``-m cuda``."""

from conftest import runs_on_cuda


def test_every_test_that_needs_cuda_carries_the_cuda_marker(request):
    """A test skipped for want of a CUDA device must be one ``-m cuda`` selects, or no GPU run would run it (a
    ``skipif`` of its own, without ``@cuda`` and without "cuda" in its name, escaped ``-k cuda`` for five sessions)."""
    missing = [
        item.nodeid for item in request.session.items
        if any("cuda" in str(marker.kwargs.get("reason", "")).lower() for marker in item.iter_markers("skipif"))
        and item.get_closest_marker("cuda") is None
    ]
    assert not missing


class CollectedTest:
    """What runs_on_cuda reads of a collected pytest item: its name (with its parameter ids) and its markers."""

    def __init__(self, name: str, marked: bool) -> None:
        self.name, self.marked = name, marked

    def get_closest_marker(self, name: str):
        return object() if self.marked and name == "cuda" else None


def test_cuda_cases_are_told_by_marker_or_parameter_id():
    assert runs_on_cuda(CollectedTest("test_decode_is_bit_exact[torch.float32-False-1-3-wan2.1-cuda-triton]", False))
    assert runs_on_cuda(CollectedTest("test_many_decodes_of_random_shapes_do_not_grow_memory", True))
    assert not runs_on_cuda(CollectedTest("test_decode_is_bit_exact[torch.float32-False-1-3-wan2.1-cpu-reference]",
                                          False))
