"""Benchmark: ingestion time and peak memory for some PDFs, in a fresh index.

    python eval/bench_ingest.py FILE_OR_FOLDER... [--chunker semantic] [--baseline [--rounds 3]]

Prints model load time, per-file ingestion time, chunks, and the process's peak RSS.
Run one benchmark per process: peak RSS is per process.

``--baseline``: also the plainest ingestion of the same files in the same process (PyMuPDF's
page text, a recursive 1000/150 character split, the same embedding model, no structure work,
nothing stored), alternated with PolicyBot's for ``--rounds`` rounds in fresh libraries, with the
median of each and their ratio (the ratio holds on a busy machine where absolute times do not).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from policybot.service import PolicyBot  # noqa: E402
from policybot.settings import Settings  # noqa: E402


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def plain_ingest(paths: list[str], embedder) -> tuple[float, int]:
    """Seconds and chunks of the plainest ingestion: page text, recursive split, embed."""
    import pymupdf
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from policybot.ingestion.files import expand_paths

    splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=150)
    started, chunks = time.perf_counter(), 0
    for path in expand_paths(paths):
        with pymupdf.open(path) as doc:
            text = "\n".join(page.get_text() for page in doc)
        pieces = splitter.split_text(text)
        embedder.embed(pieces)
        chunks += len(pieces)
    return time.perf_counter() - started, chunks


def compare(paths: list[str], overrides: dict, rounds: int) -> None:
    """PolicyBot's ingestion (a fresh library each round) against the plain one, alternated."""
    product, plain = [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as home:
            bot = PolicyBot(Settings(**{**overrides, "home": Path(home)}))
            bot.components.embedder.warm_up()
            t0 = time.perf_counter()
            report = bot.ingest(paths)
            product.append(time.perf_counter() - t0)
            chunks = sum(o.chunks or 0 for o in report.outcomes)
            seconds, plain_chunks = plain_ingest(paths, bot.components.embedder)
            plain.append(seconds)
    a, b = statistics.median(product), statistics.median(plain)
    print(
        f"PolicyBot {a:.2f} s ({chunks} chunks) vs plain split {b:.2f} s ({plain_chunks} chunks), median of "
        f"{rounds}: ratio {a / b:.2f} (per round: {', '.join(f'{x / y:.2f}' for x, y in zip(product, plain))})"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--chunker", default=None)
    ap.add_argument("--baseline", action="store_true", help="also the plain ingestion, and the ratio")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.baseline:
        compare(args.paths, {"chunker": args.chunker} if args.chunker else {}, args.rounds)
        return
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
