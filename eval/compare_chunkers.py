"""Compare chunkers and retrieval modes on an eval set (retrieval only, no LLM).

    python eval/compare_chunkers.py ../shared/eval-data/nfip-flood [--chunkers semantic,structure,recursive]

Prints recall@1/5/10 and MRR@10 for dense, BM25 and hybrid (RRF) retrieval over each
chunker's chunks, plus the plain page-based baseline of ../shared/README.md
(PyMuPDF pages, RecursiveCharacterTextSplitter 1000/150, no sections or headers), and
ingestion time per chunker.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from policybot.evaluation import load_dataset, score_retrieval  # noqa: E402
from policybot.lexical import Tokenizer  # noqa: E402
from policybot.retrieval import RankFusion  # noqa: E402
from policybot.service import PolicyBot  # noqa: E402
from policybot.settings import Settings  # noqa: E402


def page_baseline(dataset, bot: PolicyBot) -> dict[str, str]:
    """The shared README's baseline: per-page recursive 1000/150 chunks, dense and BM25."""
    import bm25s
    import numpy as np
    import pymupdf
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=150)
    chunks: list[tuple[str, str]] = []
    for pdf in dataset.docs:
        with pymupdf.open(pdf) as doc:
            for page in doc:
                chunks.extend((pdf.name, t) for t in splitter.split_text(page.get_text()))
    texts = [t for _, t in chunks]
    vectors = bot.embedder.embed(texts)
    tok = Tokenizer()
    bm25 = bm25s.BM25()
    bm25.index([tok(t) or ["\u2205"] for t in texts], show_progress=False)

    def dense(q: str) -> list[tuple[str, float]]:
        sims = vectors @ bot.embedder.embed([q])[0]
        order = np.argsort(-sims)[:50]
        return [(str(i), float(sims[i])) for i in order]

    def lexical(q: str) -> list[tuple[str, float]]:
        docs, scores = bm25.retrieve([tok(q)], k=50, show_progress=False)
        return [(str(int(d)), float(s)) for d, s in zip(docs[0], scores[0]) if s > 0]

    fusion = RankFusion("rrf", 60)
    out = {}
    for mode, fn in {
        "dense": dense,
        "bm25": lexical,
        "hybrid": lambda q: [(f.chunk_id, f.score) for f in fusion.run({"d": dense(q), "l": lexical(q)})],
    }.items():
        scores = score_retrieval(dataset, lambda q: [chunks[int(cid)] for cid, _ in fn(q)[:10]])
        out[mode] = scores.row()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset")
    ap.add_argument("--chunkers", default="semantic,structure,recursive")
    ap.add_argument("--no-header", action="store_true", help="index chunks without title/section header")
    args = ap.parse_args()
    dataset = load_dataset(args.dataset)
    for chunker in args.chunkers.split(","):
        with tempfile.TemporaryDirectory() as home:
            bot = PolicyBot(Settings(home=Path(home), chunker=chunker, contextual_header=not args.no_header))
            bot.embedder.warm_up()
            t0 = time.perf_counter()
            report = bot.ingest(dataset.docs)
            seconds = time.perf_counter() - t0
            n_chunks = sum(o.chunks or 0 for o in report.outcomes)
            print(f"\n## {chunker}: {n_chunks} chunks, ingestion {seconds:.1f} s")
            docs = bot.resolve_docs(None)
            ids = [d.doc_id for d in docs]
            names = {d.doc_id: d.name for d in docs}
            retr = bot.retriever

            def ranked(fused_ids: list[str]) -> list[tuple[str, str]]:
                rows = bot.registry.chunks(bot.index.collection, fused_ids)
                return [(names[rows[c].doc_id], rows[c].text) for c in fused_ids if c in rows]

            modes = {
                "dense": lambda q: ranked([c for c, _ in retr.dense.run(q, 10, ids)]),
                "bm25": lambda q: ranked([c for c, _ in retr.lexical.run(q, 10, ids)]),
                "hybrid": lambda q: ranked([f.chunk_id for f in retr.run(q, 10, ids)]),
            }
            for mode, fn in modes.items():
                print(f"{mode:7s} {score_retrieval(dataset, fn).row()}")
            if chunker == args.chunkers.split(",")[-1]:
                print("\n## page baseline (1000/150 per page, no sections)")
                for mode, row in page_baseline(dataset, bot).items():
                    print(f"{mode:7s} {row}")


if __name__ == "__main__":
    main()
