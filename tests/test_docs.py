"""The README's results tables say what benchmarks/results/decode.json (one H200) and h100/decode.json measured."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = ("diffusers-eager", "wanops-eager", "diffusers-compiled", "wanops-compiled")
ROW = re.compile(r"^\| (Wan2\.[12]) (bf16|fp16|fp32) (\d+)x(\d+)x(\d+)(, under (?:bf16|fp16) autocast)? \|(.*)\|\s*$")
CELL = re.compile(r"(\d+\.\d{3}) s(?: \((\d+\.\d{2})x(, bit-exact)?\))?")
# Each README heading that opens a results table, and the results file its rows are read against.
TABLES = {"## Results (one H200": "decode.json", "### The same decoder on one H100": "h100/decode.json"}


def readme_rows(heading: str) -> dict[str, list[str]]:
    """The rows of the table under ``heading`` (up to the next heading)."""
    rows, under_heading = {}, False
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            under_heading = line.startswith(heading)
        match = ROW.match(line)
        if match and under_heading:
            model, dtype, height, width, frames, autocast, cells = match.groups()
            key = f"{model.lower()} {dtype} {height}x{width}x{frames}{' under autocast' if autocast else ''}"
            rows[key] = [cell.strip() for cell in cells.split("|")]
    return rows


def measured(heading: str) -> dict[str, dict]:
    results = json.loads((ROOT / "benchmarks" / "results" / TABLES[heading]).read_text(encoding="utf-8"))
    return {f"{r['model']} {r['dtype']} {r['shape']['height']}x{r['shape']['width']}x{r['shape']['frames']}"
            f"{' under autocast' if r.get('autocast') else ''}": {row["variant"]: row for row in r["rows"]}
            for r in results}


def test_every_results_row_sits_under_a_checked_heading():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert sum(map(len, map(readme_rows, TABLES))) == sum(1 for line in lines if ROW.match(line))


@pytest.mark.parametrize("heading", TABLES)
def test_every_measured_case_is_in_the_readme(heading):
    assert set(readme_rows(heading)) == set(measured(heading))


@pytest.mark.parametrize("heading, case", [(heading, case) for heading in TABLES for case in sorted(measured(heading))])
def test_readme_row_matches_decode_json(heading, case):
    cells, rows = readme_rows(heading)[case], measured(heading)[case]
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
