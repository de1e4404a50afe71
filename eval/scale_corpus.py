"""Distinct, realistic policy PDFs for the scale benchmark (issue 12), generated from the sample
policy's Markdown source (``data/source/homeshield-household-policy.md``).

    python eval/scale_corpus.py [--out /tmp/scale/corpus] [--seed 12] [--count 5] [--long]

Each generated document is the household policy re-written for another (fictional) insurer:

- names: insurer, product, wording reference, edition date, web address, phone numbers, the
  disputes service;
- numbers: money amounts scaled (and in another currency), periods in days / hours / weeks,
  percentages and ages changed, consistently within a document;
- structure: sections re-ordered and re-labelled (Section / Part / Chapter, other titles),
  optional clauses dropped, extra clauses (loss of rent, pedal cycles, sanctions, ...) added,
  every clause renumbered and every cross-reference ("clause 6.3", "Section 4") following;
- wording: defined terms renamed (Deductible -> Excess, Insured Person -> Covered Person, ...),
  phrases swapped for synonyms, sentences of longer paragraphs re-ordered;
- layout: page size, font, font size, line spacing, colours, footer.

Everything is drawn from ``random.Random(f"{seed}:{index}")``: the same seed and index give the
same text and a byte-identical PDF. Generated files are cached in the output folder (never in the
repository); the shared evaluation sets' PDFs are read where they are (``fixed_documents``).
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import random
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "data" / "source" / "homeshield-household-policy.md"
SAMPLE_PDF = REPO / "data" / "homeshield-household-policy.pdf"
SHARED = REPO.parent / "shared" / "eval-data"
DEFAULT_CACHE = Path("/tmp/scale/corpus")
GENERATOR_VERSION = "g1"  # part of every file name: a changed generator never reuses old files
FIXED_DATE = "D:20250101000000+00'00'"


def _sample_builder():
    """data/build_sample_policy.py, imported from its path (``data`` is not a package)."""
    spec = importlib.util.spec_from_file_location("_build_sample_policy", REPO / "data" / "build_sample_policy.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    assert spec and spec.loader
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


_BSP = _sample_builder()
Block = _BSP.Block
PolicyDoc = _BSP.PolicyDoc

# --- what varies -------------------------------------------------------------------------------

INSURER_FIRST = [
    "Northgate",
    "Bluewater",
    "Ironbridge",
    "Meridian",
    "Oakfield",
    "Larkspur",
    "Harbourside",
    "Pennant",
    "Silverline",
    "Granite",
    "Westmoor",
    "Kestrel",
    "Beacon",
    "Riverside",
    "Thornbury",
    "Aldercrest",
    "Summit",
    "Crownfield",
    "Evergreen",
    "Lindenhall",
    "Marlow",
    "Copperleaf",
    "Fairhaven",
    "Stonegate",
    "Wrenfield",
    "Ashcombe",
    "Highmoor",
]
INSURER_SECOND = [
    "Mutual Insurance",
    "Assurance",
    "General Insurance",
    "Insurance Company",
    "Underwriting",
    "Home Insurance",
    "Insurance Group",
    "Mutual",
    "Indemnity",
    "Casualty and General",
]
PRODUCT_FIRST = [
    "HomeGuard",
    "NestSecure",
    "DwellSafe",
    "HouseWise",
    "Keystone",
    "Hearth & Hall",
    "SafeHaven",
    "Cornerstone",
    "HomeFirst",
    "Shelter Plus",
    "Roofline",
    "Homestead",
    "Doorstep",
    "Threshold",
    "HomeCare",
    "Foundation",
]
PRODUCT_SECOND = [
    "Household Policy",
    "Home Insurance",
    "Homeowners Policy",
    "Buildings and Contents Policy",
    "Home Cover",
    "Household Insurance",
    "Home Protection Policy",
    "Residential Policy",
]
DISPUTES = [
    "Independent Insurance Disputes Service",
    "Insurance Ombudsman Service",
    "Financial Disputes Commission",
    "Consumer Insurance Review Board",
    "Office of the Insurance Adjudicator",
]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
CURRENCIES = ["$", "$", "£", "€"]
MONEY_FACTORS = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
DAY_STEPS = [7, 10, 14, 21, 28, 30, 45, 60, 90, 120, 180]

SECTION_LABELS = ["Section", "Section", "Part", "Chapter"]
SECTION_TITLES = {
    "Definitions": ["Definitions", "Meaning of words", "Defined terms", "Words with special meanings"],
    "Buildings Cover": ["Buildings Cover", "Cover for your Buildings", "Buildings Insurance", "Your Buildings"],
    "Contents Cover": ["Contents Cover", "Cover for your Contents", "Contents Insurance", "Your Contents"],
    "General Exclusions": [
        "General Exclusions",
        "What this policy does not cover",
        "Exclusions applying to the whole policy",
    ],
    "Deductibles": ["Deductibles"],  # follows the Deductible/Excess rename
    "Conditions": ["Conditions", "General Conditions", "Conditions applying to the whole policy", "Your obligations"],
    "Legal Expenses": ["Legal Expenses", "Legal Costs Cover", "Legal Protection"],
    "Claims": ["Claims", "Making a claim", "How to claim", "Claims conditions"],
    "Cancellation and Refunds": ["Cancellation and Refunds", "Cancelling your policy", "Cancellation"],
    "Complaints": ["Complaints", "If you have a complaint", "Complaints procedure", "How to complain"],
}

# Defined terms: (forms of the original, forms of each alternative), case-sensitive, longest first.
TERMS: list[list[tuple[str, ...]]] = [
    [("Deductibles", "Deductible", "deductibles", "deductible"), ("Excesses", "Excess", "excesses", "excess")],
    [
        ("Escape of Water", "Escape of water", "escape of water"),
        ("Water Escape", "Water escape", "water escape"),
        ("Leakage of Water", "Leakage of water", "leakage of water"),
    ],
    [
        ("Insured Persons", "Insured Person"),
        ("Covered Persons", "Covered Person"),
        ("Insured Members", "Insured Member"),
    ],
    [("Period of Insurance",), ("Policy Period",), ("Period of Cover",)],
    [("Sums Insured", "Sum Insured"), ("Limits of Cover", "Limit of Cover")],
    [("Unoccupied",), ("Vacant",)],
    [("Valuables",), ("High-Risk Items",), ("Valuable Items",)],
    [("Personal Possessions",), ("Personal Belongings",)],
    [("Wear and Tear", "Wear and tear", "wear and tear"), ("Normal Wear", "Normal wear", "normal wear")],
    [("Home",), ("Residence",), ("Dwelling",)],
]

# Phrases and their synonyms (first-letter case is kept); one choice per phrase per document.
PHRASES: list[tuple[str, list[str]]] = [
    (
        "we will not pay for",
        ["we do not cover", "this policy does not cover", "we will not cover", "we do not pay for"],
    ),
    ("we will cover", ["we will insure", "we cover", "we insure", "this policy covers"]),
    ("what is not covered", ["what we will not pay for", "what is excluded", "exclusions", "what is not insured"]),
    ("you must", ["you need to", "you are required to", "you have to"]),
    ("as soon as reasonably possible", ["as soon as you can", "without undue delay", "promptly"]),
    ("the most we will pay", ["the maximum we will pay", "the most we pay", "our maximum payment"]),
    ("for any one incident", ["for each incident", "per incident", "for any one claim", "for each claim"]),
    ("loss or damage", ["damage or loss"]),
    ("reasonable costs", ["reasonable expenses", "reasonable charges"]),
    ("reasonable cost", ["reasonable expense", "reasonable charge"]),
    ("in writing", ["in writing or by email", "by letter or email"]),
    ("legal liability", ["legal responsibility", "liability at law"]),
    ("caused by", ["resulting from", "arising from", "due to"]),
    ("happens", ["occurs", "takes place"]),
    ("happened", ["occurred", "took place"]),
    ("for example", ["for instance"]),
    ("your schedule", ["your policy schedule", "your certificate", "the schedule"]),
    ("policyholder", ["policy holder", "named insured"]),
    ("unless", ["except where", "unless"]),
    ("at least", ["no less than", "not less than"]),
    ("a period of time", ["a length of time", "some time"]),
    ("provided that", ["as long as", "on condition that"]),
]

EXTRA_CLAUSES: list[tuple[int, str, list[str]]] = [
    (
        2,
        "Loss of rent",
        [
            "If the Home is let and cannot be lived in because of loss or damage covered by this section, we will pay "
            "the rent you would have received, for up to 12 months, up to 20% of the Buildings Sum Insured.",
            "We will not pay for rent which you would not have received in any event, for example because the tenancy "
            "had already ended.",
        ],
    ),
    (
        2,
        "Removal of debris",
        [
            "We will pay the reasonable costs of demolishing, shoring up and removing debris from the site after loss "
            "or damage covered by this section, up to $10,000 for any one incident.",
        ],
    ),
    (
        2,
        "Building regulations and planning costs",
        [
            "When we repair or rebuild the Buildings after a claim under this section, we will also pay the extra "
            "costs of meeting building regulations or local authority requirements, provided that you were not "
            "told about them before the damage happened.",
            "We will not pay these costs if you were served with a notice before the loss or damage happened.",
        ],
    ),
    (
        2,
        "Emergency access",
        [
            "We will pay for damage caused to the Buildings by the emergency services forcing entry to deal with a "
            "medical emergency or to prevent damage to the Home, up to $1,500 for any one incident.",
        ],
    ),
    (
        2,
        "Sale of the Home",
        [
            "If you have agreed to sell the Home, the buyer will have the benefit of this section until the sale is "
            "completed, provided the Buildings are not otherwise insured.",
        ],
    ),
    (
        3,
        "Pedal cycles",
        [
            "We will cover pedal cycles and their accessories belonging to an Insured Person against theft, up to $750 "
            "for any one cycle, provided the cycle was locked to an immovable object or kept in a locked "
            "building.",
            "We will not pay for theft of tyres, lamps or accessories unless the cycle is stolen at the same time, or "
            "for damage while the cycle is used for racing or pacemaking.",
        ],
    ),
    (
        3,
        "Home office equipment",
        [
            "We will cover computers, printers and office furniture used by an Insured Person for clerical work in the "
            "Home, up to $5,000 for any one incident, against loss or damage caused by an insured event in clause "
            "3.2.",
            "We will not cover equipment owned by an employer, or stock and samples held for business purposes.",
        ],
    ),
    (
        3,
        "Hotel costs when locked out",
        [
            "If you cannot enter the Home because the keys have been lost or stolen, we will pay for a hotel room for "
            "your household for one night, up to $250 for any one incident.",
        ],
    ),
    (
        3,
        "Matching sets and suites",
        [
            "If an item which forms part of a set or suite is lost or damaged, we will pay for the item itself and not "
            "for replacing undamaged items of the set or suite which match it, unless the set cannot be used "
            "without it.",
        ],
    ),
    (
        3,
        "Pets",
        [
            "We will cover damage to your Contents caused by your domestic pets, up to $1,000 for any one incident, if "
            "your schedule shows that Accidental Damage cover for Contents is included.",
            "We will not pay for damage caused by chewing, scratching, tearing or fouling which happens gradually, or "
            "for damage to the pet itself.",
        ],
    ),
    (
        3,
        "Tenant's improvements",
        [
            "If you rent the Home, we will cover fixtures, fittings and decorations which you have installed and for "
            "which you are responsible under your tenancy agreement, up to 10% of the Contents Sum Insured.",
        ],
    ),
    (
        6,
        "Sanctions",
        [
            "We will not provide any cover or pay any claim under this policy if doing so would expose us to any "
            "sanction, prohibition or restriction under the resolutions of the United Nations or the trade or "
            "economic sanctions, laws or regulations of any country.",
        ],
    ),
    (
        6,
        "Governing law",
        [
            "Unless we agree otherwise in writing, this policy is governed by the law of the country in which the Home "
            "is situated, and its courts alone will decide any dispute about it.",
        ],
    ),
    (
        6,
        "How we use your personal information",
        [
            "We use the information you give us to manage your policy and handle claims, and we may share it with "
            "other insurers, fraud prevention agencies and our service providers for those purposes.",
            "You can ask us for a copy of the information we hold about you, and ask us to correct it, by writing to "
            "our data protection officer.",
        ],
    ),
    (
        6,
        "Compensation scheme",
        [
            "We are members of a policyholder compensation scheme. If we cannot meet our obligations to you, you may "
            "be entitled to compensation from the scheme, depending on the type of insurance and the "
            "circumstances of the claim.",
        ],
    ),
    (
        8,
        "Help for customers in vulnerable circumstances",
        [
            "If your health, a bereavement or other circumstances make it harder for you to deal with a claim, please "
            "tell us. We can arrange a single point of contact, extra time to provide documents, or communication "
            "in another format.",
        ],
    ),
    (
        8,
        "Claims for specified items",
        [
            "For Valuables shown as specified items in your schedule, you must provide a valuation or receipt dated no "
            "more than 36 months before the loss. We may replace a specified item through our own suppliers.",
        ],
    ),
]

PALETTE = ["#1f3a5f", "#5f1f3a", "#1f5f3a", "#3a3a3a", "#6b4e16", "#16506b", "#4b1f5f"]
PAGES = {"letter": pymupdf.paper_rect("letter"), "a4": pymupdf.paper_rect("a4"), "a5": pymupdf.paper_rect("a5")}


@dataclass
class Layout:
    page: str = "letter"
    font: str = "sans-serif"
    size: float = 10.5
    line: float = 1.18
    colour: str = "#1f3a5f"
    margin: float = 58.0
    footer: str = "{title} \u2014 page {n} of {m}"


@dataclass
class Generated:
    """One generated policy: its file name, text (the Markdown subset) and layout."""

    index: int
    name: str
    insurer: str
    product: str
    markdown: str
    layout: Layout
    meta: dict = field(default_factory=dict)


# --- text helpers ----------------------------------------------------------------------------------


def _case_like(template: str, word: str) -> str:
    return word[:1].upper() + word[1:] if template[:1].isupper() else word


def _phrase_sub(phrase: str, choice: str) -> Callable[[str], str]:
    pattern = re.compile(r"\b" + re.escape(phrase) + r"\b", re.IGNORECASE)
    return lambda text: pattern.sub(lambda m: _case_like(m.group(0), choice), text)


def _multi_sub(mapping: dict[str, str]) -> Callable[[str], str]:
    """Replace whole words/phrases in one pass (so a replacement is never replaced again)."""
    if not mapping:
        return lambda text: text
    keys = sorted(mapping, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w-])(" + "|".join(re.escape(k) for k in keys) + r")(?![\w-])")
    return lambda text: pattern.sub(lambda m: mapping[m.group(1)], text)


def _fix_articles(text: str) -> str:
    return (
        re.sub(r"\b([Aa]) (?=(?:[Ee]xcess|[Ee]scape|[Ii]nsured|[Uu]noccupied)\b)", lambda m: m.group(1) + "n ", text)
        .replace("an Vacant", "a Vacant")
        .replace("an Covered", "a Covered")
        .replace("an Water", "a Water")
        .replace("an Leakage", "a Leakage")
    )


def _money(value: int, currency: str) -> str:
    return f"{currency}{value:,}"


def split_sentences(text: str) -> list[str]:
    return re.split(r"(?<=[.;:])\s+(?=[A-Z(])", text)


# --- the generator ----------------------------------------------------------------------------------


@dataclass
class _Section:
    number: int | None  # as in the source
    title: str
    head: Block | None
    intro: list[Block]
    clauses: list[tuple[Block, list[Block]]]  # (h3, body)


def _sections(doc: PolicyDoc) -> list[_Section]:
    out: list[_Section] = []
    for block in doc.blocks:
        if block.kind == "h2":
            m = re.match(r"Section (\d+) (.+)$", block.text)
            out.append(_Section(int(m.group(1)) if m else None, m.group(2) if m else block.text, block, [], []))
        elif block.kind == "h3":
            out[-1].clauses.append((block, []))
        elif out[-1].clauses:
            out[-1].clauses[-1][1].append(block)
        else:
            out[-1].intro.append(block)
    return out


def _all_text(doc: PolicyDoc) -> str:
    parts = [doc.title, *doc.cover]
    for b in doc.blocks:
        parts.append(b.text)
        parts.extend(c for row in b.rows for c in row)
    return "\n".join(parts)


def generate(index: int, seed: int = 12, long: bool = False) -> Generated:
    """The ``index``-th generated policy for ``seed`` (``long``: laid out to about 30 pages)."""
    rng = random.Random(f"{seed}:{index}:{'long' if long else 'std'}")
    doc = _BSP.parse_source(SOURCE.read_text(encoding="utf-8"))
    referenced = set(
        re.findall(
            r"\b(\d{1,2}\.\d{1,2})\b",
            "\n".join(b.text for b in doc.blocks if b.kind != "h3")
            + "\n".join(c for b in doc.blocks for row in b.rows for c in row),
        )
    )

    # Identity.
    first = rng.choice(INSURER_FIRST)
    insurer = f"{first} {rng.choice(INSURER_SECOND)}"
    brand = rng.choice(PRODUCT_FIRST)
    product = f"{brand} {rng.choice(PRODUCT_SECOND)}"
    reference = f"{first[:2].upper()}-{re.sub(r'[^A-Z]', '', brand.upper())[:2]}-{rng.randint(1, 19):02d}"
    edition = rng.randint(1, 12)
    effective = f"{rng.randint(1, 28)} {rng.choice(MONTHS)} {rng.randint(2021, 2026)}"
    web = f"www.{re.sub(r'[^a-z]', '', insurer.lower())[:22]}.example"
    phones = {p: f"555-0{rng.randint(100, 199)}" for p in ("555-0142", "555-0143", "555-0177", "555-0100")}
    currency = rng.choice(CURRENCIES)
    factor = rng.choice(MONEY_FACTORS)
    label = rng.choice(SECTION_LABELS)

    # Structure: order, drops, extra clauses, numbering.
    sections = _sections(doc)
    about, definitions, rest = sections[0], sections[1], sections[2:]
    head, tail = rest[:2], rest[2:]
    if rng.random() < 0.25:
        head.reverse()
    for _ in range(rng.randint(0, 3)):
        i = rng.randrange(len(tail) - 1)
        tail[i], tail[i + 1] = tail[i + 1], tail[i]
    ordered = [about, definitions, *head, *tail]
    dropped = 0
    for sec in ordered:
        if sec.number in (2, 3, 6, 8):
            keep = []
            for h3, body in sec.clauses:
                num = h3.text.split(" ", 1)[0]
                if dropped < 3 and num not in referenced and not num.endswith(".1") and rng.random() < 0.12:
                    dropped += 1
                    continue
                keep.append((h3, body))
            sec.clauses = keep
    extras = rng.sample(EXTRA_CLAUSES, k=rng.randint(1 if not long else 4, 5 if not long else 9))
    for target, heading, paras in extras:
        sec = next(s for s in ordered if s.number == target)
        at = rng.randint(1, len(sec.clauses))
        sec.clauses.insert(at, (Block("h3", f"0.0 {heading}"), [Block("p", p) for p in paras]))
    clause_map: dict[str, str] = {}
    section_map: dict[int, int] = {}
    titles: dict[int, str] = {}
    new_no = 0
    for sec in ordered:
        if sec.number is None:
            continue
        new_no += 1
        section_map[sec.number] = new_no
        titles[sec.number] = rng.choice(SECTION_TITLES.get(sec.title, [sec.title]))
        for c, (h3, body) in enumerate(sec.clauses, start=1):
            old, _, rest_text = h3.text.partition(" ")
            if old != "0.0":
                clause_map[old] = f"{new_no}.{c}"
            sec.clauses[c - 1] = (Block("h3", f"\u0000{new_no}.{c}\u0000 {rest_text}"), body)
        if sec.head is not None:
            sec.head = Block("h2", f"\u0000{label} {new_no}\u0000 {titles[sec.number]}")

    old_titles = {sec.number: sec.title for sec in ordered if sec.number is not None}
    ref_re = re.compile(
        r"(?<!\x00)\bSection (\d+)(?: ("
        + "|".join(re.escape(t) for t in sorted(set(old_titles.values()), key=len, reverse=True))
        + r"))?\b|(?<!\x00)\b(\d{1,2})\.(\d{1,2})\b"
    )

    def refs(text: str) -> str:
        def sub(m: re.Match) -> str:
            if m.group(1):
                old = int(m.group(1))
                new = section_map.get(old, old)
                title = f" {titles[old]}" if m.group(2) and old in titles else (f" {m.group(2)}" if m.group(2) else "")
                return f"{label} {new}{title}"
            key = f"{m.group(3)}.{m.group(4)}"
            return clause_map.get(key, key)

        return ref_re.sub(sub, text)

    # Wording.
    term_map: dict[str, str] = {}
    for forms in TERMS:
        choice = forms[0] if rng.random() < 0.35 else rng.choice(forms[1:])
        term_map.update(dict(zip(forms[0], choice)))
    terms = _multi_sub({k: v for k, v in term_map.items() if k != v})
    phrase_subs = [_phrase_sub(p, rng.choice(alts)) for p, alts in PHRASES if rng.random() < 0.6]
    identity = _multi_sub(
        {
            "Hearthstone Mutual Insurance": insurer,
            "Hearthstone Mutual": insurer,
            "HomeShield Household Policy": product,
            "HomeShield": brand,
            "HM-HS-05": reference,
            "www.hearthstonemutual.example": web,
            "Independent Insurance Disputes Service": rng.choice(DISPUTES),
            **phones,
        }
    )

    money_cache: dict[str, str] = {}

    def money(m: re.Match) -> str:
        raw = m.group(1)
        if raw not in money_cache:
            value = int(raw.replace(",", ""))
            money_cache[raw] = _money(round(value * factor), currency)
        return money_cache[raw]

    day_cache: dict[int, int] = {}

    def days(m: re.Match) -> str:
        value = int(m.group(1))
        if value in (365, 1) or value not in DAY_STEPS:
            return m.group(0)
        if value not in day_cache:
            i = DAY_STEPS.index(value)
            day_cache[value] = DAY_STEPS[max(0, min(len(DAY_STEPS) - 1, i + rng.choice([-1, 0, 0, 1])))]
        return f"{day_cache[value]}{m.group(2)}{m.group(3)}"

    percent = {v: rng.choice([v, v, max(5, v - 5), min(95, v + 5), min(95, v + 10)]) for v in (10, 20, 80, 90)}
    hours = {24: rng.choice([24, 24, 48]), 48: rng.choice([24, 48, 72])}
    weeks = {4: rng.choice([4, 6]), 8: rng.choice([6, 8, 12])}

    def numbers(text: str) -> str:
        text = re.sub(r"\$(\d{1,3}(?:,\d{3})+|\d+)", money, text)
        text = re.sub(r"\b(\d+)([- ])((?:working |consecutive )?days?)\b", days, text)
        text = re.sub(r"\b(\d+)%", lambda m: f"{percent.get(int(m.group(1)), int(m.group(1)))}%", text)
        text = re.sub(r"\b(24|48) hours\b(?! a day)", lambda m: f"{hours[int(m.group(1))]} hours", text)
        text = re.sub(r"\b(4|8) weeks\b", lambda m: f"{weeks[int(m.group(1))]} weeks", text)
        return text

    def words(text: str, reorder: bool = False) -> str:
        text = terms(refs(text))
        for sub in phrase_subs:
            text = sub(text)
        text = identity(numbers(_fix_articles(text)))  # last: the new names are never re-worded
        if reorder and rng.random() < 0.35:
            sentences = split_sentences(text)
            if len(sentences) >= 3:
                i, j = rng.sample(range(1, len(sentences)), 2)
                sentences[i], sentences[j] = sentences[j], sentences[i]
                text = " ".join(sentences)
        return text.replace("\u0000", "")

    def block(b: Block) -> Block:
        if b.kind == "table":
            return Block("table", rows=[[words(c) for c in row] for row in b.rows])
        return Block(b.kind, words(b.text, reorder=b.kind == "p"))

    blocks: list[Block] = []
    for sec in ordered:
        if sec.head is not None:
            blocks.append(block(sec.head))
        blocks.extend(block(b) for b in sec.intro)
        for h3, body in sec.clauses:
            blocks.append(block(h3))
            blocks.extend(block(b) for b in body)
    cover = [
        insurer,
        rng.choice(
            [
                "Buildings and Contents Insurance - Policy Wording",
                "Home Insurance - Policy Booklet",
                "Household Insurance - Terms and Conditions",
                "Policy Wording",
            ]
        ),
        f"Policy wording reference {reference} (edition {edition}, effective {effective})",
        f"This document is a fictional policy generated for PolicyBot's scale benchmark (issue 12). {insurer} is not a "
        "real insurer and this document does not provide any insurance cover.",
    ]
    out = PolicyDoc(title=product, cover=cover, blocks=blocks)
    layout = Layout(
        page="a5" if long else rng.choice(["letter", "letter", "a4"]),
        font=rng.choice(["sans-serif", "sans-serif", "serif"]),
        size=rng.choice([9.5, 10.0, 10.5, 11.0]) if not long else 9.0,
        line=rng.choice([1.12, 1.18, 1.25]),
        colour=rng.choice(PALETTE),
        margin=rng.choice([50.0, 58.0, 66.0]) if not long else 40.0,
        footer=rng.choice(
            ["{title} \u2014 page {n} of {m}", "{ref} \u2014 page {n} of {m}", "Page {n} of {m} \u2014 {insurer}"]
        ),
    )
    slug = re.sub(r"[^a-z0-9]+", "-", f"{brand} {first}".lower()).strip("-")
    name = f"{slug}-{'long-' if long else ''}{GENERATOR_VERSION}-s{seed}-{index:05d}.pdf"
    meta = {
        "reference": reference,
        "currency": currency,
        "factor": factor,
        "label": label,
        "dropped": dropped,
        "extras": [e[1] for e in extras],
        "order": [s.title for s in ordered],
    }
    gen = Generated(index, name, insurer, product, _to_markdown(out), layout, meta)
    gen.meta["doc"] = out
    return gen


def _to_markdown(doc: PolicyDoc) -> str:
    """The document as the Markdown subset (for inspection and the tests)."""
    lines = [f"# {doc.title}", ""]
    for para in doc.cover:
        lines += [para, ""]
    for b in doc.blocks:
        if b.kind == "h2":
            lines += [f"## {b.text}", ""]
        elif b.kind == "h3":
            lines += [f"### {b.text}", ""]
        elif b.kind == "bullet":
            lines += [f"- {b.text}"]
        elif b.kind == "table":
            header, *body = b.rows
            lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            lines += ["| " + " | ".join(r) + " |" for r in body] + [""]
        else:
            lines += [b.text, ""]
    return "\n".join(lines)


# --- layout -----------------------------------------------------------------------------------------


def _css(layout: Layout) -> str:
    css = _BSP.CSS.replace("#1f3a5f", layout.colour).replace("font-family: sans-serif", f"font-family: {layout.font}")
    css = css.replace("font-size: 10.5pt; line-height: 1.18", f"font-size: {layout.size}pt; line-height: {layout.line}")
    return css


def _layout(body: str, layout: Layout, bottoms: dict[int, float]):
    page = PAGES[layout.page]
    content = pymupdf.Rect(layout.margin, 50, page.width - layout.margin, page.height - 58)
    story = pymupdf.Story(body, user_css=_css(layout), em=layout.size)
    buffer = io.BytesIO()
    writer = pymupdf.DocumentWriter(buffer)
    found: list = []

    def rectfn(rect_num, _filled):
        where = pymupdf.Rect(content)
        where.y1 = bottoms.get(rect_num + 1, content.y1)
        return page, where, None

    def positionfn(pos):
        is_table = (pos.id or "").startswith("table-")
        if is_table or (pos.heading and pos.open_close & 1):
            found.append(_BSP.Heading(pos.heading, pos.text or pos.id or "", pos.page_num, pymupdf.Rect(pos.rect)))

    story.write(writer, rectfn, positionfn=positionfn)
    writer.close()
    return buffer.getvalue(), found, content


def _bad_break(positions, bottoms: dict[int, float], content: pymupdf.Rect):
    bad = []
    for pos in positions:
        bottom = bottoms.get(pos.page, content.y1)
        if pos.level >= 2 and pos.rect.y1 > bottom - _BSP.KEEP_WITH_NEXT or pos.level == 0 and pos.rect.y1 > bottom - 8:
            bad.append((pos.page, pos.rect.y0 - 1))
    bad = [(p, y) for p, y in bad if content.y0 + 40 < y < bottoms.get(p, content.y1) - 0.5]
    return min(bad) if bad else None


def render(gen: Generated, out: Path) -> int:
    """Write the generated policy as a PDF (bookmarks, running footer, metadata); its page count."""
    doc_src = gen.meta["doc"]
    body = _BSP.to_html(doc_src)
    bottoms: dict[int, float] = {}
    for _ in range(60):  # push stranded headings and split tables to the next page
        pdf_bytes, positions, content = _layout(body, gen.layout, bottoms)
        fix = _bad_break(positions, bottoms, content)
        if fix is None:
            break
        page, bottom = fix
        bottoms = {p: y for p, y in bottoms.items() if p < page}
        bottoms[page] = bottom
    pdf = pymupdf.open("pdf", pdf_bytes)
    font = pymupdf.Font("helv")
    size = 8.5
    page_rect = PAGES[gen.layout.page]
    for page in pdf:
        text = gen.layout.footer.format(
            title=gen.product, ref=gen.meta["reference"], insurer=gen.insurer, n=page.number + 1, m=pdf.page_count
        )
        x = (page_rect.width - font.text_length(text, fontsize=size)) / 2
        page.insert_font(fontname="FooterSans", fontbuffer=font.buffer)
        page.insert_text(
            (x, page_rect.height - 30), text, fontname="FooterSans", fontsize=size, color=(0.35, 0.35, 0.35)
        )
        page.draw_line(
            (content.x0, page_rect.height - 44), (content.x1, page_rect.height - 44), color=(0.6, 0.6, 0.6), width=0.5
        )
    pdf.set_toc(_BSP.make_toc(positions))
    pdf.set_metadata(
        {
            "title": gen.product,
            "author": gen.insurer,
            "subject": "Household insurance policy wording (fictional, generated)",
            "keywords": "household insurance, policy wording, generated",
            "creator": "PolicyBot eval/scale_corpus.py",
            "producer": "PyMuPDF",
            "creationDate": FIXED_DATE,
            "modDate": FIXED_DATE,
        }
    )
    pdf.subset_fonts()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".part")
    pdf.save(tmp, garbage=4, deflate=True, no_new_id=True, reproducible=True)
    pages = pdf.page_count
    pdf.close()
    tmp.replace(out)
    return pages


def generated_pdf(index: int, seed: int = 12, cache: Path = DEFAULT_CACHE, long: bool = False) -> Path:
    """The path of the ``index``-th generated PDF, made on first use and cached."""
    gen = generate(index, seed, long)
    path = Path(cache) / gen.name
    if not path.is_file():
        render(gen, path)
    return path


def long_pdf(seed: int = 12, cache: Path = DEFAULT_CACHE, pages: tuple[int, int] = (28, 32)) -> Path:
    """A ~30-page generated policy (an A5 booklet) that no library holds, for "add one document"."""
    for index in range(900_000, 900_010):
        gen = generate(index, seed, long=True)
        path = Path(cache) / gen.name
        if path.is_file():
            with pymupdf.open(path) as d:
                if pages[0] <= d.page_count <= pages[1]:
                    return path
        for size in (9.0, 9.5, 8.5, 10.0):
            gen.layout.size = size
            if pages[0] <= render(gen, path) <= pages[1]:
                return path
        path.unlink(missing_ok=True)
    raise RuntimeError(f"no generated layout came to {pages[0]}-{pages[1]} pages")


def fixed_documents() -> list[Path]:
    """The real PDFs every library starts with: the sample policy and the shared sets' PDFs."""
    found = [SAMPLE_PDF]
    for name in ("nfip-flood", "privacy-policies"):
        found.extend(sorted((SHARED / name / "docs").glob("*.pdf")))
    return [p for p in found if p.is_file()]


def corpus(seed: int = 12, cache: Path = DEFAULT_CACHE) -> Iterator[Path]:
    """Documents in library order: the fixed ones, then generated policies without end."""
    yield from fixed_documents()
    index = 0
    while True:
        yield generated_pdf(index, seed, cache)
        index += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--count", type=int, default=5)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--long", action="store_true", help="also make the ~30-page document")
    ap.add_argument("--markdown", action="store_true", help="write each document's Markdown beside its PDF")
    args = ap.parse_args()
    for i in range(args.start, args.start + args.count):
        gen = generate(i, args.seed)
        path = generated_pdf(i, args.seed, args.out)
        if args.markdown:
            path.with_suffix(".md").write_text(gen.markdown, encoding="utf-8")
        with pymupdf.open(path) as d:
            print(
                f"{path} ({d.page_count} pages; {gen.insurer}; {gen.product}; "
                f"{gen.meta['currency']}x{gen.meta['factor']}; extras {gen.meta['extras']})"
            )
    if args.long:
        path = long_pdf(args.seed, args.out)
        with pymupdf.open(path) as d:
            print(f"{path} ({d.page_count} pages, long)")


if __name__ == "__main__":
    main()
