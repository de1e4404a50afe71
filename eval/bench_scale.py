"""Scale benchmark (issue 12): how PolicyBot's cost grows with the library.

    python eval/bench_scale.py [--sizes 1000 10000 100000] [--work /tmp/scale/work] [--out /tmp/scale/report]
                               [--corpus /tmp/scale/corpus] [--seed 12] [--rebuild] [--questions 30]
                               [--vector-cache /tmp/scale/vectors.sqlite | --no-vector-cache] [--no-cached-rebuild]
                               [--chroma-url URL | --with-server] [--no-fema] [--no-cold-start] [--browser]

For each size it builds (or reuses) a library of at least that many chunks through the real
pipeline (``PolicyBot.ingest``: parse, chunk, embed, index), from the sample policy, the shared
sets' PDFs and generated policies (``eval/scale_corpus.py``), and reports:

- ingestion throughput (chunks/s) split into parse / chunk / embed / index (timed by wrapping
  ``read_pdf``, the chunker, the embedder and ``DocumentIndex.add`` in the benchmark process);
  uncached (the model embeds) and cached (vectors from the vector cache) runs apart;
- the BM25 (re)build the first search after a change pays;
- adding one ~30-page document to the library (ingest, then until it is searchable);
- first-pass retrieval (``search``, k=10) and a full question without an LLM (``ask``,
  use_llm=False): p50/p95 over ~30 questions, unscoped and scoped to one document (with a
  check that a scoped search returns k results from that document);
- process RSS, disk size of the library, and cold start to the first answer (a fresh
  ``python -c`` process; the Streamlit server until its health endpoint answers; with
  ``--browser`` also a real browser's first answer, as ``eval/bench_app.py`` does).

Once: the 32-page FEMA Dwelling Form ingested in a warm process, split, against the embedder's
raw chunks/s on the same texts.

Each phase runs in its own process (clean RSS figures). Libraries live in ``--work/size-N`` and
are reused when they already hold the size (``--rebuild`` to start again); an interrupted build
continues where it stopped. The vector cache keeps every chunk's vector keyed by (model id,
sha256 of the embedded text), so a rebuild re-indexes without re-embedding. Results: a JSON file,
a Markdown report and a PNG plot in ``--out``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("PYMUPDF_SUGGEST_LAYOUT_ANALYZER", "0")

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import scale_corpus  # noqa: E402

DEFAULT_WORK = Path("/tmp/scale/work")
DEFAULT_OUT = Path("/tmp/scale/report")  # eval/results/ (git-ignored) works as well
DEFAULT_CACHE = Path("/tmp/scale/vectors.sqlite")
QUESTION_SETS = [
    (REPO / "eval" / "datasets" / "citizen-homeshield" / "questions.jsonl", "homeshield-household-policy.pdf"),
    (scale_corpus.SHARED / "nfip-flood" / "questions.jsonl", "nfip-sfip-dwelling.pdf"),
]
COLD_QUESTION = "How does the deductible apply to water damage?"
TARGETS = {  # issue 12, at 100k chunks, lite profile, this 2-core machine
    "search_p50_ms": 150,
    "search_p95_ms": 400,
    "ask_p95_ms": 1000,
    "rss_mb": 2048,
    "add_doc_s": 15,
    "fema_ingest_s": 3,  # issue 24: the FEMA form in a warm process
}


# --- small helpers ---------------------------------------------------------------------------------


def proc_status(field: str, pid: int | str = "self") -> float:
    """A /proc/PID/status memory field (VmRSS, VmHWM) in MB; psutil is not needed."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def rss_mb() -> float:
    try:
        import psutil  # type: ignore[import-not-found]

        return psutil.Process().memory_info().rss / 2**20
    except ImportError:
        return proc_status("VmRSS")


def pct(values: Sequence[float], q: float) -> float:
    """The q-quantile (``policybot.evaluation.metrics.percentile``); NaN for no values."""
    from policybot.evaluation.metrics import percentile

    return percentile(values, q) if values else float("nan")


def dir_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file()) / 2**20 if Path(path).exists() else 0.0


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def git_state() -> dict:
    def run(*cmd: str) -> str:
        try:
            return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=20).stdout
        except Exception:
            return ""

    diff = run("git", "diff", "HEAD", "--", "policybot")
    return {
        "head": run("git", "rev-parse", "--short", "HEAD").strip(),
        "dirty_policybot_files": [
            line[3:] for line in run("git", "status", "--porcelain", "--", "policybot").splitlines() if line.strip()
        ],
        "policybot_diff_sha1": hashlib.sha1(diff.encode()).hexdigest()[:12] if diff else None,
    }


def machine() -> dict:
    mem = 0.0
    try:
        mem = (
            int(
                next(
                    line for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal")
                ).split()[1]
            )
            / 2**20
        )
    except Exception:
        pass
    return {
        "cpus": os.cpu_count(),
        "mem_gb": round(mem, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


# --- the vector cache ------------------------------------------------------------------------------


class VectorCache:
    """Embeddings on disk keyed by (model id, sha256 of the embedded text): SQLite, float32 bytes."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, sha TEXT NOT NULL, dim INTEGER NOT NULL, vec "
            "BLOB NOT NULL, PRIMARY KEY (model, sha)) WITHOUT ROWID"
        )
        self._lock = threading.Lock()

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get_many(self, model: str, shas: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(shas))
        with self._lock:
            for start in range(0, len(unique), 500):
                part = unique[start : start + 500]
                rows = self._db.execute(
                    f"SELECT sha, vec FROM vectors WHERE model=? AND sha IN ({','.join('?' * len(part))})",
                    (model, *part),
                ).fetchall()
                out.update({sha: np.frombuffer(blob, dtype=np.float32) for sha, blob in rows})
        return out

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
                [(model, sha, int(v.shape[-1]), np.asarray(v, dtype=np.float32).tobytes()) for sha, v in items.items()],
            )

    def count(self, model: str | None = None) -> int:
        with self._lock:
            if model is None:
                return int(self._db.execute("SELECT count(*) FROM vectors").fetchone()[0])
            return int(self._db.execute("SELECT count(*) FROM vectors WHERE model=?", (model,)).fetchone()[0])

    def close(self) -> None:
        self._db.close()


class CacheStats:
    def __init__(self) -> None:
        self.hits = 0
        self.misses = 0
        self.model_calls = 0
        self.model_seconds = 0.0


def install_vector_cache(embedder: Any, cache: VectorCache, model_id: str | None = None) -> CacheStats:
    """Make ``embedder.embed`` look vectors up in ``cache`` first and embed only the missing texts.

    Patches this instance only (this process); ``uninstall_vector_cache`` undoes it."""
    original = embedder.embed
    model = model_id or embedder.model.hf_id
    stats = CacheStats()

    def embed(texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return original(texts)
        keys = [VectorCache.key(t) for t in texts]
        found = cache.get_many(model, keys)
        missing = [i for i, k in enumerate(keys) if k not in found]
        stats.hits += len(texts) - len(missing)
        stats.misses += len(missing)
        if missing:
            started = time.perf_counter()
            fresh = np.asarray(original([texts[i] for i in missing]), dtype=np.float32)
            stats.model_calls += 1
            stats.model_seconds += time.perf_counter() - started
            new = {keys[i]: fresh[j] for j, i in enumerate(missing)}
            cache.put_many(model, new)
            found.update(new)
        return np.vstack([found[k] for k in keys]).astype(np.float32, copy=False)

    embedder.embed = embed  # an instance attribute: deleting it brings back the class's method
    return stats


def uninstall_vector_cache(embedder: Any) -> None:
    if "embed" in vars(embedder):
        del embedder.embed


# --- timing the ingestion stages ---------------------------------------------------------------------

# The pipeline's own stage timings (IngestOutcome.timings), grouped as this report shows them.
STAGE_GROUPS = {
    "parse": ("read", "sections"),
    "chunk": ("chunk",),
    "embed": ("embed",),
    "probes": ("probes",),
    "index": ("store", "register"),
}


def ingest_timed(bot: Any, path: Path) -> dict:
    """Ingest one file; its outcome with seconds per stage (as the ingestion pipeline timed them)."""
    started = time.perf_counter()
    outcome = bot.ingest_file(Path(path))
    total = time.perf_counter() - started
    record = {
        "name": outcome.name,
        "status": outcome.status,
        "pages": outcome.pages,
        "chunks": outcome.chunks or 0,
        "seconds": round(total, 4),
        "message": outcome.message if outcome.status == "failed" else "",
    }
    for group, stages in STAGE_GROUPS.items():
        record[group] = round(sum(outcome.timings.get(stage, 0.0) for stage in stages), 4)
    record["other"] = round(max(0.0, total - sum(record[s] for s in STAGE_GROUPS)), 4)
    return record


def make_bot(home: Path, chroma_url: str | None = None) -> Any:
    from policybot.service import PolicyBot
    from policybot.settings import Settings

    return PolicyBot(
        Settings(home=home, profile="lite", llm_mode="off", chroma_url=chroma_url, ollama_host="http://127.0.0.1:9")
    )


def chunk_count(bot: Any) -> int:
    return int(bot.components.registry.chunk_count(bot.components.index.collection))


# --- phase: build a library ----------------------------------------------------------------------------


def phase_build(
    home: Path, size: int, seed: int, corpus_dir: Path, cache_path: Path | None, chroma_url: str | None, log_path: Path
) -> dict:
    """Ingest corpus documents until the library holds ``size`` chunks (continuing a partial one)."""
    started = time.perf_counter()
    bot = make_bot(home, chroma_url)
    t0 = time.perf_counter()
    bot.components.embedder.warm_up()
    warm = time.perf_counter() - t0
    _ = bot.components.probe_vectors  # embedded once per process: kept out of the first document's figures
    stats = None
    cache = None
    if cache_path is not None:
        cache = VectorCache(cache_path)
        stats = install_vector_cache(bot.components.embedder, cache)
    have = {d.name for d in bot.components.index.documents()}
    count = chunk_count(bot)
    added = 0
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("a") as log:
        for path in scale_corpus.corpus(seed, corpus_dir):
            if count >= size:
                break
            if path.name in have:
                continue
            before = (stats.hits, stats.misses) if stats else (0, 0)
            gen_started = time.perf_counter()
            record = ingest_timed(bot, path)
            record["hits"] = (stats.hits - before[0]) if stats else 0
            record["misses"] = (stats.misses - before[1]) if stats else record["chunks"]
            count = chunk_count(bot)
            record.update(library_chunks=count, rss_mb=round(rss_mb(), 1), at=round(time.time(), 1), load1=load()[0])
            record["wall"] = round(time.perf_counter() - gen_started, 4)
            log.write(json.dumps(record) + "\n")
            log.flush()
            added += 1
            if record["status"] == "failed":
                print(f"  FAILED {record['name']}: {record['message']}", flush=True)
            if added % 5 == 0 or count >= size:
                print(
                    f"  {count} chunks ({added} documents this run, {record['name']}: {record['chunks']} chunks in "
                    f"{record['seconds']:.1f} s)",
                    flush=True,
                )
    t0 = time.perf_counter()
    bot.components.index.lexical_ready()
    bm25 = time.perf_counter() - t0
    result = {
        "chunks": count,
        "documents": len(bot.components.index.documents()),
        "added_this_run": added,
        "model_load_s": round(warm, 2),
        "bm25_first_build_s": round(bm25, 3),
        "peak_rss_mb": round(proc_status("VmHWM"), 1),
        "rss_mb": round(rss_mb(), 1),
        "wall_s": round(time.perf_counter() - started, 1),
        "load": load(),
        "cache": vars(stats) if stats else None,
        "cache_entries": cache.count() if cache else None,
    }
    if cache:
        cache.close()
    return result


def summarise_build(records: list[dict]) -> dict:
    """Throughput and the stage split over a build's documents: uncached, cached and all."""
    ok = [r for r in records if r["status"] in ("ingested", "replaced") and r["chunks"]]

    def agg(rows: list[dict]) -> dict | None:
        if not rows:
            return None
        chunks = sum(r["chunks"] for r in rows)
        secs = {s: sum(r[s] for r in rows) for s in ("seconds", "parse", "chunk", "embed", "index", "other")}
        out = {
            "documents": len(rows),
            "chunks": chunks,
            "pages": sum(r["pages"] or 0 for r in rows),
            "seconds": round(secs["seconds"], 2),
            "chunks_per_s": round(chunks / secs["seconds"], 2) if secs["seconds"] else None,
        }
        for s in ("parse", "chunk", "embed", "index", "other"):
            out[f"{s}_s"] = round(secs[s], 2)
            out[f"{s}_share"] = round(secs[s] / secs["seconds"], 3) if secs["seconds"] else None
            out[f"{s}_chunks_per_s"] = round(chunks / secs[s], 1) if secs[s] > 0 else None
        return out

    uncached = [r for r in ok if r.get("hits", 0) == 0]
    cached = [r for r in ok if r.get("misses", 0) == 0 and r.get("hits", 0) > 0]
    tenth = max(1, len(ok) // 10)

    def index_ms(rows: list[dict]) -> float | None:
        c = sum(r["chunks"] for r in rows)
        return round(1000 * sum(r["index"] for r in rows) / c, 2) if c else None

    return {
        "all": agg(ok),
        "uncached": agg(uncached),
        "cached": agg(cached),
        "failed": [r["name"] for r in records if r["status"] == "failed"],
        "index_ms_per_chunk_first_tenth": index_ms(ok[:tenth]),
        "index_ms_per_chunk_last_tenth": index_ms(ok[-tenth:]),
    }


# --- phase: measure a library -----------------------------------------------------------------------------


def load_questions(n: int) -> list[dict]:
    """About ``n`` questions, half from each set, each with the document to scope it to."""
    per = max(1, n // len(QUESTION_SETS))
    out = []
    for path, default_doc in QUESTION_SETS:
        if not path.is_file():
            continue
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        for row in rows[:per]:
            gold_docs = [g.get("doc") for g in row.get("gold") or [] if g.get("doc")]
            scope = (row.get("docs") or gold_docs or [default_doc])[0]
            out.append({"id": row.get("id"), "question": row["question"], "scope": scope})
    return out


def _fresh_query(bot: Any) -> None:
    """Forget remembered query vectors, so each timed question embeds its text as a new one would."""
    queries = getattr(bot.components.embedder, "_queries", None)
    if isinstance(queries, dict):
        queries.clear()


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def latency_block(times: list[float]) -> dict:
    ms = [1000 * t for t in times]
    return {
        "n": len(ms),
        "p50_ms": round(pct(ms, 0.5), 1),
        "p95_ms": round(pct(ms, 0.95), 1),
        "max_ms": round(max(ms), 1) if ms else None,
        "mean_ms": round(statistics.fmean(ms), 1) if ms else None,
    }


def phase_measure(
    home: Path, n_questions: int, seed: int, corpus_dir: Path, chroma_url: str | None, add_doc: bool = True
) -> dict:
    t_start = time.perf_counter()
    bot = make_bot(home, chroma_url)
    t_init = time.perf_counter() - t_start
    warm_s, _ = _timed(bot.warm_up)
    library_chunks = chunk_count(bot)
    docs = {d.name: d for d in bot.components.index.documents()}
    questions = [q for q in load_questions(n_questions) if q["scope"] in docs]
    out: dict[str, Any] = {
        "chunks": library_chunks,
        "documents": len(docs),
        "init_s": round(t_init, 3),
        "warm_up_s": round(warm_s, 3),
        "rss_after_warm_up_mb": round(rss_mb(), 1),
        "load_start": load(),
        "questions": len(questions),
    }
    # The first question after start pays per-library work (probe calibration, BM25 load...).
    _fresh_query(bot)
    out["first_search_after_start_s"] = round(_timed(lambda: bot.search(questions[0]["question"], k=10))[0], 3)
    _fresh_query(bot)
    out["first_ask_after_start_s"] = round(_timed(lambda: bot.ask(questions[0]["question"], use_llm=False))[0], 3)
    for q in questions[:2]:  # and once scoped: that scope's calibration
        bot.search(q["question"], k=10, docs=[q["scope"]])
        bot.ask(q["question"], use_llm=False, docs=[q["scope"]])

    search_t, search_cached_t, ask_t, search_scoped_t, ask_scoped_t = [], [], [], [], []
    stage_times: dict[str, list[float]] = defaultdict(list)
    scoped_hits, scoped_from_doc, dense_scoped, dense_expected, lexical_scoped = [], [], [], [], []
    modes: dict[str, int] = defaultdict(int)
    for q in questions:
        _fresh_query(bot)
        t, _ = _timed(lambda q=q: bot.search(q["question"], k=10))
        search_t.append(t)
        t, _ = _timed(lambda q=q: bot.search(q["question"], k=10))  # the query's vector remembered: the index's share
        search_cached_t.append(t)
        _fresh_query(bot)
        t, answer = _timed(lambda q=q: bot.ask(q["question"], use_llm=False))
        ask_t.append(t)
        modes[answer.mode] += 1
        for stage, secs in answer.timings.items():
            stage_times[stage].append(secs)
        _fresh_query(bot)
        t, res = _timed(lambda q=q: bot.search(q["question"], k=10, docs=[q["scope"]]))
        search_scoped_t.append(t)
        scoped_hits.append(len(res.hits))
        scoped_from_doc.append(sum(h.doc == q["scope"] for h in res.hits))
        _fresh_query(bot)
        t, _ = _timed(lambda q=q: bot.ask(q["question"], use_llm=False, docs=[q["scope"]]))
        ask_scoped_t.append(t)
        # Starvation check one level down: each retriever's own candidate list inside the scope.
        doc = docs[q["scope"]]
        k = bot.settings.candidates_per_retriever
        dense_scoped.append(len(bot.components.retriever.dense.run(q["question"], k, [doc.doc_id])))
        dense_expected.append(min(k, doc.chunks))
        lexical_scoped.append(len(bot.components.retriever.lexical.run(q["question"], k, [doc.doc_id])))
    out.update(
        {
            "load_after_queries": load(),
            "search": latency_block(search_t),
            "search_cached_query": latency_block(search_cached_t),
            "ask": latency_block(ask_t),
            "query_embed": query_embed_latency(bot, [q["question"] for q in questions]),
            "dense_filter": dense_filter_cost(bot, [q["question"] for q in questions]),
            "search_scoped": latency_block(search_scoped_t),
            "ask_scoped": latency_block(ask_scoped_t),
            "ask_stages_p50_ms": {s: round(1000 * pct(v, 0.5), 1) for s, v in stage_times.items()},
            "ask_stages_p95_ms": {s: round(1000 * pct(v, 0.95), 1) for s, v in stage_times.items()},
            "ask_modes": dict(modes),
            "scoped_k": 10,
            "scoped_hits_min": min(scoped_hits) if scoped_hits else None,
            "scoped_hits_mean": round(statistics.fmean(scoped_hits), 2) if scoped_hits else None,
            "scoped_hits_from_doc_min": min(scoped_from_doc) if scoped_from_doc else None,
            "scoped_all_from_doc": all(a == b for a, b in zip(scoped_hits, scoped_from_doc)),
            "scoped_dense_candidates_min": min(dense_scoped) if dense_scoped else None,
            "scoped_dense_expected_min": min(dense_expected) if dense_expected else None,
            "scoped_dense_full": all(a == b for a, b in zip(dense_scoped, dense_expected)),
            "scoped_lexical_candidates_min": min(lexical_scoped) if lexical_scoped else None,
            "rss_mb": round(rss_mb(), 1),
            "peak_rss_mb": round(proc_status("VmHWM"), 1),
            "disk_mb": round(dir_mb(home), 1),
            "disk_breakdown_mb": {
                p.name: round(dir_mb(p) if p.is_dir() else p.stat().st_size / 2**20, 1) for p in sorted(home.iterdir())
            },
        }
    )
    if add_doc:
        out["add_document"] = add_one_document(bot, seed, corpus_dir)
        out["peak_rss_after_add_mb"] = round(proc_status("VmHWM"), 1)
    return out


def query_embed_latency(bot: Any, questions: list[str]) -> dict:
    """Embedding one question with torch's default thread count and with one thread: on a busy
    2-core machine a 2-thread matmul waits for a descheduled thread (the first is the figure the
    app gets)."""
    import torch

    default = torch.get_num_threads()
    out = {"default_threads": default}
    for label, n in (("default", default), ("one_thread", 1)):
        torch.set_num_threads(n)
        times = []
        for q in questions:
            _fresh_query(bot)
            times.append(_timed(lambda q=q: bot.components.embedder.embed_query(q))[0])
        out[label] = latency_block(times)
    torch.set_num_threads(default)
    out["load"] = load()
    return out


def dense_filter_cost(bot: Any, questions: list[str]) -> dict:
    """The Chroma query alone (50 nearest): with the ``doc_id $in [every document]`` filter that an
    unscoped question sends, and without a filter: the filter's cost grows with the library."""
    col = bot.components.index.store.collection
    doc_ids = [d.doc_id for d in bot.components.index.documents()]
    vectors = [bot.components.embedder.embed_query(q) for q in questions]
    out = {}
    for label, where in (
        ("all_docs_filter", {"doc_id": {"$in": doc_ids}}),
        ("no_filter", None),
        ("one_doc_filter", {"doc_id": doc_ids[0]}),
    ):
        times = []
        for v in vectors:
            kwargs = {"where": where} if where else {}
            times.append(
                _timed(
                    lambda v=v, kwargs=kwargs: col.query(
                        query_embeddings=[v], n_results=50, include=["distances"], **kwargs
                    )
                )[0]
            )
        out[label] = latency_block(times)
    return out


def add_one_document(bot: Any, seed: int, corpus_dir: Path) -> dict:
    """Add a ~30-page document the library lacks: ingest (split), then until it is searchable;
    then delete it, leaving the library as it was."""
    path = scale_corpus.long_pdf(seed, corpus_dir)
    if bot.components.registry.by_name(bot.components.index.collection, path.name) is not None:
        bot.delete(path.name)
        bot.components.index.lexical_ready()
    record = ingest_timed(bot, path)
    _fresh_query(bot)
    bm25_s, _ = _timed(bot.components.index.lexical_ready)
    _fresh_query(bot)
    first_search_s, res = _timed(
        lambda: bot.search("How long is the waiting period for accidental damage?", k=10, docs=[path.name])
    )
    record.update(
        {
            "bm25_after_add_s": round(bm25_s, 3),
            "first_search_after_add_s": round(first_search_s, 3),
            "found_in_new_doc": sum(h.doc == path.name for h in res.hits),
            "searchable_after_s": round(record["seconds"] + bm25_s + first_search_s, 3),
        }
    )
    delete_s, _ = _timed(lambda: bot.delete(path.name))
    bm25_del_s, _ = _timed(bot.components.index.lexical_ready)
    record.update({"delete_s": round(delete_s, 3), "bm25_after_delete_s": round(bm25_del_s, 3)})
    uninstall_vector_cache(bot.components.embedder)
    return record


# --- phase: the FEMA Dwelling Form in a warm process -------------------------------------------------------


def phase_fema(home: Path, runs: int = 2) -> dict:
    shutil.rmtree(home, ignore_errors=True)
    bot = make_bot(home)
    warm_s, _ = _timed(bot.warm_up)
    _ = bot.components.probe_vectors
    warm_doc = next(p for p in scale_corpus.fixed_documents() if "privacy" in str(p))
    ingest_timed(bot, warm_doc)  # collection created, everything loaded: a warm process
    dwelling = scale_corpus.SHARED / "nfip-flood" / "docs" / "nfip-sfip-dwelling.pdf"
    records = []
    for _ in range(runs):
        if bot.components.registry.by_name(bot.components.index.collection, dwelling.name) is not None:
            bot.delete(dwelling.name)
        records.append(ingest_timed(bot, dwelling))
    row = bot.components.registry.by_name(bot.components.index.collection, dwelling.name)
    texts = [c.index_text for c in bot.components.registry.chunks_of(bot.components.index.collection, row.doc_id)]
    uninstall_vector_cache(bot.components.embedder)
    raw = []
    for _ in range(runs):
        t, _ = _timed(lambda: bot.components.embedder.embed(texts))
        raw.append(t)
    best = min(records, key=lambda r: r["seconds"])
    return {
        "model_load_s": round(warm_s, 2),
        "runs": records,
        "best": best,
        "texts": len(texts),
        "raw_embed_s": [round(t, 3) for t in raw],
        "raw_chunks_per_s": round(len(texts) / min(raw), 1),
        "pipeline_embed_chunks_per_s": round(best["chunks"] / best["embed"], 1) if best["embed"] else None,
        "batch_size": bot.components.embedder.batch_size,
        "load": load(),
    }


# --- phase: cold start -----------------------------------------------------------------------------------

COLD_SCRIPT = r"""
import json, os, sys, time
t0 = time.perf_counter()
from policybot.service import PolicyBot
from policybot.settings import Settings
t1 = time.perf_counter()
bot = PolicyBot(Settings(home=sys.argv[1], profile="lite", llm_mode="off", chroma_url=sys.argv[3] or None, ollama_host="http://127.0.0.1:9"))
bot.warm_up()
t2 = time.perf_counter()
answer = bot.ask(sys.argv[2], use_llm=False)
t3 = time.perf_counter()
times = {"import_s": t1 - t0, "warm_up_s": t2 - t1, "first_answer_s": t3 - t2}
print(json.dumps({**times, "mode": answer.mode, "citations": len(answer.citations)}))
"""


def cold_python(home: Path, chroma_url: str | None) -> dict:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", COLD_SCRIPT, str(home), COLD_QUESTION, chroma_url or ""],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=_env(),
    )
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        return {"error": proc.stderr[-2000:]}
    inner = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"wall_s": round(wall, 2), **{k: round(v, 2) if isinstance(v, float) else v for k, v in inner.items()}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cold_streamlit(home: Path, chroma_url: str | None, browser: bool, timeout: float = 300) -> dict:
    port = free_port()
    env = _env(
        POLICYBOT_HOME=str(home),
        POLICYBOT_PROFILE="lite",
        POLICYBOT_LLM_MODE="off",
        POLICYBOT_OLLAMA_HOST="http://127.0.0.1:9",
        **({"POLICYBOT_CHROMA_URL": chroma_url} if chroma_url else {}),
    )
    started = time.perf_counter()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.headless",
            "true",
            "--server.address",
            "127.0.0.1",
            "--server.port",
            str(port),
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    out: dict[str, Any] = {}
    try:
        url = f"http://127.0.0.1:{port}"
        while time.perf_counter() - started < timeout:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
        out["health_s"] = round(time.perf_counter() - started, 2)
        if browser:
            out.update(_browser_first_answer(url, started))
        out["server_rss_mb"] = round(proc_status("VmRSS", server.pid), 1)
    finally:
        stop(server)
    return out


def stop(proc: subprocess.Popen) -> None:
    """End a server started for a measurement: politely, then for sure."""
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()


def _browser_first_answer(url: str, started: float) -> dict:
    """As eval/bench_app.py, in headless Chromium: the chat box shows (the app loads the models in
    the background meanwhile), the question is asked at once, and the answer's first source panel
    shows. Chromium's own start-up (on the same 2 cores) is included."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"browser": "playwright not installed"}
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        return {"browser": "chromium not found"}
    args = [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ]
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, headless=True, args=args)
        page = b.new_page()
        page.goto(url)
        chat = page.locator('[data-testid="stChatInputTextArea"]')
        chat.wait_for(state="visible", timeout=300_000)
        box = time.perf_counter() - started  # the page, the library and the chat box
        loading = page.get_by_text("Loading the models").count() > 0
        chat.fill(COLD_QUESTION)
        chat.press("Enter")
        # A source panel ("[1] doc, p.N ..."), not the "Searching the documents…" status (also an expander).
        page.wait_for_function(
            "() => [...document.querySelectorAll('[data-testid=\"stChatMessage\"] details summary')].some(s => "
            "/\\[\\d+\\]/.test(s.innerText))",
            timeout=300_000,
        )
        answered = time.perf_counter() - started
        b.close()
    return {
        "chat_ready_s": round(box, 2),
        "models_loading_at_chat_box": loading,
        "first_answer_s": round(answered, 2),
        "answer_wait_s": round(answered - box, 2),
    }


# --- the Chroma server ----------------------------------------------------------------------------------


@contextmanager
def chroma_server(path: Path) -> Iterator[str]:
    """A local ``chroma run`` for the length of a block; its URL."""
    exe = Path(sys.executable).parent / "chroma"
    if not exe.exists():
        raise SystemExit(f"--with-server: {exe} not found (pip install chromadb gives it)")
    port = free_port()
    path.mkdir(parents=True, exist_ok=True)
    log = (path.parent / "chroma-server.log").open("w")
    proc = subprocess.Popen(
        [str(exe), "run", "--path", str(path), "--port", str(port)], stdout=log, stderr=subprocess.STDOUT, env=_env()
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                urllib.request.urlopen(url + "/api/v2/heartbeat", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        else:
            raise SystemExit(f"the Chroma server at {url} did not start; see {log.name}")
        yield url
    finally:
        stop(proc)
        log.close()


# --- running phases in their own processes -----------------------------------------------------------------


def _env(**extra: str) -> dict:
    env = dict(os.environ)
    env.update(
        {
            "HF_HUB_OFFLINE": "1",
            "ORT_DISABLE_TELEMETRY": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "PYMUPDF_SUGGEST_LAYOUT_ANALYZER": "0",
        }
    )
    env.update(extra)
    return env


def run_phase(name: str, params: dict, out_file: Path) -> dict:
    """Run ``phase_<name>(**params)`` in a fresh Python process; its JSON result."""
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.unlink(missing_ok=True)
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--phase",
        name,
        "--phase-params",
        json.dumps(params, default=str),
        "--phase-out",
        str(out_file),
    ]
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env=_env())
    if proc.returncode != 0 or not out_file.is_file():
        raise RuntimeError(f"phase {name} failed (exit {proc.returncode})")
    result = json.loads(out_file.read_text())
    result["phase_wall_s"] = round(time.perf_counter() - started, 1)
    return result


def _phase_main(name: str, params: dict, out_file: Path) -> None:
    from policybot.startup import configure_process

    configure_process()
    import logging

    logging.basicConfig(level=logging.WARNING)
    for key in ("home", "corpus_dir", "cache_path", "log_path"):
        if params.get(key):
            params[key] = Path(params[key])
    fn = {"build": phase_build, "measure": phase_measure, "fema": phase_fema}[name]
    result = fn(**params)
    out_file.write_text(json.dumps(result, indent=1, default=str))


# --- the orchestration ---------------------------------------------------------------------------------------


def read_log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []


def library_size(home: Path) -> int:
    db = home / "registry.sqlite"
    if not db.is_file():
        return 0
    with sqlite3.connect(str(db)) as con:
        try:
            return int(con.execute("SELECT count(*) FROM chunks").fetchone()[0])
        except sqlite3.Error:
            return 0


def bench_size(size: int, args: argparse.Namespace, chroma_url: str | None, tag: str) -> dict:
    folder = args.work / f"size-{size}{tag}"
    if args.rebuild and folder.exists():
        shutil.rmtree(folder)
    home = folder / "home"
    log_path = folder / "build-log.jsonl"
    result: dict[str, Any] = {"size": size, "home": str(home), "chroma_url": chroma_url}
    cache = None if args.no_vector_cache else str(args.vector_cache)
    have = library_size(home)
    if have >= size and (folder / "build.json").is_file():
        print(f"[{size}] reusing {home} ({have} chunks)", flush=True)
        result["build"] = json.loads((folder / "build.json").read_text())
        result["build"]["reused"] = True
    else:
        print(f"[{size}] building {home} ({have} chunks so far)", flush=True)
        build = run_phase(
            "build",
            {
                "home": home,
                "size": size,
                "seed": args.seed,
                "corpus_dir": args.corpus,
                "cache_path": cache,
                "chroma_url": chroma_url,
                "log_path": log_path,
            },
            folder / "phase-build.json",
        )
        build["summary"] = summarise_build(read_log(log_path))
        segments = (
            json.loads((folder / "build.json").read_text()).get("segments", [])
            if (folder / "build.json").is_file()
            else []
        )
        build["segments"] = segments + [
            {k: build[k] for k in ("added_this_run", "wall_s", "peak_rss_mb", "load", "cache")}
        ]
        (folder / "build.json").write_text(json.dumps(build, indent=1))
        result["build"] = build
    if cache and not args.no_cached_rebuild and not chroma_url:
        cached_folder = folder / "cached-rebuild"
        shutil.rmtree(cached_folder, ignore_errors=True)
        print(f"[{size}] re-indexing from the vector cache into {cached_folder}", flush=True)
        rb = run_phase(
            "build",
            {
                "home": cached_folder / "home",
                "size": size,
                "seed": args.seed,
                "corpus_dir": args.corpus,
                "cache_path": cache,
                "chroma_url": None,
                "log_path": cached_folder / "build-log.jsonl",
            },
            cached_folder / "phase-build.json",
        )
        rb["summary"] = summarise_build(read_log(cached_folder / "build-log.jsonl"))
        result["cached_rebuild"] = rb
        shutil.rmtree(cached_folder / "home", ignore_errors=True)  # only its timings are wanted
    print(f"[{size}] measuring retrieval, RSS, disk, adding one document", flush=True)
    result["measure"] = run_phase(
        "measure",
        {
            "home": home,
            "n_questions": args.questions,
            "seed": args.seed,
            "corpus_dir": args.corpus,
            "chroma_url": chroma_url,
            "add_doc": not args.no_add_doc,
        },
        folder / "phase-measure.json",
    )
    if not args.no_cold_start:
        print(f"[{size}] cold start", flush=True)
        result["cold_python"] = cold_python(home, chroma_url)
        result["cold_streamlit"] = cold_streamlit(home, chroma_url, args.browser)
    return result


def merge_sizes(data: dict, others: list[Path]) -> None:
    """Sizes measured in earlier runs (another --out) join this run's, each size once."""
    have = {r["size"] for r in data["sizes"]}
    for path in others:
        for r in json.loads(path.read_text()).get("sizes", []):
            if r["size"] not in have:
                data["sizes"].append({**r, "from_run": str(path)})
                have.add(r["size"])
    data["sizes"].sort(key=lambda r: r["size"])


def estimate(results: list[dict], target: int = 100_000) -> dict | None:
    """Time to build ``target`` chunks uncached, from the measured uncached throughput (largest size)."""
    best = None
    for r in results:
        s = (r.get("build") or {}).get("summary", {}).get("uncached")
        if s and s["chunks"] >= 200 and (best is None or s["chunks"] > best["chunks"]):
            best = s
    if not best:
        return None
    rate = best["chunks_per_s"]
    per_doc_chunks = best["chunks"] / best["documents"]
    gen_s = 0.35 * target / per_doc_chunks  # generating the PDFs (~0.35 s each, measured)
    return {
        "uncached_chunks_per_s": rate,
        "estimate_h": round((target / rate + gen_s) / 3600, 2),
        "documents": math.ceil(target / per_doc_chunks),
        "embed_share": best["embed_share"],
        "basis_chunks": best["chunks"],
    }


# --- the report -------------------------------------------------------------------------------------------


def fmt(v: Any, unit: str = "") -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        v = f"{v:,.0f}" if abs(v) >= 100 else (f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}")
    return f"{v}{unit}"


def rows_for(r: dict) -> list[tuple[str, str]]:
    b, m = r.get("build") or {}, r.get("measure") or {}
    s = b.get("summary") or {}
    un, ca = (
        s.get("uncached") or {},
        (r.get("cached_rebuild") or {}).get("summary", {}).get("cached") or s.get("cached") or {},
    )
    add = m.get("add_document") or {}
    cp, cs = r.get("cold_python") or {}, r.get("cold_streamlit") or {}
    rows = [
        (
            "library chunks / documents",
            f"{m.get('chunks', b.get('chunks'))} / {m.get('documents', b.get('documents'))}",
        ),
        (
            "build, uncached: chunks/s (docs, chunks)",
            f"{fmt(un.get('chunks_per_s'))} ({un.get('documents')}, {un.get('chunks')})",
        ),
        (
            "  split s: parse / chunk / embed / index / other",
            " / ".join(fmt(un.get(k)) for k in ("parse_s", "chunk_s", "embed_s", "index_s", "other_s")),
        ),
        (
            "  share: parse / chunk / embed / index",
            " / ".join(
                fmt(100 * un[k], "%") if un.get(k) is not None else "–"
                for k in ("parse_share", "chunk_share", "embed_share", "index_share")
            ),
        ),
        (
            "  stage chunks/s: parse / chunk / embed / index",
            " / ".join(
                fmt(un.get(k))
                for k in ("parse_chunks_per_s", "chunk_chunks_per_s", "embed_chunks_per_s", "index_chunks_per_s")
            ),
        ),
        (
            "build, cached vectors: chunks/s (docs, chunks)",
            f"{fmt(ca.get('chunks_per_s'))} ({ca.get('documents')}, {ca.get('chunks')})",
        ),
        (
            "  split s: parse / chunk / embed(cache) / index / other",
            " / ".join(fmt(ca.get(k)) for k in ("parse_s", "chunk_s", "embed_s", "index_s", "other_s")),
        ),
        (
            "index ms/chunk: first tenth → last tenth of build",
            f"{fmt(s.get('index_ms_per_chunk_first_tenth'))} → {fmt(s.get('index_ms_per_chunk_last_tenth'))}",
        ),
        ("build process peak RSS", fmt(b.get("peak_rss_mb"), " MB")),
        ("BM25 full build (first search after build)", fmt(b.get("bm25_first_build_s"), " s")),
        ("add 30-page doc: pages / chunks", f"{add.get('pages')} / {add.get('chunks')}"),
        (
            "  ingest s (parse / chunk / embed / index / other)",
            f"{fmt(add.get('seconds'))} "
            f"({' / '.join(fmt(add.get(k)) for k in ('parse', 'chunk', 'embed', 'index', 'other'))})",
        ),
        (
            "  + BM25 rebuild + first search = searchable after",
            f"{fmt(add.get('bm25_after_add_s'))} + {fmt(add.get('first_search_after_add_s'))} = "
            f"{fmt(add.get('searchable_after_s'), ' s')}",
        ),
        (
            "first pass (search k=10) p50 / p95",
            f"{fmt((m.get('search') or {}).get('p50_ms'))} / {fmt((m.get('search') or {}).get('p95_ms'), ' ms')}",
        ),
        (
            "  same, query vector remembered (index share) p50 / p95",
            f"{fmt((m.get('search_cached_query') or {}).get('p50_ms'))} / "
            f"{fmt((m.get('search_cached_query') or {}).get('p95_ms'), ' ms')}",
        ),
        ("  query embedding alone p50 / p95: default threads | 1 thread", _qe(m)),
        ("  Chroma query p50: all-docs filter / no filter / 1-doc filter", _df(m)),
        (
            "full question, no LLM (ask) p50 / p95",
            f"{fmt((m.get('ask') or {}).get('p50_ms'))} / {fmt((m.get('ask') or {}).get('p95_ms'), ' ms')}",
        ),
        (
            "scoped to 1 doc: search p50 / p95",
            f"{fmt((m.get('search_scoped') or {}).get('p50_ms'))} / "
            f"{fmt((m.get('search_scoped') or {}).get('p95_ms'), ' ms')}",
        ),
        (
            "scoped to 1 doc: ask p50 / p95",
            f"{fmt((m.get('ask_scoped') or {}).get('p50_ms'))} / "
            f"{fmt((m.get('ask_scoped') or {}).get('p95_ms'), ' ms')}",
        ),
        (
            "scoped search: hits (min of k=10), all from the doc",
            f"{m.get('scoped_hits_min')} of 10, {m.get('scoped_all_from_doc')}",
        ),
        (
            "scoped dense candidates: min got / min expected",
            f"{m.get('scoped_dense_candidates_min')} / {m.get('scoped_dense_expected_min')}",
        ),
        (
            "first search / ask after start",
            f"{fmt(m.get('first_search_after_start_s'))} / {fmt(m.get('first_ask_after_start_s'), ' s')}",
        ),
        ("serving RSS (after queries) / peak", f"{fmt(m.get('rss_mb'))} / {fmt(m.get('peak_rss_mb'), ' MB')}"),
        (
            "disk (home folder)",
            f"{fmt(m.get('disk_mb'), ' MB')} "
            f"({', '.join(f'{k} {fmt(v)}' for k, v in (m.get('disk_breakdown_mb') or {}).items())})",
        ),
        (
            "cold start python -c: wall (import / warm-up / answer)",
            f"{fmt(cp.get('wall_s'), ' s')} ({fmt(cp.get('import_s'))} / {fmt(cp.get('warm_up_s'))} / "
            f"{fmt(cp.get('first_answer_s'))})",
        ),
        (
            "streamlit: health / chat box / first answer (s from start)",
            f"{fmt(cs.get('health_s'))} / {fmt(cs.get('chat_ready_s'))} / {fmt(cs.get('first_answer_s'))}"
            + (f" (asked after the models loaded at {fmt(cs['models_loaded_s'])})" if cs.get("models_loaded_s") else "")
            + (
                " (asked at once; models still loading at the chat box)" if cs.get("models_loading_at_chat_box") else ""
            ),
        ),
        ("load average during measure (start → end)", f"{m.get('load_start')} → {m.get('load_after_queries')}"),
    ]
    return rows


def _qe(m: dict) -> str:
    qe = m.get("query_embed") or {}
    d, o = qe.get("default") or {}, qe.get("one_thread") or {}
    return (
        f"{fmt(d.get('p50_ms'))} / {fmt(d.get('p95_ms'))} ({qe.get('default_threads')} threads) | "
        f"{fmt(o.get('p50_ms'))} / {fmt(o.get('p95_ms'), ' ms')}"
    )


def _df(m: dict) -> str:
    df = m.get("dense_filter") or {}
    return (
        " / ".join(fmt((df.get(k) or {}).get("p50_ms")) for k in ("all_docs_filter", "no_filter", "one_doc_filter"))
        + " ms"
    )


def plot(results: list[dict], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    pts = [r for r in results if r.get("measure")]
    if not pts:
        return False
    x = [r["measure"]["chunks"] for r in pts]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for key, label, style in (
        ("search", "first pass p50", "o-"),
        ("search", "first pass p95", "o--"),
        ("ask", "full question p50", "s-"),
        ("ask", "full question p95", "s--"),
        ("search_scoped", "scoped first pass p95", "^:"),
    ):
        q = "p95_ms" if "p95" in label else "p50_ms"
        a.plot(x, [r["measure"][key][q] for r in pts], style, label=label)
    a.axhline(150, color="grey", lw=0.6, ls=":")
    a.axhline(400, color="grey", lw=0.6, ls=":")
    a.axhline(1000, color="grey", lw=0.6, ls=":")
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel("library size (chunks, log)")
    a.set_ylabel("latency (ms, log)")
    a.set_title("Retrieval latency (no LLM)")
    a.legend(fontsize=8)
    b.plot(x, [r["measure"]["rss_mb"] for r in pts], "o-", label="serving RSS")
    b.plot(x, [r["build"].get("peak_rss_mb") or 0 for r in pts], "s--", label="build peak RSS")
    b.plot(x, [r["measure"]["disk_mb"] for r in pts], "^:", label="disk (home)")
    b.axhline(2048, color="grey", lw=0.6, ls=":")
    b.set_xscale("log")
    b.set_xlabel("library size (chunks, log)")
    b.set_ylabel("MB")
    b.set_title("Memory and disk")
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def targets(results: list[dict], fema: dict | None) -> list[tuple[str, str, str, str]]:
    out = []
    for r in results:
        m = r.get("measure") or {}
        if not m:
            continue
        size = f"{m['chunks']:,}"
        add = m.get("add_document") or {}
        checks = [
            ("first-pass p50 ≤ 150 ms", m["search"]["p50_ms"], TARGETS["search_p50_ms"], " ms"),
            ("first-pass p95 ≤ 400 ms", m["search"]["p95_ms"], TARGETS["search_p95_ms"], " ms"),
            ("full question p95 ≤ 1 s", m["ask"]["p95_ms"], TARGETS["ask_p95_ms"], " ms"),
            ("serving RSS ≤ 2 GB", m["rss_mb"], TARGETS["rss_mb"], " MB"),
            ("add a 30-page doc ≤ 15 s (searchable)", add.get("searchable_after_s"), TARGETS["add_doc_s"], " s"),
        ]
        for name, value, limit, unit in checks:
            if value is None:
                continue
            out.append((size, name, fmt(value, unit), "met" if value <= limit else "MISSED"))
    if fema:
        best = fema["best"]
        out.append(
            (
                "FEMA form",
                f"32-page Dwelling Form ≤ {TARGETS['fema_ingest_s']} s warm",
                fmt(best["seconds"], " s"),
                "met" if best["seconds"] <= TARGETS["fema_ingest_s"] else "MISSED",
            )
        )
    return out


def report(data: dict, out: Path) -> Path:
    results = data["sizes"]
    fema = data.get("fema")
    lines = [
        "# PolicyBot scale benchmark (issue 12)",
        "",
        f"Run {data['started']} – {data['finished']} ({data['wall_min']} min) on {data['machine']['cpus']} CPUs, "
        f"{data['machine']['mem_gb']} GB; "
        f"git {data['git']['head']}"
        + (
            f" with uncommitted changes in {', '.join(data['git']['dirty_policybot_files'])}"
            if data["git"]["dirty_policybot_files"]
            else ""
        )
        + ".",
        f"Load average at start {data['load_start']}, at end {data['load_end']} (other work on this machine makes "
        "timings noisy).",
        "Profile lite (all-MiniLM-L6-v2), no LLM, chunker structure; vectors "
        f"{'from a Chroma server' if data['chroma'] else 'in embedded Chroma'}.",
        "",
    ]
    if results:
        lines += [
            "## Per size",
            "",
            "| metric | " + " | ".join(f"{r['size']:,}" for r in results) + " |",
            "|---|" + "---|" * len(results),
        ]
        table = [rows_for(r) for r in results]
        for i, (name, _) in enumerate(table[0]):
            lines.append(f"| {name} | " + " | ".join(t[i][1] for t in table) + " |")
        lines.append("")
    if fema:
        b = fema["best"]
        lines += [
            "## FEMA Dwelling Form (32 pages), warm process",
            "",
            f"Best of {len(fema['runs'])}: **{b['seconds']:.2f} s** for {b['pages']} pages, {b['chunks']} chunks — "
            f"parse {b['parse']:.2f} s, chunk {b['chunk']:.2f} s, "
            f"embed {b['embed']:.2f} s, index {b['index']:.2f} s, other {b['other']:.2f} s. "
            f"Embedding in the pipeline {fema['pipeline_embed_chunks_per_s']} chunks/s; the embedder alone on the same "
            f"{fema['texts']} texts "
            f"{fema['raw_chunks_per_s']} chunks/s (batch {fema['batch_size']}; runs {fema['raw_embed_s']} s).",
            "",
        ]
    tg = targets(results, fema)
    if tg:
        lines += [
            "## Issue-12 targets (they are set for 100k chunks; smaller sizes show the trend)",
            "",
            "| size | target | measured | |",
            "|---|---|---|---|",
        ]
        lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in tg]
        lines.append("")
    est = data.get("estimate_100k")
    built = [r for r in results if r.get("size", 0) >= 100_000 and (r.get("build") or {}).get("summary", {}).get("all")]
    if built:
        whole = built[0]["build"]["summary"]["all"]
        lines += [
            "## The 100k build",
            "",
            f"{whole['documents']} documents, {whole['chunks']:,} chunks, {whole['pages']:,} pages ingested through "
            "the real pipeline in "
            f"{whole['seconds'] / 3600:.2f} h of ingestion time ({whole['chunks_per_s']} chunks/s overall, part of it "
            "from the vector cache of "
            f"earlier runs; embedding {100 * whole['embed_share']:.0f} %, parsing {100 * whole['parse_share']:.0f} %), "
            "run in the background "
            f"over {len(built[0]['build'].get('segments', []))} resumed segment(s) while other work shared the two "
            "cores.",
            "",
        ]
    elif est:
        lines += [
            "## 100k chunks",
            "",
            f"Not run. At the measured uncached {est['uncached_chunks_per_s']} chunks/s (over {est['basis_chunks']} "
            f"chunks; embedding {100 * est['embed_share']:.0f} % of it), "
            f"a 100k-chunk library takes about **{est['estimate_h']} h** (~{est['documents']} documents) on this "
            "machine; "
            "a re-run from the vector cache skips the embedding share.",
            "",
        ]
    if data.get("plot"):
        lines += [
            "## Plot",
            "",
            f"![latency and memory against library size]({Path(data['plot']).name})",
            "",
            "Left: first-pass and full-question latency (p50, p95) against library size, log-log, with the 150 / 400 / "
            "1000 ms targets as dotted lines. "
            "Right: serving RSS, the build's peak RSS and the disk size of the library.",
            "",
        ]
    path = out / "scale-report.md"
    path.write_text("\n".join(lines))
    return path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument(
        "--work", type=Path, default=DEFAULT_WORK, help="one library folder per size, reused when it has the size"
    )
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON, Markdown report and plot")
    ap.add_argument("--corpus", type=Path, default=scale_corpus.DEFAULT_CACHE, help="generated PDFs (cached)")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--rebuild", action="store_true", help="build every library again")
    ap.add_argument("--questions", type=int, default=30)
    ap.add_argument("--vector-cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--no-vector-cache", action="store_true")
    ap.add_argument("--no-cached-rebuild", action="store_true", help="skip timing a re-index from the vector cache")
    ap.add_argument(
        "--chroma-url", default=None, help="a Chroma server for the vectors (POLICYBOT_CHROMA_URL); one size per server"
    )
    ap.add_argument("--with-server", action="store_true", help="start a local `chroma run` per size")
    ap.add_argument("--no-fema", action="store_true")
    ap.add_argument("--no-cold-start", action="store_true")
    ap.add_argument("--no-add-doc", action="store_true")
    ap.add_argument(
        "--browser", action="store_true", help="also time the app's first answer in headless Chromium (playwright)"
    )
    ap.add_argument(
        "--merge", type=Path, nargs="*", default=[], help="earlier scale-results.json whose other sizes join the report"
    )
    ap.add_argument(
        "--report-only",
        action="store_true",
        help="redraw the report and plot from OUT/scale-results.json (with --merge)",
    )
    ap.add_argument("--phase", help=argparse.SUPPRESS)
    ap.add_argument("--phase-params", help=argparse.SUPPRESS)
    ap.add_argument("--phase-out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.phase:
        _phase_main(args.phase, json.loads(args.phase_params), args.phase_out)
        return
    if args.report_only:
        data = json.loads((args.out / "scale-results.json").read_text())
        merge_sizes(data, args.merge)
        if plot(data["sizes"], args.out / "scale-plot.png"):
            data["plot"] = str(args.out / "scale-plot.png")
        print(report(data, args.out).read_text())
        return
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    data: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": machine(),
        "git": git_state(),
        "load_start": load(),
        "args": {k: str(v) for k, v in vars(args).items() if not k.startswith("phase")},
        "sizes": [],
        "chroma": bool(args.chroma_url or args.with_server),
    }
    json_path = args.out / "scale-results.json"

    def save() -> None:
        data["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
        data["wall_min"] = round((time.time() - started) / 60, 1)
        data["load_end"] = load()
        json_path.write_text(json.dumps(data, indent=1, default=str))

    if not args.no_fema:
        print("FEMA Dwelling Form, warm process", flush=True)
        data["fema"] = run_phase("fema", {"home": args.work / "fema" / "home"}, args.work / "fema" / "phase-fema.json")
        save()
    for size in sorted(args.sizes):
        if args.with_server:
            with chroma_server(args.work / f"size-{size}-server" / "chroma-server") as url:
                data["sizes"].append(bench_size(size, args, url, "-server"))
        else:
            tag = f"-url-{hashlib.sha1(args.chroma_url.encode()).hexdigest()[:6]}" if args.chroma_url else ""
            data["sizes"].append(bench_size(size, args, args.chroma_url, tag))
        save()
    merge_sizes(data, args.merge)
    data["estimate_100k"] = estimate(data["sizes"])
    if plot(data["sizes"], args.out / "scale-plot.png"):
        data["plot"] = str(args.out / "scale-plot.png")
    save()
    path = report(data, args.out)
    print(path.read_text())
    print(f"\nwrote {json_path}, {path}" + (f", {data['plot']}" if data.get("plot") else ""))


if __name__ == "__main__":
    main()
