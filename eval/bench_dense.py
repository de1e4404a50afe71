"""Dense search benchmark: exact search over the stored vectors (``store.exact``) against Chroma's
HNSW index, at several library sizes.

    python eval/bench_dense.py [--sizes 1000 10000 50000] [--dim 384] [--queries 50] [--seed 29]

For each size, random unit vectors in ``--dim`` dimensions (384: MiniLM; 768: gte-multilingual-base)
go into a fresh Chroma collection (cosine HNSW, as the library's) in a temporary directory, and into
a ``VectorMatrix`` built from the same rows. It prints, per size: the matrix build time and size,
search p50/p95 (k=10, the whole library in scope, and one document of ten), Chroma's p50 for the same
queries, and Chroma's recall@10 and top-1 agreement against the exact result. Random vectors are a
hard case for HNSW (no clusters), so its recall here is a lower bound; the speed is what counts.
No model, no download.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from policybot.store.exact import VectorMatrix


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else 0.0


def run(size: int, dim: int, queries: int, seed: int) -> dict[str, float]:
    import chromadb

    rng = np.random.default_rng(seed + size)
    vectors = rng.normal(size=(size, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"doc{i % 10}:{i:07d}" for i in range(size)]
    rows = [(cid, cid.split(":")[0], v.tobytes()) for cid, v in zip(ids, vectors)]
    started = time.perf_counter()
    matrix = VectorMatrix.of(rows)
    build_ms = 1000 * (time.perf_counter() - started)
    probes = rng.normal(size=(queries, dim)).astype(np.float32)
    every, one = [f"doc{i}" for i in range(10)], ["doc3"]
    exact_ms, scoped_ms, chroma_ms, recall, top1 = [], [], [], [], 0
    with tempfile.TemporaryDirectory(prefix="policybot-bench-dense-") as tmp:
        client = chromadb.PersistentClient(path=tmp)
        col = client.get_or_create_collection("bench", configuration={"hnsw": {"space": "cosine"}})
        for start in range(0, size, 1000):
            col.add(
                ids=ids[start : start + 1000],
                embeddings=vectors[start : start + 1000],
                metadatas=[{"doc_id": cid.split(":")[0]} for cid in ids[start : start + 1000]],
            )
        for query in probes:
            t = time.perf_counter()
            exact = matrix.nearest(query, 10, every)
            exact_ms.append(1000 * (time.perf_counter() - t))
            t = time.perf_counter()
            matrix.nearest(query, 10, one)
            scoped_ms.append(1000 * (time.perf_counter() - t))
            t = time.perf_counter()
            got = col.query(query_embeddings=[query], n_results=10, include=["distances"])["ids"][0]
            chroma_ms.append(1000 * (time.perf_counter() - t))
            truth = [c for c, _ in exact]
            recall.append(len(set(got) & set(truth)) / 10)
            top1 += bool(got) and got[0] == truth[0]
    return {
        "size": size,
        "build_ms": build_ms,
        "matrix_mb": matrix.matrix.nbytes / 2**20,
        "exact_p50_ms": _percentile(exact_ms, 50),
        "exact_p95_ms": _percentile(exact_ms, 95),
        "scoped_p50_ms": _percentile(scoped_ms, 50),
        "chroma_p50_ms": _percentile(chroma_ms, 50),
        "chroma_recall10": float(np.mean(recall)),
        "chroma_top1": top1 / queries,
    }


def main(argv: list[str] | None = None) -> list[dict[str, float]]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--seed", type=int, default=29)
    args = ap.parse_args(argv)
    print(
        "| chunks | build ms | matrix MB | exact p50 / p95 ms | one document of ten p50 ms | Chroma p50 ms "
        "| Chroma recall@10 | Chroma top-1 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    results = []
    for size in args.sizes:
        r = run(size, args.dim, args.queries, args.seed)
        results.append(r)
        print(
            f"| {size:,} | {r['build_ms']:.0f} | {r['matrix_mb']:.1f} | {r['exact_p50_ms']:.2f} / "
            f"{r['exact_p95_ms']:.2f} | {r['scoped_p50_ms']:.2f} | {r['chroma_p50_ms']:.2f} | "
            f"{r['chroma_recall10']:.3f} | {r['chroma_top1']:.2f} |",
            flush=True,
        )
    return results


if __name__ == "__main__":
    main()
