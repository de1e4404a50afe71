"""Process-wide settings, made once by the entry points (the CLI and the app) before any model
library loads. Library code never changes the environment."""

from __future__ import annotations

import os


def configure_process(verbose: bool = False) -> None:
    """Quiet, offline-friendly defaults; anything the user set already wins."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")  # pymupdf 2.x imports onnxruntime
    os.environ.setdefault("PYMUPDF_SUGGEST_LAYOUT_ANALYZER", "0")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # no fork warnings from tokenizers
    if not verbose:
        # Model loaders print progress bars and notices of their own; keep the output clean.
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
