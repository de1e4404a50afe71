"""OCR benchmark (issue 13): a realistic scan of a document whose true text is known.

The FEMA Dwelling Form from ../shared/eval-data/nfip-flood is rendered to image-only pages at each
DPI with a slight skew and mild noise (eval/make_scan.py), then:
- read by PolicyBot's OCR: seconds per page, mean confidence, character error rate (CER) per page
  against the original's text layer;
- put in place of the digital form in the nfip-flood set, and the set's questions run with
  `policybot eval` (config `hybrid`, the first pass): R@5 and MRR@10 against the digital set, for
  all questions and for the Dwelling Form's own.

    python eval/bench_ocr.py --dpi 200 300 --out /tmp/ocr-bench
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import time
import unicodedata
from difflib import SequenceMatcher
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "eval"))

SET = REPO.parent / "shared" / "eval-data" / "nfip-flood"
SCANNED = "nfip-sfip-dwelling.pdf"


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).lower()).strip()


def cer(ocr: str, truth: str) -> float:
    """Edit distance over the true text's length (difflib's opcodes give the edit count)."""
    a, b = normalise(ocr), normalise(truth)
    if not b:
        return 0.0 if not a else 1.0
    edits = 0
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, b, a, autojunk=False).get_opcodes():
        if tag != "equal":
            edits += max(i2 - i1, j2 - j1)
    return edits / len(b)


def read_scan(scan: Path, digital: Path, dpi: int) -> dict:
    """OCR the scan as ingestion does, rendering at ``dpi`` (the scan's own resolution, or the
    default 300 for scans coarser than OCR needs); CER per page against the digital text layer."""
    import pymupdf

    from policybot.ingestion.ocr import TesseractOCR
    from policybot.ingestion.pdf import OcrPlan, read_pdf
    from policybot.settings import OcrSettings

    settings = OcrSettings(dpi=dpi)
    started = time.perf_counter()
    parsed = read_pdf(scan, ocr=OcrPlan(TesseractOCR(settings), settings), strip_running_headers=False)
    wall = time.perf_counter() - started
    pages = {}
    with pymupdf.open(digital) as doc:
        for number, page in enumerate(doc, start=1):
            ocr_text = " ".join(line.text for line in parsed.lines if line.page == number)
            pages[number] = round(cer(ocr_text, page.get_text()), 4)
    n = len(parsed.ocr_pages) or 1
    return {
        "dpi": dpi,
        "pages": parsed.page_count,
        "ocr_pages": len(parsed.ocr_pages),
        "read_seconds": round(wall, 2),
        "ocr_seconds": parsed.ocr_seconds,
        "seconds_per_page": round(parsed.ocr_seconds / n, 2),
        "mean_confidence": round(statistics.fmean(parsed.ocr_pages.values()), 1) if parsed.ocr_pages else None,
        "min_confidence": min(parsed.ocr_pages.values()) if parsed.ocr_pages else None,
        "cer_mean": round(statistics.fmean(pages.values()), 4),
        "cer_median": round(statistics.median(pages.values()), 4),
        "cer_max": max(pages.values()),
        "cer_per_page": pages,
        "confidence_per_page": parsed.ocr_pages,
        "sections": parsed.sections_found,
        "title": parsed.title,
    }


# Scans from good to unreadable, for the confidence floor: (dpi, noise).
DEGRADATIONS = [
    (300, 12),
    (150, 12),
    (100, 12),
    (300, 40),
    (150, 40),
    (100, 40),
    (300, 70),
    (150, 70),
    (100, 70),
    (75, 40),
    (75, 70),
]
FLOOR_PAGES = {5, 10, 20}
FLOOR_CER = 0.10  # a page whose OCR gets more than one character in ten wrong is not clean text


def floor_calibration(out: Path) -> dict:
    """Page confidence against CER over degraded scans; the floor is the confidence above which
    every page had CER <= FLOOR_CER (the highest confidence of a page worse than that)."""
    import make_scan

    digital = SET / "docs" / SCANNED
    points = []
    for dpi, noise in DEGRADATIONS:
        scan = make_scan.make_scan(
            digital, out / f"degraded-{dpi}-{noise}.pdf", dpi=dpi, noise=noise, pages=FLOOR_PAGES
        )
        read = read_scan(scan, digital, 300)  # the default OCR resolution, whatever the scan's
        for page in sorted(FLOOR_PAGES):
            points.append(
                {
                    "dpi": dpi,
                    "noise": noise,
                    "page": page,
                    "cer": read["cer_per_page"][page],
                    "confidence": read["confidence_per_page"].get(page),
                }
            )
        print(dpi, noise, [(p["page"], p["confidence"], p["cer"]) for p in points[-len(FLOOR_PAGES) :]], flush=True)
    bad = [p["confidence"] or 0.0 for p in points if p["cer"] > FLOOR_CER]
    good = [p["confidence"] or 0.0 for p in points if p["cer"] <= FLOOR_CER]
    return {
        "points": points,
        "floor": max(bad) if bad else None,
        "lowest_good": min(good) if good else None,
        "max_cer": FLOOR_CER,
    }


def dataset(folder: Path, scan: Path | None) -> Path:
    """The nfip-flood set with the Dwelling Form replaced by ``scan`` (links, no copies)."""
    docs = folder / "docs"
    if folder.exists():
        shutil.rmtree(folder)
    docs.mkdir(parents=True)
    for pdf in sorted((SET / "docs").glob("*.pdf")):
        (docs / pdf.name).symlink_to(scan if scan is not None and pdf.name == SCANNED else pdf.resolve())
    (folder / "questions.jsonl").symlink_to((SET / "questions.jsonl").resolve())
    return folder


def retrieval(folder: Path, out: Path, cache: Path) -> dict:
    from policybot.evaluation.harness import run_config, summarize

    result = run_config(folder, "hybrid", out, cache)
    rows = result["questions"]
    dwelling = (
        [r for r in rows if any(g.get("doc") == SCANNED for g in r.get("gold") or [])]
        if rows and "gold" in rows[0]
        else []
    )
    if not dwelling:  # rows carry ids only: take the Dwelling Form's from the set itself
        ids = {
            json.loads(line)["id"]
            for line in (SET / "questions.jsonl").read_text().splitlines()
            if line.strip() and any(g["doc"] == SCANNED for g in json.loads(line).get("gold") or [])
        }
        dwelling = [r for r in rows if r["id"] in ids]

    def scores(subset: list[dict]) -> dict:
        metrics = summarize(subset)["retrieval"]
        return {
            "questions": sum(1 for r in subset if r["answerable"]),
            "R@1": metrics.get("R@1"),
            "R@5": metrics.get("R@5"),
            "MRR@10": metrics.get("mrr@10"),
        }

    return {"all": scores(rows), "dwelling_form": scores(dwelling), "ingestion_seconds": result["ingestion"]["seconds"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dpi", type=int, nargs="+", default=[200, 300])
    ap.add_argument("--out", type=Path, default=Path("/tmp/policybot-ocr-bench"))
    ap.add_argument("--no-eval", action="store_true", help="only OCR speed and CER")
    ap.add_argument("--floor", action="store_true", help="calibrate the confidence floor on degraded scans instead")
    args = ap.parse_args()
    if not SET.is_dir():
        sys.exit(f"{SET} not found: the nfip-flood set lives in ../shared/eval-data")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from policybot.startup import configure_process

    configure_process()
    import make_scan

    args.out.mkdir(parents=True, exist_ok=True)
    if args.floor:
        floor = floor_calibration(args.out)
        (args.out / "ocr-floor.json").write_text(json.dumps(floor, indent=1))
        print(
            f"floor {floor['floor']} (lowest confidence of a page with CER <= {FLOOR_CER}: {floor['lowest_good']}); "
            f"wrote {args.out / 'ocr-floor.json'}"
        )
        return
    digital = SET / "docs" / SCANNED
    report: dict = {"scans": [], "retrieval": {}}
    if not args.no_eval:
        report["retrieval"]["digital"] = retrieval(
            dataset(args.out / "set-digital", None), args.out / "eval", args.out / "cache"
        )
        print("digital", json.dumps(report["retrieval"]["digital"]), flush=True)
    for dpi in args.dpi:
        scan = make_scan.make_scan(digital, args.out / f"scan-{dpi}" / SCANNED, dpi=dpi)
        read = read_scan(scan, digital, dpi)
        report["scans"].append(read)
        print(json.dumps({k: v for k, v in read.items() if k != "cer_per_page"}), flush=True)
        if not args.no_eval:
            report["retrieval"][f"scan-{dpi}"] = retrieval(
                dataset(args.out / f"set-scan-{dpi}", scan), args.out / "eval", args.out / "cache"
            )
            print(f"scan-{dpi}", json.dumps(report["retrieval"][f"scan-{dpi}"]), flush=True)
    (args.out / "ocr-bench.json").write_text(json.dumps(report, indent=1))
    print(f"wrote {args.out / 'ocr-bench.json'}")


if __name__ == "__main__":
    main()
