"""Building real PDFs for tests with PyMuPDF: headings, wrapped paragraphs, ruled tables,
running footers, outlines, blank and image-only pages, encryption and corruption."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

PAGE_W, PAGE_H = 612, 792
LEFT, TOP, BOTTOM = 60, 60, 720
BODY_SIZE, LINE_GAP = 10, 14


@dataclass
class PdfBuilder:
    """Lays out text top to bottom, starting new pages as needed."""

    footer: str | None = None  # e.g. "Test Policy - page {n}"
    doc: pymupdf.Document = field(default_factory=pymupdf.open)
    y: float = TOP
    toc: list[list] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.page = self.doc.new_page(width=PAGE_W, height=PAGE_H)

    @property
    def page_no(self) -> int:
        return self.page.number + 1

    def new_page(self) -> None:
        self.page = self.doc.new_page(width=PAGE_W, height=PAGE_H)
        self.y = TOP

    def _line(self, text: str, font: str = "helv", size: float = BODY_SIZE) -> None:
        if self.y > BOTTOM:
            self.new_page()
        self.page.insert_text((LEFT, self.y), text, fontname=font, fontsize=size)
        self.y += LINE_GAP if size <= BODY_SIZE else LINE_GAP + 4

    def heading(self, text: str, level: int = 1, outline: bool = False, size: float = 12) -> None:
        if self.y > BOTTOM - 30:
            self.new_page()
        self.y += 6
        if outline:
            self.toc.append([level, text, self.page_no])
        self._line(text, font="hebo", size=size)

    def paragraph(self, text: str, width: int = 95) -> None:
        for line in textwrap.wrap(text, width):
            self._line(line)
        self.y += 4

    def table(self, rows: list[list[str]], col_width: float = 150, row_h: float = 18) -> None:
        """A ruled grid that ``page.find_tables()`` recognises."""
        height = row_h * len(rows)
        if self.y + height > BOTTOM:
            self.new_page()
        top = self.y
        cols = len(rows[0])
        for r in range(len(rows) + 1):
            self.page.draw_line((LEFT, top + r * row_h), (LEFT + cols * col_width, top + r * row_h))
        for c in range(cols + 1):
            self.page.draw_line((LEFT + c * col_width, top), (LEFT + c * col_width, top + height))
        for r, row in enumerate(rows):
            for c, cell in enumerate(row):
                font = "hebo" if r == 0 else "helv"
                self.page.insert_text((LEFT + c * col_width + 4, top + r * row_h + 13), cell, fontname=font, fontsize=9)
        self.y = top + height + 16

    def image_only_page(self) -> None:
        """A page with a picture and no text, like a scan."""
        self.new_page()
        pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 60, 60), 0)
        pix.clear_with(180)
        self.page.insert_image(pymupdf.Rect(100, 100, 400, 400), pixmap=pix)

    def save(self, path: Path, **kwargs) -> Path:
        if self.footer:
            total = self.doc.page_count
            for page in self.doc:
                page.insert_text((LEFT, PAGE_H - 30), self.footer.format(n=page.number + 1, total=total), fontsize=8)
        if self.toc:
            self.doc.set_toc(self.toc)
        self.doc.set_metadata({"title": "", "author": "PolicyBot tests"})
        self.doc.save(path, **kwargs)
        self.doc.close()
        return path


FILLER = (
    "The insurer will consider each claim on its own facts and will act in good faith at all times. "
    "Any amount payable is subject to the limits shown in the schedule and to the other terms of this policy. "
)


def sample_policy(path: Path, outline: bool = False, blank_page: bool = True) -> Path:
    """A multi-page policy with numbered sections and clauses, a table, a clause crossing a
    page break, a running footer and (optionally) a page with no text."""
    b = PdfBuilder(footer="Acme Home Policy - page {n} of {total}")
    b.heading("Acme Home Insurance Policy", size=16)
    b.paragraph("This policy is a contract between you and Acme Insurance. Read it carefully.")
    b.heading("Section 1 Definitions", outline=outline)
    b.heading("1.1 Insured Person", level=2, outline=outline, size=10.5)
    b.paragraph(
        "Insured Person means you, your spouse or partner, and members of your family who permanently live "
        "in your home, including children under twenty-one years of age studying away from home."
    )
    b.heading("1.2 Wear and Tear", level=2, outline=outline, size=10.5)
    b.paragraph("Wear and Tear means the gradual loss of value or condition of property through ordinary use and age.")
    for _ in range(6):
        b.paragraph(FILLER * 2)
    b.heading("Section 2 Exclusions", outline=outline)
    b.heading("2.1 Gradual deterioration", level=2, outline=outline, size=10.5)
    b.paragraph(
        "We will not pay for loss or damage caused by wear and tear, rust, rot, mould or gradual deterioration."
    )
    # Fill the page so the next clause starts near the bottom and runs onto the next page.
    while b.y < BOTTOM - 60:
        b.paragraph(FILLER)
    b.heading("2.2 Earthquake damage", level=2, outline=outline, size=10.5)
    b.paragraph(
        "Earthquake damage to the buildings is covered only when the schedule shows the earthquake extension. "
        "The extension pays for the cost of repairing cracks in walls and foundations caused by an earthquake "
        "measuring at least four on the Richter scale, up to the earthquake limit stated in the schedule. "
        "Claims under the earthquake extension must be notified within seven days of the earthquake."
    )
    b.heading("Section 3 Deductibles", outline=outline)
    b.paragraph(
        "The deductible is the first part of each claim that you must pay yourself, as shown in the table below."
    )
    b.table(
        [
            ["Cover", "Standard deductible", "Escape of water"],
            ["Buildings", "$250", "$750"],
            ["Contents", "$150", "$500"],
            ["Valuables", "$100", "$100"],
        ]
    )
    b.paragraph(
        "The escape of water deductible applies once per incident, even if both buildings and contents are damaged."
    )
    if blank_page:
        b.image_only_page()
    b.new_page()
    b.heading("Section 4 Cancellation", outline=outline)
    b.heading("4.1 Cooling-off period", level=2, outline=outline, size=10.5)
    b.paragraph("You may cancel within fourteen days of receiving this policy and we will refund the premium in full.")
    return b.save(path)


def scanned_pdf(path: Path, pages: int = 3) -> Path:
    doc = pymupdf.open()
    for _ in range(pages):
        page = doc.new_page(width=PAGE_W, height=PAGE_H)
        pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 40, 40), 0)
        pix.clear_with(200)
        page.insert_image(pymupdf.Rect(50, 50, 500, 700), pixmap=pix)
    doc.save(path)
    doc.close()
    return path


def encrypted_pdf(path: Path) -> Path:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Secret policy terms.")
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user-secret", owner_pw="owner-secret")
    doc.close()
    return path


def corrupt_pdf(path: Path) -> Path:
    """A PDF header followed by garbage: looks like a PDF, cannot be opened as one."""
    path.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40)
    return path


def simple_pdf(path: Path, paragraphs: list[str], heading: str | None = None) -> Path:
    b = PdfBuilder()
    if heading:
        b.heading(heading)
    for p in paragraphs:
        b.paragraph(p)
    return b.save(path)


def truncated_pdf(path: Path) -> Path:
    """A two-page PDF cut off where its first page's content stream begins: the file opens
    (MuPDF repairs it) but no page has any text left. A damaged file, not a scan."""
    doc = pymupdf.open()
    for i in range(2):
        doc.new_page(width=PAGE_W, height=PAGE_H).insert_text(
            (72, 72), f"Clause {i + 1}. The insurer pays claims within 30 days."
        )
    data = doc.tobytes(deflate=True)
    doc.close()
    path.write_bytes(data[: data.index(b"stream") + 7])
    return path


def garbled_xref_pdf(path: Path, source: Path) -> Path:
    """``source`` with the digits of its cross-reference table scrambled: MuPDF repairs it on
    opening and complains, but every page can still be read."""
    data = bytearray(source.read_bytes())
    start = data.rfind(b"xref")
    for i in range(start + 5, min(len(data), start + 400)):
        if chr(data[i]).isdigit():
            data[i] = ord("7")
    path.write_bytes(bytes(data))
    return path


def clause_first_lines_pdf(path: Path, pages: int = 6, footer: str = "PAGE {n} OF {total}") -> Path:
    """Every page opens with a numbered clause whose first line, numbers aside, is the same on
    every page: content that repeats, not a running header. Has a real footer too."""
    b = PdfBuilder(footer=footer)
    b.y = 50  # the first line sits inside the top band of the page
    for n in range(1, pages + 1):
        if n > 1:
            b.new_page()
            b.y = 50
        b.paragraph(
            f"Clause {n}. The insurer pays claims within {n} days. Each claim is assessed by a loss adjuster "
            f"who visits within {n + 2} days of notice and reports in writing. The adjuster's report sets out the "
            "damage found, its cause and the cost of repair, and you receive a copy of it."
        )
    return b.save(path)


HOSTILE_TEXT = (
    "Garden ponds are covered for storm damage up to 500 dollars. "
    "![pixel]({tracker}/track.png) See the pond rules [click here](https://example.org/claim) "
    "<script>window.pwned=1</script> <img src={tracker}/img.png onerror=window.pwned=2> "
    "[run](javascript:alert(5)) and www.example.org and <https://example.org/auto> $5 $x^2$."
)


def hostile_markdown_pdf(path: Path, tracker: str = "http://127.0.0.1:8999") -> Path:
    """A one-page policy whose text carries Markdown images and links, HTML and a script;
    ``tracker`` is where its planted images point."""
    text = HOSTILE_TEXT.format(tracker=tracker)
    return simple_pdf(path, [text, "Ponds must be fenced to qualify for this cover."], heading="Section 1 Garden ponds")


def scan_of(src: Path, out: Path, pages: set[int] | None = None, dpi: int = 200, noise: float = 0.0) -> Path:
    """``src`` with the chosen pages (1-based; all when None) replaced by a picture of themselves:
    image-only pages whose true text is known, as a scanner would return them (``noise``: the
    standard deviation of grey-level noise added, seeded)."""
    import numpy as np

    rng = np.random.default_rng(0)
    with pymupdf.open(src) as doc, pymupdf.open() as scan:
        for index, page in enumerate(doc):
            if pages is not None and index + 1 not in pages:
                scan.insert_pdf(doc, from_page=index, to_page=index)
                continue
            pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
            if noise:
                grey = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width).astype(np.float32)
                noisy = np.clip(grey + rng.normal(0.0, noise, grey.shape), 0, 255).astype(np.uint8)
                pix = pymupdf.Pixmap(pymupdf.csGRAY, pix.width, pix.height, noisy.tobytes(), 0)
            target = scan.new_page(width=page.rect.width, height=page.rect.height)
            target.insert_image(target.rect, pixmap=pix)
        scan.save(out)
    return out


def health_policy_pdf(path: Path) -> Path:
    """A health wording as Indian insurers set one: bold section headings, clauses numbered "2.5"
    and exclusions numbered "7)" with their codes, run into their text in body type; "Rs." amounts;
    a footer that names the policy before its page number."""
    b = PdfBuilder(footer="Arogya Shield Health Policy - UIN ASH-2026 - Page {n} of {total}")
    b.heading("Arogya Shield Health Insurance Policy", size=15)
    b.heading("Section 2. Benefits")
    b.paragraph(
        "2.4 Day Care Procedures. The Company shall pay for day care treatment listed in Annexure I, such as "
        "cataract surgery and dialysis, even though the insured is not hospitalised for 24 hours."
    )
    b.paragraph(
        "2.5 Road Ambulance. The Company shall reimburse the cost of a road ambulance used to take the insured "
        "to hospital in an emergency, up to Rs. 2,000 per hospitalisation."
    )
    b.heading("Section 3. Waiting Periods and Exclusions")
    b.paragraph("The Company shall not be liable to make any payment under this Policy for any claim caused by:")
    b.paragraph(
        "1) Pre-Existing Diseases (Code-Excl01): a. Expenses related to the treatment of a pre-existing disease "
        "shall be excluded until the expiry of 36 months of continuous coverage."
    )
    b.paragraph(
        "2) 30-day waiting period (Code-Excl03): a. Expenses related to the treatment of any illness within 30 "
        "days from the first policy commencement date shall be excluded except claims arising due to an accident."
    )
    b.paragraph(
        "3) Maternity (Code-Excl18): a. Medical treatment expenses traceable to childbirth (including complicated "
        "deliveries and caesarean sections incurred during hospitalisation) except ectopic pregnancy; b. Expenses "
        "towards miscarriage (unless due to an accident) and lawful medical termination of pregnancy."
    )
    b.paragraph(
        "4) Cosmetic or Plastic Surgery (Code-Excl08): Expenses for cosmetic or plastic surgery unless for "
        "reconstruction following an accident, burn or cancer."
    )
    b.heading("Section 4. Claims Procedure")
    b.paragraph(
        "4.1 Notification of Claim. In case of emergency hospitalisation, the Company shall be intimated within "
        "24 hours of admission. 4.2 Cashless Claims. Cashless treatment is available only at network hospitals."
    )
    return b.save(path)


def tabbed_contract_pdf(path: Path) -> Path:
    """A supply agreement set with tab stops: each article's number at the margin and its title in
    capitals at the next stop, on the same baseline, in body type (PyMuPDF reads them as two lines);
    clauses numbered "12.1" the same way."""
    b = PdfBuilder()
    b.heading("SUPPLY AGREEMENT", size=14)
    articles = [
        ("1.", "DEFINITIONS", [("1.1", "Products means the devices listed in Schedule 1.")]),
        ("2.", "DELIVERY AND FORECAST", [("2.1", "The Supplier delivers the Products within 30 days of each order.")]),
        ("3.", "PRICE AND PAYMENT", [("3.1", "The Customer pays each invoice within 60 days of receiving it.")]),
        (
            "4.",
            "TERM AND TERMINATION",
            [
                ("4.1", "This Agreement comes into force on the Effective Date and remains in force for five years."),
                ("4.2", "The Customer may terminate this Agreement without cause on six months' written notice."),
            ],
        ),
    ]
    for number, title, clauses in articles:
        b.y += 8
        b.page.insert_text((LEFT, b.y), number, fontname="helv", fontsize=BODY_SIZE)
        b.page.insert_text((LEFT + 40, b.y), title, fontname="helv", fontsize=BODY_SIZE)
        b.y += LINE_GAP
        for clause, text in clauses:
            b.page.insert_text((LEFT, b.y), clause, fontname="helv", fontsize=BODY_SIZE)
            b.page.insert_text((LEFT + 40, b.y), text, fontname="helv", fontsize=BODY_SIZE)
            b.y += LINE_GAP
    return b.save(path)


def travel_policy_pdf(path: Path) -> Path:
    """A UK travel wording: numbered sections with "What is covered" / "What is not covered" under
    them in a smaller bold type, a summary table, the excess listed first among what is not covered,
    general conditions, and a footer that names the policy before its page number."""
    b = PdfBuilder(footer="Wanderwise Travel Insurance Policy Wording 2026 | Page {n}")
    b.heading("Wanderwise Single Trip and Annual Multi-Trip Travel Insurance", size=15)
    b.paragraph(
        "This policy wording, together with your policy schedule, is your contract with Wanderwise Insurance "
        "Limited. Please read it carefully and keep it with you when you travel."
    )
    b.heading("Summary of cover")
    b.table(
        [
            ["Section", "Cover", "Maximum we will pay"],
            ["1", "Cancellation", "£3,000"],
            ["2", "Emergency medical expenses", "£10,000,000"],
            ["5", "Personal belongings and baggage", "£1,500"],
            ["6", "Personal money", "£300"],
        ]
    )
    b.heading("Definitions")
    b.paragraph("Wherever the following words appear in bold in this policy they have the meanings given below.")
    b.paragraph("Home: Your usual place of residence in the United Kingdom.")
    b.paragraph(
        "Trip: A journey that starts and ends at your home during the period of insurance, outside the United"
        " Kingdom or within it with at least two nights of pre-booked accommodation."
    )
    b.paragraph(
        "Unattended: When you are not in full view of and in a position to prevent the unauthorised taking of"
        " your property."
    )
    b.paragraph("Valuables: Jewellery, watches, mobile phones, tablets, cameras and other photographic equipment.")
    b.heading("Section 1 - Cancellation")
    b.heading("What is covered", level=2, size=10.5)
    b.paragraph(
        "We will pay you up to £3,000 for your proportion of travel and accommodation costs which you have "
        "paid or are contracted to pay and cannot recover, if you have to cancel your trip because of one of "
        "the following: 1. the death, injury or illness of you, a relative or a travelling companion; 2. you "
        "being called for jury service; 3. your home being made uninhabitable by fire, storm or flood in the "
        "7 days before you leave."
    )
    b.heading("What is not covered", level=2, size=10.5)
    b.paragraph(
        "1. Any claim arising from a pre-existing medical condition, unless we have agreed to cover it in "
        "writing. 2. Cancellation because you do not want to travel. 3. Any costs you could have recovered "
        "from your tour operator, airline or credit card provider."
    )
    b.heading("Section 2 - Emergency medical expenses")
    b.heading("What is covered", level=2, size=10.5)
    b.paragraph(
        "We will pay up to £10,000,000 for necessary and reasonable costs incurred outside the United Kingdom"
        " as a result of you becoming ill or being injured during your trip, including hospital, ambulance "
        "and repatriation costs. You must contact our 24-hour emergency assistance service on +44 20 7946 "
        "0000 before you are admitted to hospital as an in-patient, or as soon as possible afterwards."
    )
    b.heading("What is not covered", level=2, size=10.5)
    b.paragraph(
        "1. The first £100 of each claim (the excess). 2. Treatment that can wait until you return home. 3. "
        "Any claim arising from you drinking alcohol to such an extent that your judgement is seriously "
        "impaired. 4. Any claim arising from you taking part in winter sports unless you have paid the "
        "additional premium shown in your schedule."
    )
    b.heading("Section 5 - Personal belongings and baggage")
    b.heading("What is covered", level=2, size=10.5)
    b.paragraph(
        "We will pay up to £1,500 in total for the value or repair of any of your own personal belongings "
        "which are lost, stolen or damaged during your trip. The most we will pay for any one item, pair or "
        "set is £300, and the most we will pay for all valuables in total is £400."
    )
    b.heading("What is not covered", level=2, size=10.5)
    b.paragraph("1. The first £100 of each claim (the excess).")
    b.paragraph(
        "2. Loss or theft of belongings left unattended in a public place, or on a beach, unless they were "
        "locked in a safe or safety deposit box."
    )
    b.paragraph(
        "3. Loss or theft not reported to the local police within 24 hours of discovery, where a written "
        "police report has not been obtained."
    )
    b.paragraph(
        "4. Loss of or damage to belongings in the custody of an airline, unless reported to the airline "
        "before you leave the airport and a property irregularity report is obtained."
    )
    b.paragraph("5. Wear and tear, depreciation, or damage caused by moths or vermin.")
    b.heading("Section 6 - Personal money")
    b.paragraph(
        "We will pay up to £300 if your cash is lost or stolen while you are carrying it or it is locked in a"
        " safe. The most we will pay for cash is £200 if you are under 18."
    )
    b.heading("General conditions")
    b.paragraph(
        "1. Changing country of residence. This policy only covers people whose home is in the United "
        "Kingdom. If you move your home to another country you must tell us, and cover will end on the date "
        "you move."
    )
    b.paragraph(
        "2. Reasonable care. You must take all reasonable care to protect yourself and your property and to "
        "avoid injury or loss."
    )
    b.paragraph(
        "3. Claims. You must tell us about any claim as soon as possible, and in any event within 31 days of "
        "your return home. You must give us all the receipts, police reports and medical certificates we ask "
        "for at your own expense."
    )
    b.paragraph(
        "4. Fraud. If any claim is fraudulent in any way, we will not pay the claim and all cover under this "
        "policy will be forfeited."
    )
    b.heading("General exclusions")
    b.paragraph(
        "We will not pay for any claim arising directly or indirectly from: 1. war, invasion or civil war; 2."
        " you travelling to a country where the Foreign, Commonwealth and Development Office has advised "
        "against all travel; 3. you taking part in manual work, unless we have agreed to cover it."
    )
    b.heading("Complaints")
    b.paragraph(
        "If you are unhappy with our service, please write to Customer Relations, Wanderwise Insurance "
        "Limited, PO Box 123, Leeds LS1 4AP. If you are still not satisfied, you may be able to refer your "
        "complaint to the Financial Ombudsman Service within six months of our final response."
    )
    return b.save(path)


def motor_policy_pdf(path: Path) -> Path:
    """A UK private car wording: sections designated by a letter ("Section A: Loss of or damage to your
    car"), clauses numbered by their section's letter ("A1.", "C3."), a "Term: definition" glossary,
    titled general conditions ("3. Making a claim. …"), and a footer the same on both pages."""
    b = PdfBuilder(footer="Roadsure Private Car Policy Booklet RS-PC-0426")
    b.heading("Roadsure Private Car Insurance - Policy Booklet", size=15)
    b.paragraph(
        "Your policy is made up of this booklet, your schedule and your certificate of motor insurance. "
        "Together they form the contract between you and Roadsure Insurance plc."
    )
    b.heading("Meaning of words")
    b.paragraph(
        "Car: The vehicle shown in your schedule, including its standard accessories and spare parts "
        "while fitted to it."
    )
    b.paragraph(
        "Excess: The amount you must pay towards any claim. Compulsory and voluntary excesses are shown "
        "in your schedule."
    )
    b.paragraph(
        "Market value: The cost of replacing your car with one of the same make, model, age, mileage and "
        "condition immediately before the loss."
    )
    b.paragraph("Named driver: A person shown on your certificate of motor insurance as entitled to drive your car.")
    b.heading("Section A: Loss of or damage to your car")
    b.paragraph(
        "A1. We will cover loss of or damage to your car and its accessories caused by accident, fire, "
        "theft or attempted theft, or vandalism."
    )
    b.paragraph(
        "A2. We will pay the cost of repairing your car or, if it is beyond economic repair, its market "
        "value at the time of the loss."
    )
    b.paragraph(
        "A3. If your car is less than 12 months old and you are its first registered keeper, we will "
        "replace it with a new car of the same make and model if the cost of repair is more than 50% of "
        "its list price."
    )
    b.paragraph("A4. We will not pay for:")
    b.paragraph("(a) the excess shown in your schedule;")
    b.paragraph("(b) wear and tear, or mechanical, electrical or computer failure or breakdown;")
    b.paragraph("(c) damage to tyres caused by braking, punctures, cuts or bursts;")
    b.paragraph(
        "(d) loss or damage caused by theft if the keys were left in or on the car, or the car was left unlocked;"
    )
    b.paragraph("(e) putting the wrong fuel in your car;")
    b.paragraph("(f) loss of value after the car has been repaired.")
    b.heading("Section B: Windscreen and windows")
    b.paragraph(
        "We will pay for the repair or replacement of broken glass in the windscreen, windows and "
        "sunroof of your car. If the glass is repaired rather than replaced, you will not have to pay an "
        "excess. A windscreen replacement excess of £95 applies. A claim only under this section will "
        "not affect your no claim discount."
    )
    b.heading("Section C: Liability to others")
    b.paragraph(
        "C1. We will cover you for your legal liability for the death of or injury to any person, and "
        "for damage to their property, caused by an accident arising from the use of your car on a road "
        "or other public place."
    )
    b.paragraph("C2. The most we will pay for damage to property is £20,000,000 for any one claim.")
    b.paragraph(
        "C3. Driving other cars. If your certificate of motor insurance says so, you may drive another "
        "private car not owned by or hired to you, with the owner's permission. This gives third party "
        "cover only and does not cover damage to the car you are driving."
    )
    b.heading("Section D: No claim discount")
    b.paragraph(
        "If no claim is made during a period of insurance, your no claim discount will increase at "
        "renewal. If a claim is made, your discount will be reduced as shown in the table below, unless "
        "we recover all our costs from someone else."
    )
    b.table(
        [
            ["Years of discount now", "After one claim", "After two claims"],
            ["1", "0", "0"],
            ["3", "1", "0"],
            ["5 or more", "3", "1"],
        ]
    )
    b.heading("General exceptions")
    b.paragraph("We will not pay any claim arising while your car is:")
    b.paragraph(
        "1. being driven by anyone not described in your certificate of motor insurance, or by someone "
        "who does not hold a valid licence;"
    )
    b.paragraph(
        "2. being used for any purpose not allowed by your certificate, such as hire or reward, food "
        "delivery or racing;"
    )
    b.paragraph("3. being driven by anyone under the influence of alcohol or drugs above the legal limit.")
    b.heading("General conditions")
    b.paragraph(
        "1. Looking after your car. You must keep your car roadworthy and in a good state of repair, "
        "with a valid MOT certificate where one is needed."
    )
    b.paragraph(
        "2. Telling us about changes. You must tell us straight away about any change of address, any "
        "modification to your car, a new driver, or any motoring conviction."
    )
    b.paragraph(
        "3. Making a claim. You must tell us about any accident, loss or damage within 48 hours, even if "
        "you do not intend to make a claim. Call our claims line on 0345 600 7000."
    )
    b.paragraph(
        "4. Cancelling your policy. You may cancel within 14 days of receiving your documents and we "
        "will refund your premium in full, less a charge for the time you were covered. After that, we "
        "will charge a cancellation fee of £40."
    )
    b.heading("Complaints")
    b.paragraph(
        "If you want to complain, call 0345 600 7001 or write to Roadsure Customer Relations. If you are "
        "not happy with our final response, you can ask the Financial Ombudsman Service to review your "
        "complaint within six months."
    )
    return b.save(path)


def tenancy_pdf(path: Path) -> Path:
    """An assured shorthold tenancy agreement: numbered clauses ("5.2 …"), the tenant's obligations as a
    lettered list under "The Tenant agrees:", a deposit clause whose items are inline, an inventory
    table, and a footer that names the agreement before "page 1 of 2"."""
    b = PdfBuilder(footer="Assured Shorthold Tenancy Agreement - 14 Elm Road - page {n} of {total}")
    b.heading("ASSURED SHORTHOLD TENANCY AGREEMENT", size=14)
    b.paragraph(
        "This Agreement is made on 1 March 2026 between Mr Peter Hale (the Landlord) and Ms Amina Yusuf "
        "(the Tenant) for the letting of 14 Elm Road, Leeds LS6 2QT (the Property)."
    )
    b.heading("1. Definitions and interpretation")
    b.paragraph(
        '1.1 "Rent" means the sum of £875 per calendar month payable in advance on the first day of each month.'
    )
    b.paragraph('1.2 "Deposit" means the sum of £1,000 paid by the Tenant to be held in accordance with clause 5.')
    b.paragraph('1.3 "Term" means a fixed period of 12 months beginning on 1 March 2026.')
    b.heading("2. Rent")
    b.paragraph("2.1 The Tenant shall pay the Rent by standing order to the Landlord's bank account.")
    b.paragraph(
        "2.2 If any Rent is more than 14 days late, the Landlord may charge interest at 3% above the "
        "Bank of England base rate from the date it was due."
    )
    b.paragraph(
        "2.3 The Landlord may increase the Rent no more than once in any 12-month period, and only after "
        "the end of the Term, by giving the Tenant at least one month's written notice."
    )
    b.heading("3. Tenant's obligations")
    b.paragraph("The Tenant agrees:")
    b.paragraph(
        "(a) to keep the interior of the Property clean and in good decorative order, fair wear and tear excepted;"
    )
    b.paragraph(
        "(b) not to keep any animal at the Property without the Landlord's written consent, which will "
        "not be unreasonably withheld;"
    )
    b.paragraph("(c) not to sublet or part with possession of the whole or any part of the Property;")
    b.paragraph("(d) to report to the Landlord promptly any damage to the Property or any repair that is needed;")
    b.paragraph("(e) not to smoke inside the Property;")
    b.paragraph(
        "(f) to allow the Landlord access at reasonable times, on at least 24 hours' written notice, to "
        "inspect the Property or carry out repairs, except in an emergency."
    )
    b.heading("4. Landlord's obligations")
    b.paragraph(
        "4.1 The Landlord shall keep in repair the structure and exterior of the Property, and keep in "
        "repair and proper working order the installations for the supply of water, gas, electricity, "
        "sanitation and heating, including the boiler."
    )
    b.paragraph(
        "4.2 The Landlord shall arrange an annual gas safety check by a Gas Safe registered engineer and "
        "give the Tenant a copy of the certificate."
    )
    b.heading("5. Deposit")
    b.paragraph(
        "5.1 The Deposit will be protected in a government-approved tenancy deposit scheme within 30 days of receipt."
    )
    b.paragraph(
        "5.2 At the end of the tenancy the Landlord may deduct from the Deposit the reasonable cost of: "
        "(a) any unpaid Rent; (b) making good any damage beyond fair wear and tear; (c) cleaning, where "
        "the Property is not left in the condition it was in at the start of the tenancy."
    )
    b.paragraph(
        "5.3 The Landlord will return the Deposit, less any agreed deductions, within 10 days of "
        "agreeing the amount with the Tenant. Any dispute may be referred to the scheme's free dispute "
        "resolution service."
    )
    b.heading("6. Ending the tenancy")
    b.paragraph(
        "6.1 The Tenant may end the tenancy at the end of the Term by giving at least one month's written notice."
    )
    b.paragraph(
        "6.2 Break clause. Either party may end the tenancy after the first 6 months by giving the other "
        "at least 2 months' written notice."
    )
    b.paragraph("6.3 The Landlord may only seek possession in accordance with the Housing Act 1988.")
    b.heading("Schedule 1 - Inventory")
    b.table(
        [
            ["Room", "Item", "Condition"],
            ["Living room", "Grey sofa", "Good, small stain on left arm"],
            ["Kitchen", "Fridge freezer", "Working, new 2025"],
            ["Bedroom", "Double bed and mattress", "Good"],
        ]
    )
    return b.save(path)
