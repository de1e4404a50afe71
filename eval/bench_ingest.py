"""Benchmark: ingestion time and peak memory for some PDFs, in a fresh index.

    python eval/bench_ingest.py FILE_OR_FOLDER... [--chunker semantic]

Prints model load time, per-file ingestion time, chunks, and the process's peak RSS.
Run one benchmark per process: peak RSS is per process.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from policybot.service import PolicyBot  # noqa: E402
from policybot.settings import Settings  # noqa: E402


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--chunker", default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as home:
        overrides = {"home": Path(home)}
        if args.chunker:
            overrides["chunker"] = args.chunker
        bot = PolicyBot(Settings(**overrides))
        t0 = time.perf_counter()
        bot.components.embedder.warm_up()
        print(f"profile {bot.components.profile.name}, chunker {bot.settings.chunker}")
        print(f"model load: {time.perf_counter() - t0:.1f} s, peak RSS {peak_rss_mb():.0f} MB")
        t0 = time.perf_counter()
        report = bot.ingest(args.paths)
        total = time.perf_counter() - t0
        for o in report.outcomes:
            print(f"{o.name}: {o.status}, {o.pages} pages, {o.chunks} chunks, {o.seconds:.1f} s {o.message}")
        index_mb = sum(f.stat().st_size for f in Path(home).rglob("*") if f.is_file()) / 1e6
        print(
            f"ingestion total: {total:.1f} s; peak RSS {peak_rss_mb():.0f} MB; index on disk {index_mb:.1f} MB (with "
            "stored PDFs)"
        )


if __name__ == "__main__":
    main()
