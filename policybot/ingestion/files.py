"""The files a user hands over: folders expanded to their PDFs, browser-supplied names made safe,
and what is plainly not an ingestible PDF rejected before it is opened."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from pathlib import Path
from typing import Iterable

from policybot.errors import IngestError


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given; folders become the PDFs inside them (recursively, sorted)."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() == ".pdf"))
        else:
            out.append(path)
    return out


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# Characters that mean something to Markdown, HTML, shells or file systems: a library name
# is shown in many places and must read as plain text everywhere.
_NAME_META = re.compile(r"""[\[\]()<>!*_`#|{}~$\\"':;&%=?^+@,]""")
MAX_NAME_CHARS = 120


def safe_upload_name(name: str) -> str:
    """A browser-supplied file name as a safe library name: base name only, no control or
    markup characters, at most ``MAX_NAME_CHARS`` long, ending in ``.pdf``."""
    base = re.split(r"[\\/]", unicodedata.normalize("NFC", name or ""))[-1]
    base = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in base)
    base = _NAME_META.sub(" ", base)
    base = re.sub(r"\s+", " ", base).strip()
    stem = (base[:-4] if base.lower().endswith(".pdf") else base).strip(" .-")
    stem = stem[: MAX_NAME_CHARS - 4].rstrip(" .-") or "document"
    return f"{stem}.pdf"


def check_file(path: Path, max_mb: float) -> None:
    """Reject what is plainly not an ingestible PDF before opening it."""
    if not path.is_file():
        raise IngestError("not_found", f"{path}: no such file")
    size = path.stat().st_size
    if size == 0:
        raise IngestError("empty", f"{path.name}: the file is empty (0 bytes)")
    if size > max_mb * 1024 * 1024:
        raise IngestError(
            "too_large", f"{path.name}: {size / 1048576:.1f} MB is over the {max_mb:g} MB limit (POLICYBOT_MAX_FILE_MB)"
        )
    with open(path, "rb") as handle:
        head = handle.read(1024)
    if b"%PDF-" not in head:
        raise IngestError(
            "not_pdf", f"{path.name}: not a PDF file (no %PDF header); only PDF documents can be ingested"
        )
