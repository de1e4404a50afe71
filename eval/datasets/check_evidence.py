"""Check an evidence-mode dev set: every gold passage is found on its stated page.

Usage (from the repository root)::

    .venv/bin/python eval/datasets/check_evidence.py DATASET_DIR [DATASET_DIR ...]

One script for every evidence set (``issues.jsonl``): evidence-issues, evidence-uk-gov,
evidence-contracts.

The documents are found as the evaluation finds them (``dataset_documents``: PDFs in ``docs/``
plus the paths listed in ``docs/shared.txt``, relative to the set's folder). Each PDF is read
with PyMuPDF (``page.get_text()``, default mode). Pages and passages are compared lowercased,
with curly quotes and dashes unified and whitespace runs collapsed; the pages are joined with a
space, so a passage crossing a page break is found and gets the page where it starts (``page``)
and the page where it ends (``page_end``). Pages are 1-based (page index + 1).

Set-specific rules (``SET_RULES``): evidence-issues needs at least 22 issues and its
"escape of water" issue must hold clauses 2.5, 1.6, 5.2 and 6.3.

Failures (exit status 1): a passage not found, found on another page than stated, a wrong
``page_end``; a malformed record (unknown role, document not in the set or not in the issue's
``scope``, passage outside 10-40 words, no section, duplicate id).

Warnings (printed, not failures): an issue with fewer than 4 or more than 12 gold entries (the
labelling guideline), a passage that occurs more than once in its document, and a
passage of which another place in the same document holds a contiguous run of at least half
(lowercase letters and digits only) -- the evaluator's matching rule, so a chunk from that
other place would be counted as holding the clause.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from collections import Counter
from difflib import SequenceMatcher
from pathlib import Path

import pymupdf

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from policybot.evaluation.datasets import dataset_documents  # noqa: E402  (no models loaded)

ROLES = {"covers", "limits", "defines", "condition", "procedure", "other"}
MIN_GOLD, MAX_GOLD = 4, 12
# Per set folder: (minimum issues, {issue: (document, clause numbers its gold sections must hold)}).
SET_RULES: dict[str, tuple[int, dict[str, tuple[str, tuple[str, ...]]]]] = {
    "evidence-issues": (22, {"escape of water": ("homeshield-household-policy.pdf", ("2.5", "1.6", "5.2", "6.3"))}),
}

_QUOTES_DASHES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2033": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
        "\u2212": "-",
    }
)
_WS = re.compile(r"\s+")
_NON_ALNUM = re.compile(r"[\W_]+")


def norm(text: str) -> str:
    """Lowercase, quotes and dashes unified, whitespace collapsed."""
    return _WS.sub(" ", text.translate(_QUOTES_DASHES).lower()).strip()


def alnum(text: str) -> str:
    """Lowercase letters and digits only (as policybot.core.text.alnum: NFKC, soft hyphens dropped)."""
    return _NON_ALNUM.sub("", unicodedata.normalize("NFKC", text).replace("\u00ad", "").lower())


class Doc:
    def __init__(self, path: Path):
        with pymupdf.open(path) as pdf:
            self.pages = [page.get_text() for page in pdf]
        self.starts: list[int] = []
        parts: list[str] = []
        offset = 0
        for text in self.pages:
            self.starts.append(offset)
            n = norm(text)
            parts.append(n)
            offset += len(n) + 1
        self.text = " ".join(parts)
        self.alnum = alnum(" ".join(self.pages))

    def page_of(self, offset: int) -> int:
        page = 0
        for i, start in enumerate(self.starts):
            if start <= offset:
                page = i
        return page + 1

    def find(self, passage: str) -> list[tuple[int, int]]:
        """(start page, end page) of every occurrence of the passage."""
        p = norm(passage)
        hits, i = [], self.text.find(p)
        while i != -1 and p:
            hits.append((self.page_of(i), self.page_of(i + len(p) - 1)))
            i = self.text.find(p, i + 1)
        return hits

    def half_run_elsewhere(self, passage: str) -> str | None:
        """A run of >= half the passage (alnum) found outside the passage's own occurrence."""
        p = alnum(passage)
        pos = self.alnum.find(p)
        if not p or pos < 0:
            return None
        rest = self.alnum[:pos] + "|" + self.alnum[pos + len(p) :]
        m = SequenceMatcher(None, p, rest, autojunk=False).find_longest_match(0, len(p), 0, len(rest))
        return p[m.a : m.a + m.size] if m.size >= (len(p) + 1) // 2 else None


def check(root: Path) -> int:
    issues = [
        json.loads(line) for line in (root / "issues.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    paths = {p.name: p for p in dataset_documents(root)}
    docs: dict[str, Doc] = {}
    failures: list[str] = []
    warnings: list[str] = []

    def doc(name: str) -> Doc | None:
        if name not in docs:
            if name not in paths:
                return None
            docs[name] = Doc(paths[name])
        return docs[name]

    ids = Counter(i.get("id") for i in issues)
    failures += [f"{i}: duplicate id" for i, n in ids.items() if n > 1]

    roles: Counter[str] = Counter()
    per_doc: Counter[str] = Counter()
    n_gold = 0
    for issue in issues:
        iid = issue.get("id")
        scope = issue.get("scope") or []
        gold = issue.get("gold") or []
        if not issue.get("issue") or not scope or not gold:
            failures.append(f"{iid}: missing issue, scope or gold")
        if not MIN_GOLD <= len(gold) <= MAX_GOLD:
            warnings.append(f"{iid}: {len(gold)} gold entries (the guideline is {MIN_GOLD}-{MAX_GOLD})")
        for name in scope:
            if doc(name) is None:
                failures.append(f"{iid}: scope document {name} not in the set's documents")
        for k, g in enumerate(gold, 1):
            n_gold += 1
            where = f"{iid} gold {k} ({g.get('doc')} p{g.get('page')}, {g.get('section')})"
            roles[g.get("role")] += 1
            per_doc[g.get("doc")] += 1
            if g.get("role") not in ROLES:
                failures.append(f"{where}: role {g.get('role')!r} not one of {sorted(ROLES)}")
            if g.get("doc") not in scope:
                failures.append(f"{where}: document not in the issue's scope")
            if not g.get("section"):
                failures.append(f"{where}: no section")
            words = len(g.get("text", "").split())
            if not 10 <= words <= 40:
                failures.append(f"{where}: passage has {words} words (10-40)")
            d = doc(g.get("doc", ""))
            if d is None:
                failures.append(f"{where}: document not in the set's documents")
                continue
            hits = d.find(g.get("text", ""))
            if not hits:
                failures.append(f"{where}: passage not found: {g.get('text', '')[:70]!r}")
                continue
            on_page = [h for h in hits if h[0] == g.get("page")]
            if not on_page:
                failures.append(
                    f"{where}: passage found on page(s) {[h[0] for h in hits]}, not on stated page {g.get('page')}"
                )
                continue
            if g.get("page_end") not in {h[1] for h in on_page}:
                failures.append(f"{where}: page_end {g.get('page_end')} but passage ends on page {on_page[0][1]}")
            if len(hits) > 1:
                warnings.append(
                    f"{where}: passage occurs {len(hits)} times in the document (pages {[h[0] for h in hits]})"
                )
            run = d.half_run_elsewhere(g["text"])
            if run:
                warnings.append(f"{where}: half of the passage also occurs elsewhere in the document: {run[:60]!r}")

    min_issues, required = SET_RULES.get(root.resolve().name, (1, {}))
    if len(issues) < min_issues:
        failures.append(f"only {len(issues)} issues (need {min_issues})")
    for name, (docname, clauses) in required.items():
        match = [i for i in issues if i.get("issue") == name and docname in (i.get("scope") or [])]
        if not match:
            failures.append(f"required issue {name!r} over {docname} missing")
            continue
        sections = [g.get("section", "") for g in match[0]["gold"] if g.get("doc") == docname]
        for c in clauses:
            if not any(re.search(rf"(^|> ){re.escape(c)} ", s) for s in sections):
                failures.append(f"{match[0]['id']} ({name}): clause {c} missing from gold")

    print(f"{root}: {len(issues)} issues, {n_gold} gold passages")
    print("per role: " + ", ".join(f"{r} {roles[r]}" for r in sorted(roles, key=str)))
    print("per document: " + ", ".join(f"{d} {n}" for d, n in sorted(per_doc.items(), key=lambda x: str(x[0]))))
    for w in warnings:
        print("WARNING " + w)
    for f in failures:
        print("FAIL " + f)
    print(f"{len(failures)} failures, {len(warnings)} warnings")
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    return max(check(Path(a)) for a in argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
