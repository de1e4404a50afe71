"""Reading image-only pages on this machine: Tesseract, word by word, with its confidence.

Engine choice and its measurements: eval/decisions/2026-11-24-ocr-engine.md. Tesseract runs as
the Debian `tesseract` command (no Python binding to build): each page is rendered with PyMuPDF,
piped to `tesseract stdin stdout tsv`, and read back as words with boxes and confidences. One
thread per page and pages in parallel: Tesseract's own OpenMP threads slow it down on a busy
2-core machine (1.5 s per 300-dpi page with one thread, 2.1 s with two, 6 s when both cores are
contended).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np

from policybot.errors import PolicyBotError
from policybot.settings import OcrSettings

# A word with no letter or digit read at low confidence is scanner noise, not text.
_NOISE_CONFIDENCE = 50.0
_ALNUM = re.compile(r"[^\W_]")
INSTALL_HINT = (
    "install Tesseract: `sudo apt-get install tesseract-ocr` (Debian/Ubuntu; other languages: "
    "tesseract-ocr-LANG), or `make` as root"
)


class OcrUnavailable(PolicyBotError):
    """OCR was needed but no usable engine is installed."""


@dataclass
class OcrLine:
    """One line as Tesseract read it, in PDF points (y grows downwards, as in PyMuPDF)."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    block: int
    confidence: float  # 0-100, the mean of its words' confidences, weighted by their length
    chars: int
    ink: float = 0.0  # share of dark pixels inside its word boxes: bold text has more
    words: list[tuple[str, tuple[float, float, float, float]]] = field(default_factory=list)  # in points

    @property
    def height(self) -> float:
        return self.y1 - self.y0


@dataclass
class OcrPage:
    page: int  # 1-based
    lines: list[OcrLine] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def confidence(self) -> float:
        """The page's confidence: its lines' confidences weighted by their characters (0 when empty)."""
        chars = sum(line.chars for line in self.lines)
        return round(sum(line.confidence * line.chars for line in self.lines) / chars, 1) if chars else 0.0


@dataclass
class OcrHealth:
    available: bool
    version: str = ""
    languages: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # asked for but not installed

    @property
    def usable(self) -> bool:
        return self.available and not self.missing

    def fix(self, command: str) -> str:
        if not self.available:
            return INSTALL_HINT
        packages = " ".join(f"tesseract-ocr-{lang.lower().replace('_', '-')}" for lang in self.missing)
        return (
            f"install the language data: `sudo apt-get install {packages}` (or set POLICYBOT_OCR__LANGUAGE to one "
            f"of: {', '.join(self.languages)}; `{command}` lists them)"
        )


def parse_tsv(tsv: str, scale: float, dark: np.ndarray | None = None) -> list[OcrLine]:
    """Tesseract's TSV (level 5 rows are words) as lines; ``scale`` turns pixels into points.
    ``dark`` (the page's pixels, True where ink) gives each line its ink share."""
    words: dict[tuple[int, int, int], list[tuple[str, float, tuple[float, float, float, float]]]] = {}
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) != 12 or cols[0] != "5" or not cols[11].strip():
            continue
        text, confidence = cols[11].strip(), float(cols[10])
        if confidence < _NOISE_CONFIDENCE and not _ALNUM.search(text):
            continue
        left, top, width, height = (float(v) for v in cols[6:10])
        words.setdefault((int(cols[2]), int(cols[3]), int(cols[4])), []).append(
            (text, confidence, (left, top, left + width, top + height))
        )
    lines = []
    for (block, _par, _line), ws in words.items():
        chars = sum(len(w) for w, _, _ in ws)
        ink = _ink_share(dark, [b for _, _, b in ws]) if dark is not None else 0.0
        lines.append(
            OcrLine(
                text=" ".join(w for w, _, _ in ws),
                x0=min(b[0] for _, _, b in ws) * scale,
                y0=min(b[1] for _, _, b in ws) * scale,
                x1=max(b[2] for _, _, b in ws) * scale,
                y1=max(b[3] for _, _, b in ws) * scale,
                block=block,
                confidence=round(sum(c * len(w) for w, c, _ in ws) / chars, 1),
                chars=chars,
                ink=ink,
                words=[(w, (b[0] * scale, b[1] * scale, b[2] * scale, b[3] * scale)) for w, _, b in ws],
            )
        )
    return lines


# A list marker standing alone: "12.", "(b)", "iv)", "3:" (OCR reads a dot as a colon or comma).
_MARKER = re.compile(r"\(?(?:\d{1,3}|[a-zA-Z]|[ivxIVX]{1,4})[.):,;]\)?")
# A Roman numeral as OCR misreads it (I as l, 1, i or |; "Vil." for "VII."), before a capitalised heading.
_ROMAN_OCR = re.compile(r"^([IVXl1i|v]{1,5})([.)])(\s+[A-Z])")


def attach_markers(lines: list[OcrLine]) -> list[OcrLine]:
    """Put list numbers back on their items. Tesseract often reads a column of hanging numbers
    ("20.", "21.") as a block of its own, away from the text they number; left so, they become
    chunks of bare numbers and the items lose their clause numbers. Each marker word goes to the
    line that starts just right of it at the same height."""
    kept: list[OcrLine] = []
    markers: list[tuple[str, tuple[float, float, float, float]]] = []
    for line in lines:
        if line.words and all(_MARKER.fullmatch(w) for w, _ in line.words):
            markers.extend(line.words)
        else:
            kept.append(line)
    for text, (x0, y0, x1, y1) in markers:
        middle, height = (y0 + y1) / 2, max(y1 - y0, 1.0)
        beside = [
            ln
            for ln in kept
            if ln.x0 >= x1 - height
            and ln.x0 - x1 <= 6 * height
            and abs((ln.y0 + ln.y1) / 2 - middle) <= 0.6 * max(ln.y1 - ln.y0, height)
        ]
        if not beside:
            kept.append(OcrLine(text, x0, y0, x1, y1, -1, 0.0, len(text), 0.0, [(text, (x0, y0, x1, y1))]))
            continue
        target = min(beside, key=lambda ln: ln.x0 - x1)
        target.text = f"{text} {target.text}"
        target.x0 = x0
        target.words.insert(0, (text, (x0, y0, x1, y1)))
    return kept


def roman_heading(text: str) -> str:
    """A heading's Roman numeral as printed: "Il. DEFINITIONS" -> "II. DEFINITIONS", "Vil." -> "VII."
    (only numerals that mix in an I, V or X, so "1. AGREEMENT" and "i) the" are left alone)."""
    m = _ROMAN_OCR.match(text)
    if not m or not re.search(r"[IVX]", m.group(1)) or m.group(1).isdigit():
        return text
    letters = [c for c in text[m.end(2) :] if c.isalpha()]
    if len(letters) < 4 or not all(c.isupper() for c in letters):  # headings like these are in capitals
        return text
    numeral = m.group(1).translate(str.maketrans("l1i|v", "IIIIV"))
    return numeral + text[m.end(1) :]


def _ink_share(dark: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> float:
    """Dark pixels over the area of the word boxes (not the line's box: gaps and skew add white)."""
    ink = area = 0
    for x0, y0, x1, y1 in boxes:
        part = dark[int(y0) : int(y1), int(x0) : int(x1)]
        ink += int(part.sum())
        area += part.size
    return ink / area if area else 0.0


def grey_pixels(pgm: bytes) -> np.ndarray:
    """A binary PGM (P5, 8-bit) as a 2-D array."""
    parts = pgm.split(maxsplit=4)  # b"P5", width, height, maxval, pixels
    if len(parts) != 5 or parts[0] != b"P5":
        raise ValueError("not an 8-bit binary PGM image")
    width, height = int(parts[1]), int(parts[2])
    return np.frombuffer(pgm[len(pgm) - width * height :], dtype=np.uint8).reshape(height, width)


class TesseractOCR:
    """The Tesseract command: health, and pages read in parallel."""

    def __init__(self, settings: OcrSettings) -> None:
        self.settings = settings
        self._health: OcrHealth | None = None

    @property
    def command(self) -> str | None:
        return shutil.which(self.settings.tesseract_cmd)

    def health(self) -> OcrHealth:
        """Whether Tesseract is installed with the configured languages (asked once)."""
        if self._health is None:
            self._health = self._probe()
        return self._health

    def _probe(self) -> OcrHealth:
        exe = self.command
        if exe is None:
            return OcrHealth(False)
        try:
            version = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
            listed = subprocess.run([exe, "--list-langs"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return OcrHealth(False)
        first = (version.stdout or version.stderr).strip().splitlines()
        langs = sorted(
            line.strip() for line in listed.stdout.splitlines()[1:] if line.strip() and line.strip() != "osd"
        )
        wanted = [lang for lang in self.settings.language.split("+") if lang]
        return OcrHealth(
            True, first[0] if first else "tesseract", langs, [lang for lang in wanted if lang not in langs]
        )

    def read_image(self, pgm: bytes, page: int, dpi: int) -> OcrPage:
        """One rendered page (greyscale PGM bytes at ``dpi``: no compression to wait for) read
        by Tesseract."""
        exe = self.command
        if exe is None:
            raise OcrUnavailable(f"page {page} has no text layer and OCR is not installed; {INSTALL_HINT}")
        started = time.perf_counter()
        env = {**os.environ, "OMP_THREAD_LIMIT": "1"}  # one core per page; pages run side by side
        cmd = [exe, "stdin", "stdout", "--dpi", str(dpi), "-l", self.settings.language, "--psm", "3", "tsv"]
        try:
            done = subprocess.run(cmd, input=pgm, capture_output=True, timeout=self.settings.page_timeout_s, env=env)
        except subprocess.TimeoutExpired as exc:
            raise OcrUnavailable(f"page {page}: OCR took longer than {self.settings.page_timeout_s:.0f} s") from exc
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise OcrUnavailable(f"page {page}: tesseract failed ({message[-1] if message else done.returncode})")
        lines = parse_tsv(done.stdout.decode("utf-8", "replace"), 72.0 / dpi, grey_pixels(pgm) < 128)
        return OcrPage(page, lines, round(time.perf_counter() - started, 3))

    def read_pages(
        self,
        images: Iterable[tuple[int, int, bytes]],
        total: int,
        on_page: Callable[[int, int], None] | None = None,
    ) -> list[OcrPage]:
        """Pages (page number, dpi, PGM bytes) read side by side, in page order; ``on_page(done, total)`` after each.
        ``images`` is consumed as pages finish (rendering stays in the caller's thread, where
        PyMuPDF is safe), so at most two pages per worker wait in memory."""
        workers = self.settings.workers or max(1, os.cpu_count() or 1)
        done: list[OcrPage] = []
        waiting: deque[Future[OcrPage]] = deque()

        def collect() -> None:
            done.append(waiting.popleft().result())
            if on_page:
                on_page(len(done), total)

        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="policybot-ocr") as pool:
            try:
                for page, dpi, image in images:
                    waiting.append(pool.submit(self.read_image, image, page, dpi))
                    while len(waiting) >= 2 * workers:
                        collect()
                while waiting:
                    collect()
            finally:
                for future in waiting:  # an error stops the rest: nothing half-read is used
                    future.cancel()
        return done
