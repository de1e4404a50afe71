"""Check the gold labels of a "policybot eval dataset v1" folder against its PDFs.

    python eval/datasets/check_gold.py DATASET_DIR             check every gold passage (exit 1 on a failure)
    python eval/datasets/check_gold.py DATASET_DIR --manifest  also (re)write manifest.json from the checked data

One script for every citizen-* set (docs/*.pdf + questions.jsonl in DATASET_DIR). For each gold passage it
opens the PDF with PyMuPDF and looks for the passage in the text of ``page.get_text()`` (default mode):
passage and pages lowercased, quotes and dashes unified, whitespace collapsed, the pages joined with one space
so that a passage crossing a page break is found and gets the page where it starts.
Methods, in order: ``exact`` (substring), ``alnum`` (letters and digits only), ``gapped``
(the same word sequence with one gap of up to 40 words, i.e. a running header/footer inside
a passage that crosses a page). A gold passage passes when the method it was found with is the
stated ``page_match`` and one of its occurrences starts on the stated ``page`` and ends on
the stated ``page_end``.

Also checked: the question fields, ids, categories, answerable/gold/answer consistency,
passage length (8-40 words), optional ``also_in`` (other documents of the set whose text holds
the same passage). The section path is compared with the PDF outline (the last outline
entries before the passage); a mismatch is printed as a warning, not a failure, because
some outlines lack headings that the text has (e.g. the Dwelling form has no "VI. Deductibles"
bookmark).
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

import pymupdf

FORMAT = "policybot eval dataset v1"
ANSWERABLE_CATEGORIES = {"everyday", "story", "short", "typo", "names_document"}
UNANSWERABLE_CATEGORIES = {"near_miss", "out_of_scope"}
GAP_WORDS = 40

_CHARMAP = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032`\u00b4", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
    }
)
_WS = re.compile(r"\s+")
_NON_ALNUM = re.compile(r"[\W_]+")


def norm(text: str) -> str:
    """Lowercase, one style of quotes and dashes, whitespace runs collapsed to one space."""
    return _WS.sub(" ", text.translate(_CHARMAP).lower()).strip()


def alnum(text: str) -> str:
    return _NON_ALNUM.sub("", text.lower())


class DocText:
    """The PyMuPDF text of one PDF, normalised and joined, with page offsets."""

    def __init__(self, path: Path):
        self.path = path
        with pymupdf.open(path) as doc:
            self.page_count = doc.page_count
            self.toc = doc.get_toc()
            pages = [norm(page.get_text()) for page in doc]
        self.starts: list[int] = []
        parts = []
        pos = 0
        for text in pages:
            self.starts.append(pos)
            parts.append(text)
            pos += len(text) + 1
        self.text = " ".join(parts)
        # alnum view with a map back to positions in self.text
        self.alnum_chars: list[str] = []
        self.alnum_pos: list[int] = []
        for i, ch in enumerate(self.text):
            if ch.isalnum():
                self.alnum_chars.append(ch)
                self.alnum_pos.append(i)
        self.alnum_text = "".join(self.alnum_chars)
        # word view
        # word view (letters and digits of each word, for the gapped search)
        self.words: list[str] = []
        self.word_pos: list[int] = []
        self.word_end: list[int] = []
        for m in re.finditer(r"\S+", self.text):
            w = alnum(m.group())
            if w:
                self.words.append(w)
                self.word_pos.append(m.start())
                self.word_end.append(m.end())
        self._outline = None

    def page_of(self, pos: int) -> int:
        """1-based page of a character position in self.text."""
        return bisect.bisect_right(self.starts, pos)

    # -- finding passages ------------------------------------------------------------------
    def find(self, passage: str) -> tuple[str, list[tuple[int, int, int, int]]]:
        """(method, [(page, page_end, start, end), ...]); method 'not_found' when absent."""
        p = norm(passage)
        hits = [(m.start(), m.start() + len(p)) for m in re.finditer(re.escape(p), self.text)] if p else []
        if hits:
            return "exact", [(self.page_of(s), self.page_of(e - 1), s, e) for s, e in hits]
        a = alnum(p)
        if a:
            hits = []
            start = self.alnum_text.find(a)
            while start >= 0:
                s = self.alnum_pos[start]
                e = self.alnum_pos[start + len(a) - 1] + 1
                hits.append((s, e))
                start = self.alnum_text.find(a, start + 1)
            if hits:
                return "alnum", [(self.page_of(s), self.page_of(e - 1), s, e) for s, e in hits]
        words = [w for w in (alnum(x) for x in p.split(" ")) if w]
        n = len(words)
        if not words:
            return "not_found", []
        found = []
        for i in range(len(self.words)):
            if self.words[i] != words[0]:
                continue
            k = 0
            while k < n and i + k < len(self.words) and self.words[i + k] == words[k]:
                k += 1
            if k == n or k == 0:
                continue
            rest = words[k:]
            for gap in range(1, GAP_WORDS + 1):
                j = i + k + gap
                if self.words[j : j + len(rest)] == rest:
                    s = self.word_pos[i]
                    e = self.word_end[j + len(rest) - 1]
                    found.append((self.page_of(s), self.page_of(e - 1), s, e))
                    break
        if found:
            return "gapped", found
        return "not_found", []

    # -- outline -------------------------------------------------------------------------
    def outline_positions(self) -> list[tuple[int, str, int]]:
        """[(level, title, position in self.text)] for the PDF outline entries."""
        if self._outline is None:
            out = []
            for level, title, page in self.toc:
                if page < 1:
                    continue
                start = self.starts[page - 1]
                end = self.starts[page] if page < len(self.starts) else len(self.text)
                pos = self.text.find(norm(title), start, end)
                if pos < 0:
                    # headings written differently on the page ("B Coverage B-..." vs "B. Coverage B—...")
                    a = alnum(title)
                    a_start = bisect.bisect_left(self.alnum_pos, start)
                    a_end = bisect.bisect_left(self.alnum_pos, end)
                    k = self.alnum_text.find(a, a_start, a_end)
                    pos = self.alnum_pos[k] if k >= 0 else start
                out.append((level, title.strip(), pos))
            self._outline = out
        return self._outline

    def section_at(self, pos: int) -> str:
        outline = self.outline_positions()
        top_levels = [lvl for lvl, _, _ in outline if lvl == 1]
        drop_top = len(top_levels) == 1  # a single level-1 entry is the document title
        stack: list[tuple[int, str]] = []
        for level, title, at in outline:
            if at > pos:
                break
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
        names = [t for lvl, t in stack if not (drop_top and lvl == 1)]
        return " > ".join(names)

    def heading_in_text(self, section: str, pos: int) -> bool:
        """True if the first part of ``section`` that the outline lacks is found in the text
        between the outline entry the passage falls under and the passage itself."""
        outline = self.outline_positions()
        before = [at for _, _, at in outline if at <= pos]
        start = max(before) if before else 0
        for part in section.split(">"):
            if not any(alnum(t) == alnum(part) for _, t, _ in outline):
                return self.text.find(norm(part), start, pos) >= 0
        return False


def same_section(given: str, computed: str) -> bool:
    g = [alnum(x) for x in given.split(">")]
    c = [alnum(x) for x in computed.split(">")]
    # the given path may go deeper than the outline does
    return g[: len(c)] == c and len(c) > 0


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load_questions(root: Path) -> list[dict]:
    out = []
    for n, line in enumerate((root / "questions.jsonl").read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            q = json.loads(line)
            q["_line"] = n
            out.append(q)
    return out


def check(root: Path, write_manifest: bool = False) -> int:
    docs_dir = root / "docs"
    pdfs = sorted(docs_dir.glob("*.pdf"))
    if not pdfs:
        print(f"FAIL: no PDFs in {docs_dir} (is the docs symlink broken?)")
        return 1
    texts = {p.name: DocText(p) for p in pdfs}
    questions = load_questions(root)
    failures: list[str] = []
    warnings: list[str] = []
    notes: list[str] = []
    methods: Counter[str] = Counter()
    spans = 0
    per_doc: Counter[str] = Counter()
    ids = Counter(q.get("id") for q in questions)
    for qid, n in ids.items():
        if n > 1:
            failures.append(f"{qid}: id used {n} times")
    required = ["id", "question", "answerable", "gold", "answer", "category", "label_source"]
    for q in questions:
        qid = q.get("id", f"line {q['_line']}")
        missing = [k for k in required if k not in q]
        if missing:
            failures.append(f"{qid}: missing fields {missing}")
            continue
        cats = ANSWERABLE_CATEGORIES if q["answerable"] else UNANSWERABLE_CATEGORIES
        if q["category"] not in cats:
            failures.append(f"{qid}: category {q['category']!r} not allowed for answerable={q['answerable']}")
        if q["answerable"]:
            if not q["gold"]:
                failures.append(f"{qid}: answerable but no gold")
            if not q["answer"]:
                failures.append(f"{qid}: answerable but no reference answer")
        else:
            if q["gold"] or q["answer"] is not None:
                failures.append(f"{qid}: unanswerable must have gold [] and answer null")
        if "docs" in q and sorted(q["docs"]) != sorted({g["doc"] for g in q["gold"]}):
            failures.append(f"{qid}: docs {q['docs']} does not list the gold documents")
        for gi, g in enumerate(q["gold"]):
            tag = f"{qid} gold[{gi}]"
            for k in ("doc", "page", "page_end", "text", "section", "page_match"):
                if k not in g:
                    failures.append(f"{tag}: missing {k}")
            if g.get("doc") not in texts:
                failures.append(f"{tag}: unknown doc {g.get('doc')!r}")
                continue
            nwords = len(g["text"].split())
            if not 8 <= nwords <= 40:
                failures.append(f"{tag}: passage has {nwords} words (want 8-40)")
            dt = texts[g["doc"]]
            method, hits = dt.find(g["text"])
            if method == "not_found":
                failures.append(f"{tag}: passage not found in {g['doc']}: {g['text'][:80]!r}")
                continue
            on_page = [h for h in hits if h[0] == g["page"] and h[1] == g["page_end"]]
            if method != g["page_match"]:
                failures.append(f"{tag}: found as {method!r}, stated {g['page_match']!r}")
            if not on_page:
                found_at = sorted({(h[0], h[1]) for h in hits})
                failures.append(f"{tag}: stated page {g['page']}-{g['page_end']}, found at {found_at}")
                continue
            if len(hits) > 1:
                warnings.append(f"{tag}: passage occurs {len(hits)} times in {g['doc']} (pages {[h[0] for h in hits]})")
            methods[method] += 1
            per_doc[g["doc"]] += 1
            spans += int(g["page"] != g["page_end"])
            computed = dt.section_at(on_page[0][2])
            if not same_section(g["section"], computed):
                if dt.heading_in_text(g["section"], on_page[0][2]):
                    notes.append(
                        f"{tag}: section {g['section']!r}: heading found in the text, not in the outline ({computed!r})"
                    )
                else:
                    warnings.append(f"{tag}: section {g['section']!r}; outline says {computed!r}")
            others = sorted(name for name, t in texts.items() if name != g["doc"] and alnum(g["text"]) in t.alnum_text)
            if "also_in" in g and sorted(g["also_in"]) != others:
                failures.append(f"{tag}: also_in {g['also_in']} but the passage is in {others}")

    answerable = [q for q in questions if q.get("answerable")]
    cats = Counter(q.get("category") for q in questions)
    print(
        f"{root.name}: {len(questions)} questions, {len(answerable)} answerable, {len(questions) - len(answerable)} "
        "unanswerable"
    )
    print("categories: " + ", ".join(f"{k} {v}" for k, v in sorted(cats.items())))
    print(
        f"gold passages: {sum(methods.values())} verified "
        f"({', '.join(f'{k} {v}' for k, v in sorted(methods.items()))}), {spans} cross a page break"
    )
    for n in notes:
        print("note:", n)
    for w in warnings:
        print("warning:", w)
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures, {len(warnings)} warnings")

    if write_manifest and not failures:
        manifest_path = root / "manifest.json"
        old = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
        sources = {d["file"]: d.get("source") for d in old.get("documents", [])}
        titles = {d["file"]: d.get("title") for d in old.get("documents", [])}
        documents = []
        for p in pdfs:
            documents.append(
                {
                    "file": p.name,
                    "title": titles.get(p.name),
                    "pages": texts[p.name].page_count,
                    "outline_entries": len(texts[p.name].toc),
                    "sha256": sha256(p),
                    "source": sources.get(p.name),
                    "gold_passages": per_doc[p.name],
                }
            )
        manifest = {
            "format": FORMAT,
            "set": root.name,
            "documents": documents,
            "questions": len(questions),
            "answerable": len(answerable),
            "unanswerable": len(questions) - len(answerable),
            "categories": dict(sorted(cats.items())),
            "gold_pages": {
                "total": sum(methods.values()),
                **{m: methods.get(m, 0) for m in ("exact", "alnum", "gapped")},
                "fuzzy": 0,
                "not_found": 0,
                "spans_pages": spans,
            },
            "check": {"script": "build_check.py", "failures": len(failures), "warnings": len(warnings)},
            "label_source": old.get("label_source"),
        }
        manifest_path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {manifest_path}")
    return 1 if failures else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--manifest", action="store_true", help="also write manifest.json (only when there are no failures)"
    )
    ap.add_argument("root", help="dataset folder (docs/*.pdf + questions.jsonl)")
    args = ap.parse_args()
    return check(Path(args.root), args.manifest)


if __name__ == "__main__":
    sys.exit(main())
