"""Benchmark: ingestion time and peak memory for some PDFs, in a fresh index.

    python eval/bench_ingest.py FILE_OR_FOLDER... [--chunker semantic] [--backend auto|torch|onnx|onnx-int8]
                                [--models-dir DIR] [--baseline [--rounds 3]] [--embedders]

Prints model load time, per-file ingestion time, chunks, and the process's peak RSS.
Run one benchmark per process: peak RSS is per process.

``--baseline``: also the plainest ingestion of the same files in the same process (PyMuPDF's
page text, a recursive 1000/150 character split, the same embedding model, no structure work,
nothing stored) with torch's MiniLM, alternated with PolicyBot's for ``--rounds`` rounds in fresh
libraries, with the median of each and their ratio (the ratio holds on a busy machine where
absolute times do not).

``--backend``: what runs the embedding model (``Settings.embedding_backend``); the ONNX ones need
``policybot models export-onnx`` in ``--models-dir`` (default: the library's, HOME/models).
``--embedders``: chunks/s of each backend (torch, onnx, onnx-int8) and thread count on the files'
own index texts, median of 3.
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


def torch_embedder():
    """The baseline's embedder: the lite model on torch, whatever the product runs on."""
    from policybot.models.embeddings import Embedder
    from policybot.models.profiles import MINILM

    embedder = Embedder(MINILM, Settings(home=Path(tempfile.mkdtemp()), embedding_backend="torch"))
    embedder.warm_up()
    return embedder


def compare(paths: list[str], overrides: dict, rounds: int) -> None:
    """PolicyBot's ingestion (a fresh library each round) against the plain one, alternated."""
    product, plain = [], []
    baseline = torch_embedder()
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as home:
            bot = PolicyBot(Settings(**{**overrides, "home": Path(home)}))
            bot.components.embedder.warm_up()
            t0 = time.perf_counter()
            report = bot.ingest(paths)
            product.append(time.perf_counter() - t0)
            chunks = sum(o.chunks or 0 for o in report.outcomes)
            seconds, plain_chunks = plain_ingest(paths, baseline)
            plain.append(seconds)
    a, b = statistics.median(product), statistics.median(plain)
    print(
        f"PolicyBot ({bot.components.embedder.backend}) {a:.2f} s ({chunks} chunks) vs plain split on torch "
        f"{b:.2f} s ({plain_chunks} chunks), median of "
        f"{rounds}: ratio {a / b:.2f} (per round: {', '.join(f'{x / y:.2f}' for x, y in zip(product, plain))})"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--chunker", default=None)
    ap.add_argument("--baseline", action="store_true", help="also the plain ingestion, and the ratio")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--backend", default="auto", choices=["auto", "torch", "onnx", "onnx-int8"])
    ap.add_argument("--models-dir", type=Path, default=None)
    ap.add_argument("--embedders", action="store_true", help="chunks/s per embedding backend and thread count")
    args = ap.parse_args()
    base: dict = {"embedding_backend": args.backend}
    if args.models_dir:
        base["models_dir"] = args.models_dir
    if args.chunker:
        base["chunker"] = args.chunker
    if args.baseline:
        compare(args.paths, base, args.rounds)
        return
    with tempfile.TemporaryDirectory() as home:
        overrides = {**base, "home": Path(home)}
        bot = PolicyBot(Settings(**overrides))
        t0 = time.perf_counter()
        bot.components.embedder.warm_up()
        print(
            f"profile {bot.components.profile.name}, chunker {bot.settings.chunker}, "
            f"embedder {bot.components.embedder.backend}"
        )
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
        if args.embedders:
            c = bot.components
            texts = [t for _, t in c.registry.chunk_texts(c.index.collection)]
            embedder_speeds(texts, args.models_dir or bot.settings.resolved_models_dir)


def embedder_speeds(texts: list[str], models_dir: Path) -> None:
    """Chunks/s of each backend and thread count on the same texts, longest first as ingestion sends them."""
    from policybot.models.embeddings import Embedder
    from policybot.models.profiles import MINILM, int8_variant

    texts = sorted(texts, key=len, reverse=True)
    for backend in ("torch", "onnx", "onnx-int8"):
        for threads in (1, 2):
            settings = Settings(
                home=Path(tempfile.mkdtemp()),
                models_dir=models_dir,
                embedding_backend=backend,
                cpu_threads=threads,
                device="cpu",
            )
            model = int8_variant(MINILM) if backend == "onnx-int8" else MINILM
            embedder = Embedder(model, settings)
            try:
                embedder.warm_up()
            except Exception as exc:  # no export: say so and go on
                print(f"{backend}: {exc}")
                break
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                embedder.embed(texts)
                times.append(time.perf_counter() - t0)
            print(
                f"{backend}, {threads} thread(s), batch {embedder.batch_size}: "
                f"{len(texts) / statistics.median(times):.1f} chunks/s ({len(texts)} chunks)"
            )


if __name__ == "__main__":
    main()
