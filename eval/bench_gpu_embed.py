"""Embedding on an NVIDIA GPU: does the library's own path pick the GPU, do its vectors agree with
the CPU's, and which batch size is fastest there? Needs a machine with CUDA; prints numbers only.

    python eval/bench_gpu_embed.py --texts chunks.json [--model DIR] [--reference cpu.npy] [--out FILE]
    python eval/bench_gpu_embed.py --texts chunks.json --write-reference cpu.npy   # on the CPU, first

``--texts``: a JSON list of the texts to embed (a library's chunk texts, as indexed). ``--model``: a
sentence-transformers folder (default: the lite profile's packaged MiniLM). ``--reference``: the
same texts' vectors from the CPU (``--write-reference`` makes them, with the library's CPU path).

On the GPU it reports: the device and backend that ``device = "auto"`` chooses (the GPU and torch:
the ONNX export is for CPUs), the batch size it defaults to, the lowest and mean cosine of each
vector against the CPU's, chunks per second for batch sizes 8 to 256 (median of 3, after a warm-up
pass), the same in half precision (not used by the library; measured to say whether it would be
worth it), and the peak GPU memory, which matters on a 4 GB card.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from policybot.models.embeddings import Embedder, choose_backend, pick_device
from policybot.models.profiles import PROFILES
from policybot.settings import Settings

BATCHES = (8, 16, 32, 64, 128, 256)


def _embedder(model_dir: str | None, batch: int | None, device: str) -> Embedder:
    model = PROFILES["lite"].embedding
    if model_dir:
        model = dataclasses.replace(model, hf_id=model_dir)
    settings = Settings(home=Path(tempfile.mkdtemp()), device=device, embedding_backend="torch", embed_batch_size=batch)
    return Embedder(model, settings)


def fp32_copy(model_dir: str | None) -> str | None:
    """The model folder with its weights in float32: weights may travel in half precision to fit a
    transfer, and the library runs float32. A float32 folder is used as it is."""
    if not model_dir:
        return model_dir
    from safetensors.torch import load_file, save_file

    weights = Path(model_dir) / "model.safetensors"
    tensors = load_file(str(weights)) if weights.exists() else {}
    if not any(t.is_floating_point() and t.element_size() < 4 for t in tensors.values()):
        return model_dir
    copy = Path(tempfile.mkdtemp()) / "model"
    shutil.copytree(model_dir, copy)
    save_file({k: (t.float() if t.is_floating_point() else t) for k, t in tensors.items()}, str(copy / weights.name))
    return str(copy)


def _rate(embed: Callable[[list[str]], Any], texts: list[str], repeats: int = 3) -> float:
    import torch

    embed(texts[:64])  # warm-up: kernels chosen, memory pooled
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        started = time.perf_counter()
        embed(texts)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - started)
    return len(texts) / statistics.median(times)


def _agreement(vectors: np.ndarray, reference: np.ndarray | None) -> dict[str, float] | None:
    if reference is None:
        return None
    cos = np.sum(vectors * reference, axis=1) / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(reference, axis=1))
    return {"lowest_cosine": round(float(cos.min()), 7), "mean_cosine": round(float(cos.mean()), 7)}


def on_gpu(texts: list[str], model_dir: str | None, reference: np.ndarray | None) -> dict[str, Any]:
    import torch

    lite = PROFILES["lite"].embedding
    auto = Settings(home=Path(tempfile.mkdtemp()), device="auto")
    report: dict[str, Any] = {
        "gpu": torch.cuda.get_device_name(0),
        "texts": len(texts),
        "auto_device": pick_device("auto"),
        "auto_backend": choose_backend(lite, auto),
    }
    default = _embedder(model_dir, None, "auto")
    default.warm_up()
    report["default_batch"] = default.batch_size
    torch.cuda.reset_peak_memory_stats()
    report["fp32_agreement"] = _agreement(default.embed(texts), reference)
    report["fp32_peak_mib_default_batch"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
    report["fp32_chunks_per_s"] = {
        str(b): round(_rate(_embedder(model_dir, b, "cuda").embed, texts), 1) for b in BATCHES
    }
    report.update(_half_precision(texts, model_dir, reference))
    return report


def _half_precision(texts: list[str], model_dir: str | None, reference: np.ndarray | None) -> dict[str, Any]:
    """sentence-transformers itself in float16 (the library runs float32): would it be worth it?"""
    from sentence_transformers import SentenceTransformer

    from policybot.models.profiles import load_source

    source = load_source(model_dir or PROFILES["lite"].embedding.hf_id, Settings(home=Path(tempfile.mkdtemp())))
    model = SentenceTransformer(source.path, device="cuda", local_files_only=source.local).half()

    def encode(batch: int) -> Any:
        return lambda chunk: model.encode(chunk, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True)

    return {
        "fp16_agreement": _agreement(np.asarray(encode(32)(texts), dtype=np.float32), reference),
        "fp16_chunks_per_s": {str(b): round(_rate(encode(b), texts), 1) for b in (32, 128)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", required=True, type=Path)
    parser.add_argument("--model", default=None)
    parser.add_argument("--reference", type=Path, default=None)
    parser.add_argument("--write-reference", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    texts = json.loads(args.texts.read_text(encoding="utf-8"))
    model_dir = fp32_copy(args.model)
    if args.write_reference:
        embedder = _embedder(model_dir, None, "cpu")
        np.save(args.write_reference, embedder.embed(texts))
        print(f"wrote the CPU vectors of {len(texts)} texts to {args.write_reference}")
        return
    reference = np.load(args.reference) if args.reference else None
    report = on_gpu(texts, model_dir, reference)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
