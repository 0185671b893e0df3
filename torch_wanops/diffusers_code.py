"""Whether the installed diffusers' Wan decoder code is the code the walk mirrors.

The decoder (decoder.py) stands in for diffusers' forward methods by reproducing what they compute, op for op. A
diffusers release that changed one of them, or a patch that replaced one on its class, would leave the walk computing
the old code: other bits than stock's, silently. So the code of each mirrored function, as a syntax tree without
docstrings, annotations, comments or layout, is compared with its code in the diffusers releases the walk was written
against (RECORDED_VERSIONS), once per function object, at its first use. Where it differs (or its source cannot be
read), the walk stands in for that class no more: its modules run their own forward (exact, not faster), with one
warning. Compiled graphs take the verdict their trace saw.

To record a new diffusers release, once the walk is checked against it:
``python -m torch_wanops.diffusers_code <site-packages>/diffusers/models/autoencoders/autoencoder_kl_wan.py`` prints
each mirrored function's digest, for MIRRORED_CODE.
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import inspect
import logging
import textwrap
from collections.abc import Callable, Sequence

import diffusers
import torch
from diffusers.models.autoencoders import autoencoder_kl_wan

logger = logging.getLogger(__name__)

RECORDED_VERSIONS = "0.35.0-0.42.1"

# "Class.function" -> code_digest of its code in each of RECORDED_VERSIONS. Two where a release changed it: 0.36 passed
# the cache to the blocks by keyword (the mid and up blocks, the decoder), 0.38 made WanRMS_norm normalize fp16 and bf16
# in fp32 (ops.rms_norm_cat_pad_5d.NORM_IS_INSTALLED_DIFFUSERS tells the two apart by their rounding).
MIRRORED_CODE: dict[str, frozenset[str]] = {
    "WanCausalConv3d.forward": frozenset({"19662f164e57bbbb"}),
    "WanRMS_norm.forward": frozenset({"4d070cb7fa45d51d", "b9ce7e7c19afae9f"}),
    "WanUpsample.forward": frozenset({"a550ffd138f5f4f6"}),
    "WanResample.forward": frozenset({"0f3fe0859b023a33"}),
    "WanResidualBlock.forward": frozenset({"5cd1db6d26023120"}),
    "WanAttentionBlock.forward": frozenset({"35846148f4af72b4"}),
    "WanMidBlock.forward": frozenset({"502a80c6cee5c789", "56ec7b37ca0489f0"}),
    "DupUp3D.forward": frozenset({"d1f22ca39404e121"}),
    "WanResidualUpBlock.forward": frozenset({"20a776b2bc67754c", "e65468d72edcd856"}),
    "WanUpBlock.forward": frozenset({"29accbbc430fa2dd", "c988acb4296106af"}),
    "WanDecoder3d.forward": frozenset({"64dba6c2eaac3843", "845c974699a4dade"}),
    "AutoencoderKLWan._decode": frozenset({"36313671d5c2076e"}),
}


def _canonical(node: object) -> str:
    """The tree below ``node`` as text: node types, fields and constants; no positions, contexts or empty fields."""
    if isinstance(node, list):
        return "[" + ",".join(_canonical(item) for item in node) + "]"
    if not isinstance(node, ast.AST):
        return repr(node)
    fields = []
    for name in node._fields:
        value = getattr(node, name, None)
        if name in ("ctx", "type_comment") or value is None or value == []:
            continue
        fields.append(f"{name}={_canonical(value)}")
    return f"{type(node).__name__}({','.join(fields)})"


def _without_docstring_and_annotations(function: ast.FunctionDef) -> ast.FunctionDef:
    function = copy.deepcopy(function)
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    arguments = function.args
    for argument in arguments.posonlyargs + arguments.args + arguments.kwonlyargs + [arguments.vararg, arguments.kwarg]:
        if argument is not None:
            argument.annotation = None
    # The name goes too: a function put in place of a method computes the same under any name.
    return ast.FunctionDef(name="", args=arguments, body=body, decorator_list=function.decorator_list, returns=None)


def tree_digest(function: ast.FunctionDef) -> str:
    """A short digest of what ``function`` computes, as far as its code says."""
    text = _canonical(_without_docstring_and_annotations(function))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def code_digest(function: Callable) -> str | None:
    """tree_digest of ``function``'s source; None where that cannot be read or is not one function definition (a
    lambda, a builtin, a callable object), and for a wrapper (``functools.wraps``), whose source inspect would
    take from the function it wraps."""
    if hasattr(function, "__wrapped__"):
        return None
    try:
        source = textwrap.dedent(inspect.getsource(function))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    return tree_digest(tree.body[0])


# Each mirrored diffusers class, and the name of its function that the walk mirrors.
_MIRRORED_CLASSES: dict[type, str] = {
    getattr(autoencoder_kl_wan, qualified.split(".")[0]): qualified.split(".")[1] for qualified in MIRRORED_CODE
}
_verdicts: dict[Callable, bool] = {}


def _mirrored_class(cls: type) -> type | None:
    """The diffusers class whose code the walk of ``cls`` mirrors: ``cls`` or a base (OmniWanDecoder's is
    WanDecoder3d); None for the others (torch's modules)."""
    return next((base for base in cls.__mro__ if base in _MIRRORED_CLASSES), None)


@torch.compiler.assume_constant_result  # read in Dynamo's trace, not in the graph
def runs_recorded_code(cls: type, name: str = "forward") -> bool:
    """Whether ``cls``'s ``name`` (a mirrored function: of ``cls`` or the diffusers class it derives from) is, as the
    class has it now, the code recorded in MIRRORED_CODE; True for what the walk does not mirror."""
    stock = _mirrored_class(cls)
    if stock is None or _MIRRORED_CLASSES[stock] != name:
        return True
    function = getattr(stock, name)
    verdict = _verdicts.get(function)
    if verdict is None:
        qualified = f"{stock.__name__}.{name}"
        verdict = _verdicts[function] = code_digest(function) in MIRRORED_CODE[qualified]
        if not verdict:
            logger.warning(
                "torch_wanops: %s in diffusers %s is not the code the decoder mirrors (recorded from diffusers %s): "
                "its modules run their own code (exact, not faster). A newer torch_wanops may know it.",
                qualified, diffusers.__version__, RECORDED_VERSIONS,
            )
    return verdict


def changed_functions() -> list[str]:
    """The mirrored functions whose installed code is not recorded (``wanops info``)."""
    return [f"{cls.__name__}.{name}" for cls, name in _MIRRORED_CLASSES.items() if not runs_recorded_code(cls, name)]


def digests_in_source(source: str) -> dict[str, str | None]:
    """code_digest of each mirrored function defined in ``source`` (an autoencoder_kl_wan.py); None where absent."""
    classes = {node.name: node for node in ast.parse(source).body if isinstance(node, ast.ClassDef)}
    digests: dict[str, str | None] = {}
    for qualified in MIRRORED_CODE:
        class_name, name = qualified.split(".")
        functions = [node for node in getattr(classes.get(class_name), "body", [])
                     if isinstance(node, ast.FunctionDef) and node.name == name]
        digests[qualified] = tree_digest(functions[0]) if functions else None
    return digests


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Digests of the mirrored functions in diffusers' autoencoder_kl_wan.py")
    parser.add_argument("sources", nargs="+", help="autoencoder_kl_wan.py files")
    args = parser.parse_args(argv)
    for path in args.sources:
        with open(path, encoding="utf-8") as file:
            digests = digests_in_source(file.read())
        for qualified, digest in digests.items():
            known = digest in MIRRORED_CODE[qualified]
            print(f"{path}\t{qualified}\t{digest}\t{'recorded' if known else 'new'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
