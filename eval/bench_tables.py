"""Benchmark: the cheap grid test before find_tables, on every page of every evaluation set.

    python eval/bench_tables.py [FOLDER ...]

For each page it runs the test (``could_hold_table``), then ``find_tables`` regardless, and
counts tables of at least 2 rows and 2 columns (what the reader keeps). A table on a page the
test skips is a table lost. Prints one row per set: pages, pages that pass, tables, tables lost,
the time of find_tables on every page, and the time of the test plus find_tables where it passes.
Folders default to eval/datasets/*/docs and ../shared/eval-data/*/docs.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict
from pathlib import Path

import pymupdf

from policybot.ingestion.pdf import could_hold_table

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="*", type=Path)
    args = ap.parse_args()
    folders = args.folders or [*ROOT.glob("eval/datasets/*/docs"), *ROOT.parent.glob("shared/eval-data/*/docs")]
    per_set: dict[str, Counter] = defaultdict(Counter)
    for folder in sorted(folders):
        for pdf in sorted(folder.glob("*.pdf")):
            c = per_set[folder.parent.name]
            with pymupdf.open(pdf) as doc:
                for page in doc:
                    t0 = time.perf_counter()
                    passes = could_hold_table(page)
                    t1 = time.perf_counter()
                    try:
                        found = [t for t in page.find_tables().tables if t.row_count >= 2 and t.col_count >= 2]
                    except Exception:
                        found = []
                    t2 = time.perf_counter()
                    c["pages"] += 1
                    c["passed"] += passes
                    c["tables"] += len(found)
                    c["test_ms"] += 1000 * (t1 - t0)
                    c["find_ms"] += 1000 * (t2 - t1)
                    c["gated_ms"] += 1000 * (t1 - t0 + (t2 - t1 if passes else 0))
                    if found and not passes:
                        c["lost"] += len(found)
                        print(f"LOST: {pdf.name} page {page.number + 1}: {len(found)} table(s)")
    print("| set | pages | pages that pass | tables | tables lost | find_tables, all pages | test + find_tables |")
    print("|---|---|---|---|---|---|---|")
    for name, c in sorted(per_set.items()):
        print(
            f"| {name} | {c['pages']} | {c['passed']} | {c['tables']} | {c['lost']} | {c['find_ms'] / 1000:.1f} s "
            f"| {c['gated_ms'] / 1000:.1f} s |"
        )


if __name__ == "__main__":
    main()
