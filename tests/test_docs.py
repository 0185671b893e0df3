"""The README's results table says what benchmarks/results/decode.json measured."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = ("diffusers-eager", "wanops-eager", "diffusers-compiled", "wanops-compiled")
ROW = re.compile(r"^\| (Wan2\.[12]) (bf16|fp16|fp32) (\d+)x(\d+)x(\d+)(, under (?:bf16|fp16) autocast)? \|(.*)\|\s*$")
CELL = re.compile(r"(\d+\.\d{3}) s(?: \((\d+\.\d{2})x(, bit-exact)?\))?")


def readme_rows() -> dict[str, list[str]]:
    rows = {}
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match:
            model, dtype, height, width, frames, autocast, cells = match.groups()
            key = f"{model.lower()} {dtype} {height}x{width}x{frames}{' under autocast' if autocast else ''}"
            rows[key] = [cell.strip() for cell in cells.split("|")]
    return rows


def measured() -> dict[str, dict]:
    results = json.loads((ROOT / "benchmarks" / "results" / "decode.json").read_text(encoding="utf-8"))
    return {f"{r['model']} {r['dtype']} {r['shape']['height']}x{r['shape']['width']}x{r['shape']['frames']}"
            f"{' under autocast' if r.get('autocast') else ''}": {row["variant"]: row for row in r["rows"]}
            for r in results}


def test_every_measured_case_is_in_the_readme():
    assert set(readme_rows()) == set(measured())


@pytest.mark.parametrize("case", sorted(measured()))
def test_readme_row_matches_decode_json(case):
    cells, rows = readme_rows()[case], measured()[case]
    for variant, cell in zip(COLUMNS, cells):
        match = CELL.search(cell)
        if variant not in rows:  # not measured in this case's run: the table must not show a time
            assert match is None, f"{case} {variant}: a time in {cell!r}, but decode.json has none"
            continue
        assert match, f"{case} {variant}: no time in {cell!r}"
        row = rows[variant]
        assert match.group(1) == f"{row['median_s']:.3f}", (case, variant)
        if match.group(2) is not None:
            assert match.group(2) == f"{row['speedup']:.2f}", (case, variant)
        # The eager column's header claims bit-exactness for every row; another cell claims it itself.
        claimed = variant == "wanops-eager" or match.group(3) is not None
        assert not claimed or row["bit_exact"] is True, f"{case} {variant}: bit-exact claimed, not measured"
    peaks = [f"{rows[v]['peak_bytes'] / 2**30:.2f}" for v in ("diffusers-eager", "wanops-eager")]
    assert cells[len(COLUMNS)] == " / ".join(peaks), case
