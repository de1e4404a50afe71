"""The embedding model as ONNX: exported here, once, from the local weights (no download), and run
by onnxruntime without importing torch.

Why: on two CPU cores torch costs ~4 s of imports before the first question can be embedded, and
one short query takes 8 ms in torch against under 3 ms in onnxruntime. The fp32 export gives the
same vectors as torch (checked at export on the probe bank; cosine >= ``SAME_VECTORS``), so it reads
and writes the same collection. The int8 export (dynamic quantisation of the matrix products, per
channel) embeds about twice as fast but moves vectors by ~0.5 %: it is its own vector family with
its own collection (``profiles.EmbeddingModel.vectors``), never mixed with torch's.
Measured in eval/decisions/2026-11-26-onnx-embedder.md.

An export is a folder under ``MODELS_DIR/onnx/<model>/``: ``model.onnx``, ``model-int8.onnx``, the
tokenizer, and ``export.json`` (the weights it was made from, pooling, window and the agreement
measured). It is used only while the weights it was made from are unchanged.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from policybot.errors import PolicyBotError
from policybot.models.embeddings import TokenVectors, unit_rows
from policybot.models.profiles import EmbeddingModel, load_source, local_dir_name
from policybot.settings import Settings

log = logging.getLogger(__name__)

FORMAT = 1
# The fp32 export is used for an index built by torch only if every probe's vector agrees this well.
SAME_VECTORS = 0.9999
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class OnnxUnavailable(PolicyBotError):
    """The ONNX backend was asked for but cannot be used; the message says how to fix it."""


def export_dir(model: EmbeddingModel, settings: Settings) -> Path:
    return settings.resolved_models_dir / "onnx" / local_dir_name(model.hf_id)


def _weights(source: Path) -> Path | None:
    return next((source / name for name in WEIGHT_FILES if (source / name).is_file()), None)


def _fingerprint(weights: Path) -> dict[str, int]:
    stat = weights.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


@dataclass(frozen=True)
class OnnxExport:
    """A usable export: its folder and what ``export.json`` says of it."""

    folder: Path
    meta: dict[str, Any]

    def path(self, int8: bool) -> Path:
        return self.folder / ("model-int8.onnx" if int8 else "model.onnx")

    @property
    def same_vectors(self) -> bool:
        return float(self.meta.get("fp32_min_cosine", 0.0)) >= SAME_VECTORS


def find_export(model: EmbeddingModel, settings: Settings) -> OnnxExport | None:
    """The export for ``model`` if there is one made from the weights now on this machine."""
    folder = export_dir(model, settings)
    try:
        meta = json.loads((folder / "export.json").read_text())
    except (OSError, ValueError):
        return None
    if meta.get("format") != FORMAT or meta.get("model") != model.hf_id:
        return None
    source = load_source(model.hf_id, settings)
    weights = _weights(Path(source.path)) if source.local else None
    if weights is None or meta.get("weights") != _fingerprint(weights):
        return None  # the weights changed (an upgrade): the export is stale
    if not all((folder / name).is_file() for name in ("model.onnx", "model-int8.onnx", "tokenizer.json")):
        return None
    return OnnxExport(folder, meta)


def export_problem(model: EmbeddingModel, settings: Settings) -> str | None:
    """Why no usable export exists (None when one does), with the command that makes it."""
    if find_export(model, settings) is not None:
        return None
    source = load_source(model.hf_id, settings)
    if not source.local:
        return f"{model.hf_id} is not on this machine: `policybot models pull`, then `policybot models export-onnx`"
    if (export_dir(model, settings) / "export.json").is_file():
        return "the ONNX export was made from other weights: run `policybot models export-onnx` again"
    return "no ONNX export yet: run `policybot models export-onnx` (once, under a minute)"


def nvidia_visible() -> bool:
    """An NVIDIA GPU this process could use, judged without importing torch."""
    return Path("/dev/nvidia0").exists() or Path("/proc/driver/nvidia/version").exists()


# --- running an export -----------------------------------------------------------------------------


class OnnxEncoder:
    """Tokenize with the model's own tokenizer (``tokenizers``), run onnxruntime, pool, normalise."""

    def __init__(self, export: OnnxExport, int8: bool, threads: int | None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.max_seq_length = int(export.meta["max_seq_length"])
        self.pooling = str(export.meta.get("pooling", "mean"))
        self.dimension = int(export.meta["dimension"])
        self._plain = Tokenizer.from_file(str(export.folder / "tokenizer.json"))
        self._plain.no_truncation()
        self._plain.no_padding()
        self._model = Tokenizer.from_file(str(export.folder / "tokenizer.json"))
        self._model.enable_truncation(self.max_seq_length)
        pad = export.meta.get("pad_token") or "[PAD]"
        self._model.enable_padding(pad_id=self._model.token_to_id(pad) or 0, pad_token=pad)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or 0  # 0: onnxruntime's default, every core
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self._session = ort.InferenceSession(str(export.path(int8)), options, providers=["CPUExecutionProvider"])
        self._inputs = [i.name for i in self._session.get_inputs()]

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in self._plain.encode_batch(list(texts), add_special_tokens=False)]

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        out = []
        for start in range(0, len(texts), batch_size):
            encodings = self._model.encode_batch(list(texts[start : start + batch_size]))
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            hidden = self._hidden(encodings)
            if self.pooling == "cls":
                pooled = hidden[:, 0, :]
            else:
                weights = mask[..., None].astype(np.float32)
                pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            out.append(unit_rows(pooled))
        return np.vstack(out).astype(np.float32) if out else np.zeros((0, self.dimension), np.float32)

    def pieces(self, texts: Sequence[str]) -> list[tuple[str, ...]]:
        """The word pieces ``token_vectors`` gives, from the tokenizer alone."""
        out = []
        for encoding in (self._model.encode(text) for text in texts):
            out.append(tuple(encoding.tokens[i] for i in _read_pieces(encoding)))
        return out

    def token_vectors(self, texts: Sequence[str], batch_size: int) -> list[TokenVectors]:
        """One text at a time (no padding): the last hidden state of each word piece the model read."""
        out = []
        for text in texts:
            encoding = self._model.encode(text)
            hidden = self._hidden([encoding])[0]
            keep = _read_pieces(encoding)
            out.append(TokenVectors(tuple(encoding.tokens[i] for i in keep), unit_rows(hidden[keep])))
        return out

    def _hidden(self, encodings: Sequence[Any]) -> np.ndarray:
        """The model's last hidden state for a batch of (equally padded) encodings."""
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        return np.asarray(self._session.run(None, {name: feeds[name] for name in self._inputs})[0])


# --- making an export ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportReport:
    folder: Path
    seconds: float
    fp32_min_cosine: float
    int8_min_cosine: float
    int8_mean_cosine: float
    fused: bool


def _pooling(source: Path) -> str:
    """The sentence-transformers pooling the model was trained with (mean or CLS)."""
    try:
        modules = json.loads((source / "modules.json").read_text())
    except (OSError, ValueError):
        return "mean"
    kinds = [str(m.get("type", "")) for m in modules]
    extra = [k for k in kinds if not k.endswith(("Transformer", "Pooling", "Normalize"))]
    if extra:
        raise OnnxUnavailable(f"the model has modules the ONNX export does not cover ({', '.join(extra)})")
    for m in modules:
        if str(m.get("type", "")).endswith("Pooling"):
            config = json.loads((source / m["path"] / "config.json").read_text())
            if config.get("pooling_mode_cls_token"):
                return "cls"
            if not config.get("pooling_mode_mean_tokens", True):
                raise OnnxUnavailable("the model pools in a way the ONNX export does not cover")
    return "mean"


def export_onnx(model: EmbeddingModel, settings: Settings, say: Any = None) -> ExportReport:
    """Export ``model`` from its local weights to fp32 and int8 ONNX, check both against torch on
    the probe bank, and publish the folder in one rename (a crash leaves the old export or none)."""
    say = say or (lambda message: None)
    try:
        import onnx  # noqa: F401  (torch's exporter and the quantiser write through it)
        import torch  # noqa: F401
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise OnnxUnavailable(f"the ONNX export needs {exc.name}: pip install -e . (it is a dependency)") from exc

    started = time.perf_counter()
    source_info = load_source(model.hf_id, settings)
    if not source_info.local:
        raise OnnxUnavailable(f"{model.hf_id} is not on this machine: run `policybot models pull` first")
    source = Path(source_info.path)
    weights = _weights(source)
    if weights is None:
        raise OnnxUnavailable(f"no weights file in {source}")
    pooling = _pooling(source)
    folder = export_dir(model, settings)
    work = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        say("loading the model in torch")
        reference = SentenceTransformer(
            str(source), device="cpu", trust_remote_code=model.trust_remote_code, local_files_only=True
        )
        fused = _write_graphs(model, source, work, reference.tokenizer, say)
        shutil.copy2(source / "tokenizer.json", work / "tokenizer.json")
        meta = _meta(model, reference, weights, pooling, fused)
        say("checking the vectors against torch")
        meta.update(_agreement(reference, OnnxExport(work, meta)))
        if meta["fp32_min_cosine"] < SAME_VECTORS:
            raise OnnxUnavailable(
                f"the ONNX export of {model.name} does not give torch's vectors "
                f"(lowest cosine {meta['fp32_min_cosine']:.5f}); keep the torch backend"
            )
        (work / "export.json").write_text(json.dumps(meta, indent=2))
        _publish(work, folder)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return ExportReport(
        folder,
        time.perf_counter() - started,
        meta["fp32_min_cosine"],
        meta["int8_min_cosine"],
        meta["int8_mean_cosine"],
        fused,
    )


def _meta(model: EmbeddingModel, reference: Any, weights: Path, pooling: str, fused: bool) -> dict[str, Any]:
    """What ``export.json`` records: the weights it was made from and how to run it."""
    import torch

    dimension = (getattr(reference, "get_embedding_dimension", None) or reference.get_sentence_embedding_dimension)()
    return {
        "format": FORMAT,
        "model": model.hf_id,
        "weights": _fingerprint(weights),
        "pooling": pooling,
        "max_seq_length": int(reference.max_seq_length or model.max_tokens),
        "dimension": int(dimension or 0),
        "pad_token": getattr(reference.tokenizer, "pad_token", None) or "[PAD]",
        "fused_attention": fused,
        "torch": torch.__version__,
        "made": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def _publish(work: Path, folder: Path) -> None:
    """Put the finished export in place of the old one: two renames, the old one removed last."""
    old = folder.with_name(f"{folder.name}.old-{os.getpid()}")
    if folder.exists():
        folder.rename(old)
    work.rename(folder)
    shutil.rmtree(old, ignore_errors=True)


def _write_graphs(model: EmbeddingModel, source: Path, work: Path, tokenizer: Any, say: Any) -> bool:
    """``model.onnx`` (attention fused where onnxruntime can) and ``model-int8.onnx`` in ``work``;
    True when attention was fused."""
    import torch
    from transformers import AutoModel

    # Eager attention exports as plain operators that onnxruntime fuses into its Attention kernel.
    net = AutoModel.from_pretrained(
        str(source), attn_implementation="eager", trust_remote_code=model.trust_remote_code
    ).eval()
    sample = tokenizer(["a policy"], return_tensors="pt")

    class LastHidden(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    say("exporting to ONNX")
    raw, fp32 = work / "raw.onnx", work / "model.onnx"
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on shapes it fixes: nothing to act on
        torch.onnx.export(
            LastHidden(net),
            tuple(sample[name] for name in INPUTS),
            str(raw),
            input_names=list(INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    fused = False
    config = net.config
    if getattr(config, "model_type", "") == "bert":
        from onnxruntime.transformers import optimizer

        say("fusing attention")
        optimized = optimizer.optimize_model(
            str(raw), model_type="bert", num_heads=config.num_attention_heads, hidden_size=config.hidden_size
        )
        fused = optimized.get_fused_operator_statistics().get("Attention", 0) > 0
        optimized.save_model_to_file(str(fp32))
        raw.unlink()
    else:
        raw.rename(fp32)
    say("quantising to int8")
    _quantise(fp32, work / "model-int8.onnx")
    return fused


def _quantise(fp32: Path, int8: Path) -> None:
    """Dynamic int8 quantisation of the matrix products, per output channel: vectors within ~0.5 %
    of fp32 (per tensor, 5 %)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(fp32),
        str(int8),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul", "Attention"],
        extra_options={"DefaultTensorType": 1},  # onnx.TensorProto.FLOAT, for the fused ops
    )


def _agreement(reference: Any, export: OnnxExport) -> dict[str, float]:
    """Cosines between torch's vectors and each export's, on the probe bank's short questions and
    one text past the model's window."""
    from policybot.core.probes import probe_bank

    texts = list(probe_bank()[1]) + [" ".join(probe_bank()[1])]
    expected = reference.encode(texts, batch_size=8, normalize_embeddings=True, convert_to_numpy=True)
    found = {}
    for int8 in (False, True):
        encoder = OnnxEncoder(export, int8=int8, threads=None)
        found[int8] = (encoder.encode(texts, batch_size=8) * expected).sum(axis=1)
    return {
        "fp32_min_cosine": round(float(found[False].min()), 6),
        "int8_min_cosine": round(float(found[True].min()), 6),
        "int8_mean_cosine": round(float(found[True].mean()), 6),
    }


def _read_pieces(encoding: Any) -> list[int]:
    """Positions of an encoding's word pieces the model read: not padding, not a special token."""
    flags = zip(encoding.attention_mask, encoding.special_tokens_mask)
    return [i for i, (real, special) in enumerate(flags) if real and not special]
