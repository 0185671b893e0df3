"""Triton kernel sources of torch_wanops.

Only ``@triton.jit`` functions live here: index math, loads and stores. Argument
checking, allocation and launching are in ``torch_wanops.ops``. A wheel installs
this folder as ``torch_wanops.csrc_triton``.
"""
