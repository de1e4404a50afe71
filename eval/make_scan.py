"""Turn a digital PDF into a realistic scan whose true text is known (issue 13's OCR benchmark).

Each chosen page is rendered to greyscale at DPI, turned by a slight skew, given mild Gaussian
noise, and put back as the page's only content (a JPEG, as scanners write them): no text layer
is left. Pages not chosen stay digital, which makes a mixed document.

    python eval/make_scan.py ../shared/eval-data/nfip-flood/docs/nfip-sfip-dwelling.pdf \
        /tmp/scan-300/nfip-sfip-dwelling.pdf --dpi 300
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import numpy as np
import pymupdf
from PIL import Image


def scanned_page_image(page: pymupdf.Page, dpi: int, skew: float, noise: float, rng: np.random.Generator) -> bytes:
    """The page as a scanner would return it: JPEG bytes."""
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
    img = Image.frombytes("L", (pix.width, pix.height), pix.samples)
    img = img.rotate(skew, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=255)
    grey = np.asarray(img).astype(np.float32) + rng.normal(0.0, noise, (img.height, img.width))
    out = io.BytesIO()
    Image.fromarray(np.clip(grey, 0, 255).astype(np.uint8)).save(out, format="JPEG", quality=85, dpi=(dpi, dpi))
    return out.getvalue()


def make_scan(
    src: Path,
    out: Path,
    dpi: int = 300,
    skew: float = 0.8,
    noise: float = 12.0,
    pages: set[int] | None = None,
    seed: int = 0,
) -> Path:
    """Write OUT: SRC with the chosen pages (1-based; all when None) as image-only scans."""
    rng = np.random.default_rng(seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    with pymupdf.open(src) as doc, pymupdf.open() as scan:
        for index, page in enumerate(doc):
            if pages is not None and index + 1 not in pages:
                scan.insert_pdf(doc, from_page=index, to_page=index)
                continue
            # Alternate the skew's direction, as pages fed by hand do.
            angle = skew if index % 2 == 0 else -skew
            target = scan.new_page(width=page.rect.width, height=page.rect.height)
            target.insert_image(target.rect, stream=scanned_page_image(page, dpi, angle, noise, rng))
        scan.save(out, garbage=3, deflate=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--dpi", type=int, default=300)
    ap.add_argument("--skew", type=float, default=0.8, help="degrees, alternating in sign page by page")
    ap.add_argument("--noise", type=float, default=12.0, help="standard deviation of the grey-level noise")
    ap.add_argument("--pages", default="", help="1-based pages to scan, e.g. 1-3,7 (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    chosen: set[int] | None = None
    if args.pages:
        chosen = set()
        for part in args.pages.split(","):
            lo, _, hi = part.partition("-")
            chosen.update(range(int(lo), int(hi or lo) + 1))
    print(make_scan(args.src, args.out, args.dpi, args.skew, args.noise, chosen, args.seed))


if __name__ == "__main__":
    main()
