"""Health checks: what is present, what is missing, and the exact command that fixes it."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from policybot.models.profiles import Profile, local_model_path
from policybot.models.providers import ollama_status
from policybot.schemas import Check, DoctorReport
from policybot.settings import Settings

if TYPE_CHECKING:
    from policybot.service import PolicyBot


def run_checks(bot: PolicyBot, repair: bool = False, ollama_client: Any = None) -> DoctorReport:
    """Check models, index and LLM server for a ``PolicyBot`` service."""
    resolved = bot.components.profile
    checks = _model_checks(bot.settings, resolved.profile)
    checks.append(_embedder_check(bot.settings, resolved.profile))
    checks.append(_index_check(bot, repair))
    if not bot.settings.chroma_url:
        checks.append(_set_aside_check(bot.settings.home, repair))
    checks.append(_documents_check(bot))
    checks.append(_ocr_check(bot))
    checks += _ollama_checks(bot.settings, resolved.profile, ollama_client)
    if bot.settings.kiosk:
        checks.append(_kiosk_check(bot.settings))
    return DoctorReport(profile=resolved.name, profile_reason=resolved.reason, checks=checks)


def _kiosk_check(settings: Settings) -> Check:
    """A kiosk's admin PIN: without one, nobody can unlock uploads and deletes at the screen (the
    visitors are never told how to set one)."""
    return Check(
        name="kiosk admin PIN",
        ok=bool(settings.kiosk_pin),
        required=False,
        detail="set: the admin can unlock the library at the screen" if settings.kiosk_pin else "not set",
        fix=None if settings.kiosk_pin else "set POLICYBOT_KIOSK_PIN to allow unlocking the library at the kiosk",
    )


def _embedder_check(settings: Settings, profile: Profile) -> Check:
    """Which backend runs the embedding model, and whether the ONNX export a fast start needs is there."""
    from policybot.models.embeddings import choose_backend
    from policybot.models.onnx import export_problem

    model = profile.embedding
    backend = choose_backend(model, settings)
    problem = export_problem(model, settings)
    if backend.startswith("onnx"):
        return Check(
            name="embedding backend",
            ok=problem is None,
            detail=f"{backend}: " + (problem or "the ONNX export, without torch"),
            fix=None if problem is None else "policybot models export-onnx",
        )
    if settings.embedding_backend == "torch" or problem is None:  # chosen, or a GPU
        return Check(name="embedding backend", ok=True, required=False, detail="torch")
    return Check(
        name="embedding backend",
        ok=False,
        required=False,
        detail=f"torch: {problem}; the ONNX export starts ~4 s sooner with the same vectors",
        fix="policybot models export-onnx",
    )


def _model_checks(settings: Settings, profile: Profile) -> list[Check]:
    pull = f"policybot models pull --profile {profile.name}"
    path = local_model_path(profile.embedding.hf_id, settings)
    checks = [
        Check(
            name="embedding model",
            ok=path is not None,
            detail=f"{profile.embedding.hf_id}: " + (f"found at {path}" if path else "not on this machine"),
            fix=None if path else pull,
        )
    ]
    if profile.reranker is None:
        checks.append(
            Check(
                name="reranker",
                ok=True,
                required=False,
                detail=f"none in the {profile.name} profile (no reranker weights ship offline)",
            )
        )
        return checks
    rpath = local_model_path(profile.reranker.hf_id, settings)
    has_flag = importlib.util.find_spec("FlagEmbedding") is not None
    checks.append(
        Check(
            name="reranker",
            ok=rpath is not None and has_flag,
            detail=f"{profile.reranker.hf_id}: "
            + (f"found at {rpath}" if rpath else "not on this machine")
            + ("" if has_flag else "; the FlagEmbedding package is not installed"),
            fix=None if rpath and has_flag else (pull if has_flag else "pip install -e '.[paper]'"),
        )
    )
    return checks


def _ocr_check(bot: PolicyBot) -> Check:
    """Optional: without OCR, scanned pages are reported and left out rather than read."""
    ocr = bot.settings.ocr
    if not ocr.enabled:
        return Check(
            name="ocr",
            ok=True,
            required=False,
            detail="turned off (POLICYBOT_OCR__ENABLED=false): scanned pages are left out",
        )
    health = bot.components.ocr.health()
    if not health.available:
        return Check(
            name="ocr",
            ok=False,
            required=False,
            detail="Tesseract not found: scanned pages cannot be read",
            fix=health.fix("policybot doctor"),
        )
    installed = ", ".join(health.languages) or "none"
    if health.missing:
        return Check(
            name="ocr",
            ok=False,
            required=False,
            detail=f"{health.version}; language(s) {', '.join(health.missing)} not installed (installed: {installed})",
            fix=health.fix("policybot doctor"),
        )
    return Check(
        name="ocr", ok=True, required=False, detail=f"{health.version}; reading {ocr.language} (installed: {installed})"
    )


def _documents_check(bot: PolicyBot) -> Check:
    docs = bot.library.documents()
    return Check(
        name="documents",
        ok=bool(docs.documents),
        required=False,
        detail=f"{len(docs.documents)} indexed with {bot.components.profile.profile.embedding.name}"
        + (
            f"; {len(docs.other_models)} more indexed with other models (not searched now)" if docs.other_models else ""
        ),
        fix=None if docs.documents else "policybot ingest data/",
    )


def _ollama_checks(settings: Settings, profile: Profile, client: Any) -> list[Check]:
    status = ollama_status(settings.ollama_host, client=client)
    checks = [
        Check(
            name="ollama",
            ok=status.reachable,
            required=False,
            detail=f"answering at {settings.ollama_host}"
            if status.reachable
            else f"not reachable at {settings.ollama_host} ({status.error})",
            fix=None
            if status.reachable
            else "install Ollama (https://ollama.com/download), then start it with `ollama serve` "
            "(or set OLLAMA_HOST to a running server); without it answers are extractive quotes",
        )
    ]
    if status.reachable:
        has = status.has(profile.llm.name)
        checks.append(
            Check(
                name="llm model",
                ok=has,
                required=False,
                detail=f"{profile.llm.name}: "
                + ("present" if has else f"not pulled (server has: {', '.join(status.models) or 'none'})"),
                fix=None if has else f"ollama pull {profile.llm.name}",
            )
        )
    return checks


def _set_aside_check(home: Path, repair: bool) -> Check:
    """Vector stores set aside after an interrupted write (the library was rebuilt from the registry
    without them). They are kept for inspection and take disk space, which matters most when a full
    disk was what interrupted the write."""
    aside = sorted(home.glob("chroma.interrupted-*"))
    if repair:
        for folder in aside:
            shutil.rmtree(folder, ignore_errors=True)
        return Check(name="set-aside stores", ok=True, required=False, detail=f"{len(aside)} removed")
    if not aside:
        return Check(name="set-aside stores", ok=True, required=False, detail="none")
    size = sum(f.stat().st_size for folder in aside for f in folder.rglob("*") if f.is_file()) / 1e6
    return Check(
        name="set-aside stores",
        ok=False,
        required=False,
        detail=f"{len(aside)} vector store(s) set aside after an interrupted write ({size:.1f} MB), no longer used",
        fix="policybot doctor --repair removes them",
    )


def _index_check(bot: PolicyBot, repair: bool) -> Check:
    settings: Settings = bot.settings
    where = settings.chroma_url or str(settings.home / "chroma")
    try:
        index = bot.components.index  # opening it runs the start-up clean-up of interrupted ingestions
        repaired = ""
        if repair:
            cleaned = index.recover(bot.components.library_lock)
            with bot.components.library_lock.hold():  # a Chroma write: one writer at a time
                removed = index.reconcile()
            repaired = (
                f"; repaired: vectors of {removed + cleaned.interrupted} unregistered document(s) and "
                f"{cleaned.files} unused file(s) removed"
            )
        # Counted after any repair, so the report says what is there now.
        count = index.store.count()
        orphans = index.store.doc_ids() - {d.doc_id for d in index.documents()}
    except Exception as exc:
        fix = (
            f"start the Chroma server at {settings.chroma_url} (`chroma run --path DIR --port PORT`) or unset "
            "POLICYBOT_CHROMA_URL"
            if settings.chroma_url
            else f"check that {where} is writable; if it is damaged, move it away and re-run `policybot ingest`"
        )
        return Check(name="index", ok=False, detail=f"{where}: {exc}", fix=fix)
    detail = f"{where}: collection {index.collection}, {count} vectors{repaired}"
    if orphans:
        return Check(
            name="index",
            ok=False,
            required=False,
            detail=detail
            + f"; {len(orphans)} unregistered document(s) left by an interrupted ingestion (never shown in results)",
            fix="policybot doctor --repair",
        )
    return Check(name="index", ok=True, detail=detail)
