"""Crash benchmark: kill `policybot ingest` with SIGKILL at random moments, then check that the
library is consistent (a script, not a test: it takes a few minutes).

    python eval/bench_crash.py [DOCS_FOLDER] [--kills 20] [--aimed 10] [--seed 7] [--home DIR]

DOCS_FOLDER defaults to the three FEMA forms in ../shared/eval-data/nfip-flood/docs. Each
round removes one or two documents so that the next ingestion has work to do, starts
`policybot ingest DOCS_FOLDER` in its own process, and kills it after a random delay drawn
over the length of a complete run. The random moments rarely fall in the short window where
the index is written, so ``--aimed`` rounds more watch the journal and kill 0-500 ms after an
ingestion opens its journal row (stored file, vector write, registry commit). After every
kill, before anything is repaired, it checks
that no registered document is incomplete (what a search could show). Then a last ingestion
runs to completion, and the final check compares, for every document, the chunk counts of
the registry, the vectors and BM25, and looks for stored files, vectors and journal rows that
belong to no document.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from policybot.core.rows import doc_of  # noqa: E402
from policybot.models.embeddings import get_embedder  # noqa: E402
from policybot.models.profiles import PROFILES  # noqa: E402
from policybot.settings import Settings  # noqa: E402
from policybot.store.index import DocumentIndex  # noqa: E402
from policybot.store.registry import Registry  # noqa: E402

DEFAULT_DOCS = ROOT.parent / "shared" / "eval-data" / "nfip-flood" / "docs"


def settings_for(home: Path) -> Settings:
    return Settings(home=home, profile="lite", ollama_host="http://127.0.0.1:9", llm_mode="off")


def ingest_command(home: Path, docs: Path) -> list[str]:
    return [sys.executable, "-m", "policybot", "--home", str(home), "--profile", "lite", "ingest", "--json", str(docs)]


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("POLICYBOT_")}
    env.update(HF_HUB_OFFLINE="1", OLLAMA_HOST="http://127.0.0.1:9", POLICYBOT_LLM_MODE="off")
    return env


def open_index(home: Path) -> DocumentIndex:
    """The index as the last process left it: opened without the start-up clean-up."""
    settings = settings_for(home)
    model = PROFILES["lite"].embedding
    return DocumentIndex(settings, model, get_embedder(model, settings), Registry(home / "registry.sqlite"))


def leftovers(home: Path) -> dict:
    """What a kill left, read without opening the vector store (that is the next start's job)."""
    import sqlite3

    out: dict = {}
    try:
        with sqlite3.connect(f"file:{home / 'registry.sqlite'}?mode=ro", uri=True) as db:
            out["pending"] = [r[0] for r in db.execute("SELECT doc_id FROM pending")]
            stored = {Path(r[0]).name for r in db.execute("SELECT stored_path FROM documents")}
    except sqlite3.Error:
        out["pending"], stored = [], set()
    files = home / "files"
    out["orphan_files"] = sorted(p.name for p in files.glob("*") if p.name not in stored) if files.is_dir() else []
    out["interrupted_vector_write"] = (home / "chroma.writing").exists()
    return {k: v for k, v in out.items() if v}


def inspect_in_new_process(home: Path) -> dict:
    """``inspect`` run by a new process, as a reader would open the library."""
    import json

    done = subprocess.run(
        [sys.executable, __file__, "--inspect", str(home)], env=child_env(), capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        return {"crashed": f"exit {done.returncode}: {done.stderr.strip()[-300:]}"}
    return json.loads(done.stdout)


def inspect(home: Path) -> dict:
    """Counts per document in each store, and whatever belongs to no document."""
    index = open_index(home)
    registry = index.registry
    docs = index.documents()
    got = index.store.collection.get(include=["metadatas"])
    vectors = Counter(m["doc_id"] for m in got["metadatas"] or [] if m)
    lexical = Counter(doc_of(cid) for cid in index.lexical_ready().chunk_ids())
    rows = Counter(doc_of(cid) for cid, _ in registry.chunk_texts(index.collection))
    known = {d.doc_id for d in docs}
    stored = {Path(d.stored_path).name for d in docs}
    files = sorted(p.name for p in index.files_dir.glob("*")) if index.files_dir.is_dir() else []
    uploads = sorted(p.name for p in index.uploads_dir.glob("*")) if index.uploads_dir.is_dir() else []
    mismatched = [
        f"{d.name}: registry says {d.chunks}, chunk rows {rows[d.doc_id]}, vectors {vectors[d.doc_id]}, BM25 "
        f"{lexical[d.doc_id]}"
        for d in docs
        if not d.chunks == rows[d.doc_id] == vectors[d.doc_id] == lexical[d.doc_id]
    ]
    return {
        "documents": sorted(d.name for d in docs),
        "mismatched": mismatched,
        "orphan_vector_docs": sorted(set(vectors) - known),
        "orphan_vectors": sum(n for doc_id, n in vectors.items() if doc_id not in known),
        "orphan_files": [f for f in files if f not in stored],
        "staged_uploads": uploads,
        "pending": [r.doc_id for r in registry.pending()],
    }


def restart(home: Path) -> str | None:
    """Open the library in a new process, as the app or the CLI would; the error, if it fails."""
    command = [sys.executable, "-m", "policybot", "--home", str(home), "--profile", "lite", "docs", "--json"]
    done = subprocess.run(command, env=child_env(), capture_output=True, text=True, timeout=600)
    return None if done.returncode == 0 else f"exit {done.returncode}: {done.stderr.strip()[-300:]}"


def remove_some(home: Path, rng: random.Random) -> list[str]:
    """Delete one or two documents (cleanly, in new processes) so the next ingestion has work.
    Never in this process: it would keep a vector store open across other processes' starts."""
    import json

    base = [sys.executable, "-m", "policybot", "--home", str(home), "--profile", "lite", "docs"]
    listed = subprocess.run([*base, "--json"], env=child_env(), capture_output=True, text=True, timeout=600)
    names = [d["name"] for d in json.loads(listed.stdout)["documents"]] if listed.returncode == 0 else []
    chosen = rng.sample(names, k=min(len(names), rng.choice((1, 2)))) if names else []
    for name in chosen:
        subprocess.run([*base, "--delete", name], env=child_env(), capture_output=True, timeout=600)
    return chosen


def pending_rows(home: Path) -> int:
    import sqlite3

    try:
        with sqlite3.connect(f"file:{home / 'registry.sqlite'}?mode=ro", uri=True, timeout=0.05) as db:
            return int(db.execute("SELECT COUNT(*) FROM pending").fetchone()[0])
    except sqlite3.Error:
        return 0


def kill_when_writing(proc: subprocess.Popen, home: Path, rng: random.Random) -> float:
    """Kill shortly after the ingestion opens a journal row; returns the seconds it ran."""
    started = time.perf_counter()
    while proc.poll() is None and not pending_rows(home):
        time.sleep(0.002)
    time.sleep(rng.uniform(0.0, 0.5))
    return time.perf_counter() - started


def timed_run(home: Path, docs: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(ingest_command(home, docs), env=child_env(), capture_output=True, text=True, timeout=900)
    if done.returncode not in (0, 1):
        raise SystemExit(f"ingest failed ({done.returncode}): {done.stderr[-2000:]}")
    return time.perf_counter() - started


def _problems(state: dict) -> list[str]:
    out = []
    if state.get("crashed"):
        out.append(f"the library could not be opened ({state['crashed']})")
    out += [f"incomplete: {m}" for m in state.get("mismatched", [])]
    if state.get("orphan_vectors"):
        out.append(f"{state['orphan_vectors']} vectors of unregistered documents")
    for key in ("orphan_files", "staged_uploads", "pending"):
        if state.get(key):
            out.append(f"{key.replace('_', ' ')}: {state[key]}")
    return out


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--inspect":
        import json

        print(json.dumps(inspect(Path(sys.argv[2]))))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("docs", nargs="?", type=Path, default=DEFAULT_DOCS)
    ap.add_argument("--kills", type=int, default=20, help="kills at random moments")
    ap.add_argument("--aimed", type=int, default=10, help="kills aimed at the index write")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--home", type=Path, default=None, help="Data folder (default: a new temporary one)")
    args = ap.parse_args()
    if not args.docs.is_dir():
        raise SystemExit(f"{args.docs}: no such folder (the nfip-flood set lives in ../shared/eval-data)")
    home = args.home or Path(tempfile.mkdtemp(prefix="policybot-crash-")) / "home"
    rng = random.Random(args.seed)

    full = timed_run(home, args.docs)
    print(f"home {home}; a complete ingestion of {args.docs} takes {full:.1f} s (process start included)")
    failures = 0
    for i in range(1, args.kills + args.aimed + 1):
        removed = remove_some(home, rng)
        aimed = i > args.kills
        proc = subprocess.Popen(
            ingest_command(home, args.docs), env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        if aimed:
            delay = kill_when_writing(proc, home, rng)
        else:
            delay = rng.uniform(0.3, full)
            time.sleep(delay)
        finished = proc.poll() is not None
        if not finished:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        left = leftovers(home)
        error = restart(home)
        state = inspect_in_new_process(home) if error is None else {"crashed": error}
        problems = _problems(state)
        failures += bool(problems)
        print(
            f"{'aimed ' if aimed else ''}kill {i:2d} after {delay:5.1f} s{' (had finished)' if finished else ''}: "
            f"removed {removed}; "
            f"left {left or 'nothing'}; after the next start: {len(state.get('documents', []))} document(s), "
            f"{'; '.join(problems) or 'consistent'}"
        )

    timed_run(home, args.docs)  # the next start cleans up, and the ingestion completes
    final = inspect_in_new_process(home)
    print("\nAfter a final complete ingestion:")
    print(f"  documents: {final.get('documents')}")
    print(f"  problems: {'; '.join(_problems(final)) or 'none'}")
    ok = (
        not _problems(final) and failures == 0 and len(final.get("documents", [])) == len(list(args.docs.glob("*.pdf")))
    )
    print(
        f"\nRESULT: {'consistent' if ok else 'INCONSISTENT'} after {args.kills} random and {args.aimed} aimed kills "
        f"({failures} round(s) with problems)"
    )
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
