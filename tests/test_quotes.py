"""Quotes a citizen can read: a whole sentence or list item with its lead-in, never a fragment
that ends in a bare "a." or ":"; and the labels an answer puts on them."""

from __future__ import annotations

import pytest

from policybot.core.quotes import (
    choose_quote,
    clause_starts,
    in_opening_list,
    list_lead_in,
    opening_item,
    other_quote,
    quote_units,
)
from policybot.core.roles import plain_label

ESCAPE_OF_WATER = (
    "2.5 Escape of water\n"
    "We will cover loss or damage caused by Escape of Water, and by water freezing in a fixed water or\n"
    "heating installation.\n"
    "What is not covered\n"
    "(a) The cost of repairing or replacing the appliance, pipe, tank or fitting from which the water escaped,\n"
    "unless the damage was caused by frost.\n"
    "(b) Damage caused by the failure or wearing away of grouting, sealant or silicone around baths, showers,\n"
    "sinks or tiles.\n"
    "(c) Damage caused by water escaping gradually over a period of time, such as a slow drip from a pipe\n"
    "joint, which an Insured Person could reasonably have noticed and dealt with.\n"
    "(d) Loss or damage while the Home is Unoccupied (see clause 6.3)."
)
FLOOD = (
    "A. Flood, as used in this flood insurance policy, means:\n"
    "1.\n"
    "A general and temporary condition of partial or complete inundation of two or more acres of normally dry "
    "land area or of two or more properties (one of which is your property) from:\n"
    "a.\n"
    "Overflow of inland or tidal waters;"
)


def words_score(*wanted: str):
    return lambda unit: sum(w in unit.lower() for w in wanted)


def test_a_list_item_is_quoted_with_its_lead_in():
    quote = choose_quote(ESCAPE_OF_WATER, words_score("gradually", "slow"))
    assert quote.text(ESCAPE_OF_WATER) == (
        "What is not covered … (c) Damage caused by water escaping gradually over a period of time, such as a slow "
        "drip from a pipe joint, which an Insured Person could reasonably have noticed and dealt with."
    )
    assert ESCAPE_OF_WATER[quote.start : quote.end].startswith("(c) Damage")  # what is highlighted: the item
    first = choose_quote(ESCAPE_OF_WATER, words_score("repairing", "appliance"))
    assert ESCAPE_OF_WATER[first.start : first.end].startswith("What is not covered\n(a) The cost")  # next to it


def test_no_quote_ends_in_a_bare_marker_or_a_colon():
    for wanted in (("flood", "means"), ("general", "temporary"), ("overflow",), ("inundation",)):
        shown = choose_quote(FLOOD, words_score(*wanted)).text(FLOOD)
        assert not shown.endswith((":", " a.", " 1.")), shown
    assert all(FLOOD[s:e].strip() not in ("1.", "a.") for s, e in quote_units(FLOOD))
    lead = choose_quote(FLOOD, words_score("flood", "means")).text(FLOOD)
    assert lead.startswith("A. Flood, as used in this flood insurance policy, means: 1. A general and temporary")


LIMITS_TABLE = (
    "3.13 Limits for Valuables, Money and single items\n"
    "We will not pay more than these limits for any one incident:\n"
    "|Type of property|Limit for any one incident|\n"
    "|---|---|\n"
    "|Any single item of Valuables|$2,500|\n"
    "|All Valuables in total|$15,000|\n"
    "|Money|$750|\n"
    "A pair or set counts as one item."
)


def test_a_table_row_is_quoted_alone_under_its_header_as_text():
    units = [LIMITS_TABLE[s:e] for s, e in quote_units(LIMITS_TABLE)]
    assert "|Money|$750|" in units and "|---|---|" not in " ".join(units)  # a row is a unit; the separator none
    quote = choose_quote(LIMITS_TABLE, words_score("money", "$750"))
    assert LIMITS_TABLE[quote.start : quote.end] == "|Money|$750|"  # what is highlighted: the row
    assert quote.text(LIMITS_TABLE) == "Type of property · Limit for any one incident … Money · $750"
    header = choose_quote(LIMITS_TABLE, words_score("type of property")).text(LIMITS_TABLE)
    assert header == "Type of property · Limit for any one incident; Any single item of Valuables · $2,500"
    after = choose_quote(LIMITS_TABLE, words_score("pair")).text(LIMITS_TABLE)
    assert after == "A pair or set counts as one item."  # prose after a table is quoted as before
    assert "|" not in choose_quote(LIMITS_TABLE, words_score("valuables", "total")).text(LIMITS_TABLE)


def test_a_long_unit_is_cut_at_a_clause_break_and_says_so():
    text = "We will pay " + ", ".join(f"item {i} of the schedule" for i in range(60)) + "."
    quote = choose_quote(text, words_score("pay"), max_chars=300)
    shown = quote.text(text)
    assert quote.cut and shown.endswith("…") and len(shown) <= 302
    assert text[quote.start : quote.end].endswith("schedule")  # cut at a comma, never mid-word


@pytest.mark.parametrize(
    ("section", "quote", "label"),
    [
        (
            "Section 2 Buildings Cover > 2.5 Escape of water",
            "What is not covered … (c) Damage caused by water",
            "Not covered",
        ),
        ("Section 5 Deductibles > 5.2 Escape of water deductible", "A higher Deductible of $750 applies", "Limit"),
        (
            "Section 1 Definitions > 1.18 Unoccupied",
            "The Home has not been lived in for more than 60 days.",
            "Definition",
        ),
        ("Section 6 Conditions > 6.2 Waiting period", "The cover starts 14 days after you buy it.", "Condition"),
        ("Section 3 Contents Cover > 3.2 Insured events", "We will cover loss or damage to your Contents", "Covered"),
        ("", "You could get a one-off payment.", "Covered"),  # no title: labelled by what the quote grants
        ("", "The payment is made to you or your family.", None),  # nor granted nor conditional: no label
    ],
)
def test_quotes_are_labelled_by_what_they_do(section, quote, label):
    assert plain_label(section, quote) == label


def test_a_short_sentence_never_brings_the_heading_of_the_next_list():
    text = "2.2 Fire\nWe will cover loss or damage caused by fire.\nWhat is not covered\n(a) Damage by smoke."
    shown = choose_quote(text, words_score("fire")).text(text)
    assert shown == "2.2 Fire We will cover loss or damage caused by fire."


def test_a_numbered_title_belongs_to_the_text_it_heads():
    """A definitions list's run-in titles ("8. Condominium.") are never a quote on their own."""
    text = (
        "8. Condominium. That form of ownership of one or more buildings in which each unit owner has an "
        "undivided interest in common elements.\n11. Declarations Page. A computer-generated summary of "
        "information you provided in the application for insurance."
    )
    units = [text[s:e] for s, e in quote_units(text)]
    assert units[0].startswith("8. Condominium. That form of ownership")
    assert units[1].startswith("11. Declarations Page. A computer-generated summary")
    quote = choose_quote(text, lambda unit: 1.0 if "Declarations Page" in unit else 0.0)
    assert quote.text(text).startswith("11. Declarations Page. A computer-generated summary")


def test_a_new_lead_in_after_an_unpunctuated_item_starts_its_own_unit():
    """gov.uk list items carry no closing punctuation, so the next list's lead-in ran on inside the
    last item; a wrapped sentence whose next line starts with a capital is not cut."""
    guide = (
        "You could be eligible if your partner either:\n"
        "•  died because of an accident at work\n"
        "When they died you must have been:\n"
        "•  under State Pension age"
    )
    units = [guide[s:e] for s, e in quote_units(guide)]
    assert units == [
        "You could be eligible if your partner either:",
        "•  died because of an accident at work",
        "When they died you must have been:",
        "•  under State Pension age",
    ]
    wrapped = "Royalty Payment for units that incorporate Dynamic Hearing\nTechnology shall be paid as set out below:"
    assert [wrapped[s:e] for s, e in quote_units(wrapped)] == [wrapped]


def test_an_item_of_an_outer_list_leads_in_the_items_under_it():
    """FEMA's "8. Special Limits. We will pay no more than $2,500 … of the following kinds of personal
    property:" introduces "a. Artwork…": the amount the question asks for is in the lead-in, so the
    item is quoted with it; a bare "and"/"or" between items is passed over."""
    form = (
        "8. Special Limits. We will pay no more than $2,500 for any one loss to one or more of the "
        "following kinds of personal property:\n"
        "a. Artwork, photographs, collectibles, or memorabilia;\n"
        "b. Rare books or autographed items;\n"
        "or\n"
        "c. Furs or any article containing fur.\n"
        "9. We will pay only for the functional value of antiques."
    )
    shown = choose_quote(form, words_score("furs")).text(form)
    assert shown.startswith("8. Special Limits. We will pay no more than $2,500") and shown.endswith("containing fur.")
    sibling = "a. First item;\nb. Second item:\n(i) detail one;\n(ii) detail two."
    assert choose_quote(sibling, words_score("two")).text(sibling).startswith("b. Second item:")


def test_a_second_quote_of_a_passage_never_overlaps_the_first():
    from policybot.core.quotes import other_quote

    score = words_score("water", "escaping", "slow", "drip")
    first = choose_quote(ESCAPE_OF_WATER, score)
    second, best = other_quote(ESCAPE_OF_WATER, score, first)
    assert best == 1  # "Escape of Water, and by water freezing": one of the wanted words
    assert second.end <= first.start or second.start >= first.end
    assert "We will cover loss or damage caused by Escape" in ESCAPE_OF_WATER[second.start : second.end]
    # A passage that is one sentence has no other quote.
    one = "We will cover food in a freezer."
    assert other_quote(one, words_score("food"), choose_quote(one, words_score("food"))) is None


def test_a_run_in_heading_belongs_to_the_text_after_it_on_its_line():
    """A contract's "(h) Governing Law. This Agreement…" is one unit; a short item that ends its
    line ("(j) Counterparts.") stays an item of its own."""
    text = (
        "(g) Fees. The prevailing Party shall be entitled to reasonable fees.\n"
        "(h)\xa0Governing\xa0Law.\xa0This Agreement shall be construed in accordance\n"
        "with the laws of the State of New York.\n"
        "(j) Counterparts.\n"
        "(k) Notices."
    )
    units = [" ".join(text[s:e].split()) for s, e in quote_units(text)]
    assert (
        "(h) Governing Law. This Agreement shall be construed in accordance with the laws of the State of New York."
        in units
    )
    assert "(j) Counterparts." in units and "(k) Notices." in units
    shown = choose_quote(text, words_score("governed", "law")).text(text)
    assert shown.startswith("(h) Governing Law. This Agreement") and shown.endswith("State of New York.")


UNOCCUPANCY_START = (
    "6.3 Unoccupancy\n"
    "You must tell us if the Home is going to be Unoccupied. When the Home is Unoccupied, we will not cover\n"
    "loss or damage caused by:\n"
    "(a) Escape of Water, or water freezing in a fixed water or heating installation;\n"
    "(b) escape of oil;\n"
    "(c) theft or attempted theft;"
)
UNOCCUPANCY_REST = (
    "(c) theft or attempted theft;\n"
    "(d) riot, civil commotion, strikes, labour disturbances or malicious people;\n"
    "(f) Accidental Damage under clauses 2.18 and 3.14.\n"
    "The other insured events remain covered while the Home is Unoccupied, provided that someone inspects it."
)


def test_a_passage_opening_inside_a_list_takes_its_lead_in_from_the_passage_before():
    item = "(c) theft or attempted theft;"
    assert opening_item(UNOCCUPANCY_REST) == item
    assert opening_item(UNOCCUPANCY_START) is None
    assert list_lead_in(item, [UNOCCUPANCY_START]) == (
        "When the Home is Unoccupied, we will not cover loss or damage caused by:"
    )
    # The list began two passages back: the nearest passage holds only its items.
    assert list_lead_in(item, ["(a) Escape of Water;\n(b) escape of oil;", UNOCCUPANCY_START]) == (
        "When the Home is Unoccupied, we will not cover loss or damage caused by:"
    )


def test_passages_that_overlap_take_the_lead_in_from_before_the_item_they_share():
    """Passages overlap: the one before may end with the opening item itself and go on past it. The
    list is read back from that item, not from the end: a lead-in after the item introduces another
    list, and a sentence after the item does not end the list it belongs to."""
    before = (
        "You must do the following:\n"
        "(l) Keep records of all sales.\n"
        "(m) Permits and Approvals.\n"
        "The Supplier and its Affiliates:"
    )
    assert list_lead_in("(m) Permits and Approvals.", [before]) == "You must do the following:"
    guide = (
        "Depending on the donor's instructions you'll help manage things like their:\n"
        "•  money and bills\n"
        "•  pensions and benefits\n"
        "There may be other attorneys - if there are, check how the donor wants you to decide."
    )
    assert list_lead_in("•  pensions and benefits", [guide]) == (
        "Depending on the donor's instructions you'll help manage things like their:"
    )


def test_a_heading_that_says_what_the_list_is_leads_it_in_from_the_passage_before():
    """A travel wording's "What is not covered" over bullets, without a colon: an item of that list quoted
    from the next passage ("• breakage of fragile items, unless caused by fire…") is an exclusion, not the
    condition its "unless" alone would make it. A heading that names no role is still no lead-in."""
    before = (
        "If your baggage is delayed, we will pay up to £200 for essential items.\n"
        "What is not covered\n"
        "•  property left unattended in a public place;\n"
        "•  valuables carried in the hold of an aircraft;"
    )
    item = "•  breakage of fragile items, unless caused by fire;"
    assert list_lead_in(item, [before]) == "What is not covered"
    assert list_lead_in(item, [before.replace("What is not covered", "General Exclusions")]) == "General Exclusions"
    assert list_lead_in(item, [before.replace("What is not covered", "Liability")]) is None
    assert list_lead_in(item, [before.replace("What is not covered", "What is not covered by this policy.")]) is None


def test_no_lead_in_when_the_passage_before_ends_in_other_text_or_another_kind_of_list():
    assert list_lead_in("(c) theft;", ["We will pay for repairs. The most we will pay is $500."]) is None
    assert list_lead_in("(c) theft;", ["Cover applies to:\n1. the house;\n2. the garage."]) is None
    assert list_lead_in("(c) theft;", []) is None


def test_only_items_of_the_opening_list_belong_to_it():
    start = UNOCCUPANCY_REST.index("(f)")
    after = UNOCCUPANCY_REST.index("The other insured")
    assert in_opening_list(UNOCCUPANCY_REST, 0, start)
    assert not in_opening_list(UNOCCUPANCY_REST, 0, after)
    assert not in_opening_list(UNOCCUPANCY_START, 0, UNOCCUPANCY_START.index("(b)"))


def test_a_full_stop_after_an_abbreviation_ends_no_quote_unit_before_lowercase_text():
    """ "12:01 a.m. on the last day of the policy term." is one sentence: never quoted as "on the last
    day of the policy term."; a list item after an abbreviation still starts its own unit."""
    text = (
        "1.  This policy will expire at 12:01 a.m. on the last day \nof the policy term.\n"
        "2.  We must receive the payment of the appropriate \nrenewal premium within 30 days of the \nexpiration date."
    )
    units = [" ".join(text[s:e].split()) for s, e in quote_units(text)]
    assert units == [
        "1. This policy will expire at 12:01 a.m. on the last day of the policy term.",
        "2. We must receive the payment of the appropriate renewal premium within 30 days of the expiration date.",
    ]
    listed = "We pay the least of the following amounts, e.g.\na. the cost to repair;\nb. the limit."
    assert [listed[s:e] for s, e in quote_units(listed)][1:] == ["a. the cost to repair;", "b. the limit."]
    ends = "It ends at 9 a.m. The next day it starts again."
    assert [ends[s:e] for s, e in quote_units(ends)] == ["It ends at 9 a.m.", "The next day it starts again."]


def test_an_amount_or_a_number_after_an_abbreviation_stays_in_its_sentence():
    """An Indian wording's "up to Rs. 2,000 per hospitalisation" was quoted as "…up to Rs." and the
    answer said no amount was stated; "under Sec. 4" and "No. 12" read on the same way."""
    text = "We reimburse a road ambulance up to Rs. 2,000 per hospitalisation. Claims under Sec. 4 are paid in full."
    assert [text[s:e] for s, e in quote_units(text)] == [
        "We reimburse a road ambulance up to Rs. 2,000 per hospitalisation.",
        "Claims under Sec. 4 are paid in full.",
    ]
    numbered = "Endorsement No. 12 applies to the cover. The cover starts at once."
    assert [numbered[s:e] for s, e in quote_units(numbered)] == [
        "Endorsement No. 12 applies to the cover.",
        "The cover starts at once.",
    ]


PAYING = (
    "6.12 Paying your premium\n"
    "You must pay your premium in full when it is due, or pay each instalment on time if you pay monthly. If you\n"
    "miss an instalment we will write to you and give you at least 7 days to pay. If you still do not pay, we may\n"
    "cancel your policy as explained in clause 9.5. This policy is governed by the law of the place you live."
)


def test_a_sentence_that_reads_on_from_the_one_before_brings_it():
    shown = choose_quote(PAYING, words_score("cancel", "still"), begin=PAYING.index("You")).text(PAYING)
    assert shown == (
        "If you miss an instalment we will write to you and give you at least 7 days to pay. If you still do not "
        "pay, we may cancel your policy as explained in clause 9.5."
    )
    # "This policy" names the document, not the sentence before: the sentence stands alone.
    alone = choose_quote(PAYING, words_score("governed", "law"), begin=PAYING.index("You")).text(PAYING)
    assert alone == "This policy is governed by the law of the place you live."
    # A list item never brings the sentence before it, nor a sentence the heading.
    item = choose_quote(ESCAPE_OF_WATER, words_score("gradually", "slow")).text(ESCAPE_OF_WATER)
    assert item.startswith("What is not covered … (c) Damage")


APPRAISAL = (
    "M. Appraisal\n"
    "If you and we fail to agree on the actual cash value of your damaged property to settle upon the amount of "
    "loss, then either may demand an appraisal of the loss. In this event, you and we will each choose a competent "
    "and impartial appraiser within 20 days after receiving a written request from the other. The two appraisers "
    "will choose an umpire."
)


def test_a_sentence_that_reads_on_from_the_chosen_one_comes_with_it():
    shown = choose_quote(APPRAISAL, words_score("agree", "appraisal", "value"), begin=APPRAISAL.index("If")).text(
        APPRAISAL
    )
    assert shown.endswith(
        "In this event, you and we will each choose a competent and impartial appraiser within "
        "20 days after receiving a written request from the other."
    )
    assert "umpire" not in shown  # the sentence after does not refer back: not brought


INHERIT = (
    "You don't usually pay tax on anything you inherit at the time you inherit it.\n"
    "Inheritance Tax\n\n"
    "You may have to pay Inheritance Tax on money and shares you inherit if the deceased's estate cannot\n"
    "or does not pay.\n"
    "What is not covered\n\n"
    "(a) Shares held in an ISA.\n"
    "(b) Money paid out of a pension."
)


def test_a_heading_standing_apart_is_never_run_into_a_quote_nor_quoted_alone():
    """A line the reader took for a heading stands between blank lines in a chunk's text: the quote
    is the sentence after it, not "Inheritance Tax You may have to pay…", and the heading alone is
    never the quote even where it matches the question best."""
    quote = choose_quote(INHERIT, words_score("inheritance", "tax", "money", "shares"))
    assert quote.text(INHERIT).startswith("You may have to pay Inheritance Tax on money")
    only_heading = choose_quote(INHERIT, lambda unit: 1.0 if unit == "Inheritance Tax" else 0.0)
    assert not INHERIT[only_heading.start : only_heading.end].startswith("Inheritance Tax")
    item = choose_quote(INHERIT, words_score("pension"))  # a heading still leads in its list
    assert item.text(INHERIT) == "What is not covered … (b) Money paid out of a pension."
    assert "Inheritance Tax" in [INHERIT[s:e] for s, e in quote_units(INHERIT)]  # a unit of its own


GUIDE_BULLETS = (
    "You do not need to be a citizen of the country to apply for the grant, but:\n"
    "•  you (or your partner, if you are a couple) must have a fixed and permanent home\n"
    "in the UK, Channel Islands or the Isle of Man\n"
    "•  you (and your partner, if you are a couple) must have lived here for at least\n"
    "1 year before you begin the application process\n"
    "Family Support Fund\n"
    "You may be able to get money from the Family Support Fund. It pays for therapy\n"
    "for children and families to help improve relationships, confidence and\n"
    "behaviour. Your caseworker can apply for you."
)


def test_an_unpunctuated_bullet_ends_where_its_line_ends_short():
    """A guide's bullets carry no full stop: the heading and the sentence after the last one are cut
    from it where its line ends with room left for their first word, and from each other; a bullet
    wrapped onto its next line ("…permanent home" / "in the UK, Channel Islands…") stays one."""
    units = [" ".join(GUIDE_BULLETS[s:e].split()) for s, e in quote_units(GUIDE_BULLETS)]
    assert units[1:5] == [
        "• you (or your partner, if you are a couple) must have a fixed and permanent home in the UK, "
        "Channel Islands or the Isle of Man",
        "• you (and your partner, if you are a couple) must have lived here for at least 1 year before you "
        "begin the application process",
        "Family Support Fund",
        "You may be able to get money from the Family Support Fund.",
    ]
    shown = choose_quote(GUIDE_BULLETS, words_score("family support fund", "money")).text(GUIDE_BULLETS)
    assert shown.startswith("You may be able to get money from the Family Support Fund. It pays for therapy")


def test_a_bullet_is_never_taken_for_a_heading_it_is_quoted_under_its_lead_in():
    """A short bullet without a full stop looks like a heading ("•  foreign companies with a UK branch"),
    but it brings no sentence after it into its quote: it is quoted under its list's lead-in."""
    text = (
        "Corporation Tax on gains from selling business assets is paid by all of the following:\n"
        "•  limited companies and most unincorporated associations, for example sports clubs\n"
        "•  foreign companies with a UK branch\n"
        "You pay Capital Gains Tax instead if you are a self-employed sole trader or a partner."
    )
    shown = choose_quote(text, words_score("foreign")).text(text)
    assert shown == (
        "Corporation Tax on gains from selling business assets is paid by all of the following: … "
        "• foreign companies with a UK branch"
    )


def test_a_line_that_wrapped_is_no_end_nor_a_marker_alone_on_its_line():
    """A line that ends where the next word would not have fitted wrapped, capital or not ("…shown for
    personal property on the" / "Declarations Page."), and a marker alone on its line keeps its item."""
    column = (
        "•  for not more than 10 percent of\n"
        "the limit of liability shown for\n"
        "personal property on the\n"
        "Declarations Page. Use of this\n"
        "insurance is at your option."
    )
    assert [" ".join(column[s:e].split()) for s, e in quote_units(column)][0].endswith("on the Declarations Page.")
    marker = "Schedules:\n•\nService Level Commitments\n•\nSupport Procedures and contacts for the whole term"
    assert [" ".join(marker[s:e].split()) for s, e in quote_units(marker)][1:] == [
        "• Service Level Commitments",
        "• Support Procedures and contacts for the whole term",
    ]


def test_a_quote_that_breaks_off_where_its_passage_ends_says_so():
    """A passage cut mid-sentence by the chunker ends in a word no sentence ends on: its quote is shown
    with "…", as a quote cut at the length limit is; a list item's "; or" and a full stop are ends."""
    broken = (
        "You may have had a combined vaccination.\n"
        "For example, you might have been vaccinated against DTP (diphtheria, tetanus and"
    )
    shown = choose_quote(broken, words_score("dtp")).text(broken)
    assert shown == "For example, you might have been vaccinated against DTP (diphtheria, tetanus and…"
    definition = "Baggage — luggage, clothing and personal belongings taken on your trip or bought during it, but"
    assert choose_quote(definition, words_score("baggage")).text(definition).endswith("during it, but…")
    for whole in ("(a) a judgment of the court; or", "We will pay for the repair of the roof.", "•  money and bills"):
        assert not choose_quote(whole, words_score("court", "roof", "money")).text(whole).endswith("…")


def test_a_short_quote_never_runs_into_the_next_numbered_clause():
    """An Indian wording runs its clause titles into their text: "4.3 Reimbursement Claims. The claim
    documents…". A short quote used to bring the next unit along and end on the next clause's title
    ("…at the hospital's insurance desk. 4.3 Reimbursement Claims."); a unit that opens with a
    number opens a new clause or item, and a short quote stops before it."""
    text = (
        "4.2 Cashless Claims. Cashless treatment is available only at network hospitals. The insured shall "
        "present the health card at the hospital's insurance desk.\n4.3 Reimbursement Claims. The claim "
        "documents shall be submitted within 30 days of discharge from the hospital."
    )
    quote = choose_quote(text, lambda unit: 1.0 if "health card" in unit else 0.0)
    assert quote.text(text) == "The insured shall present the health card at the hospital's insurance desk."


def test_an_article_heading_in_capitals_is_never_quoted_for_itself():
    """A contract's article heading has no blank line after it, but it is no answer: the quote is a
    sentence of the article, not "ARTICLE VII LIMITATION ON LIABILITY AND INDEMNIFICATION"."""
    text = (
        "ARTICLE VII LIMITATION ON LIABILITY AND INDEMNIFICATION\n7.1 Responsibility and Control. Each Party "
        "shall be solely responsible for its own work.\n7.2 Limitation of Liability. EXCEPT FOR FRAUD, IN NO "
        "EVENT WILL EITHER PARTY BE LIABLE TO THE OTHER PARTY FOR LOST PROFITS."
    )
    quote = choose_quote(text, lambda unit: 1.0 if unit.startswith("ARTICLE") else 0.5 if "LIABLE" in unit else 0.0)
    assert (
        quote.text(text)
        == "EXCEPT FOR FRAUD, IN NO EVENT WILL EITHER PARTY BE LIABLE TO THE OTHER PARTY FOR LOST PROFITS."
    )


def test_digits_repeating_a_spelled_number_on_the_next_line_open_no_list_item():
    """A contract writes "thirty (30) days"; where the line broke after "thirty", the answer quoted
    "(30) days before the expiration of the term then in effect." alone. A list item after a lead-in
    still starts its own unit, whatever word the lead-in ends with."""
    text = (
        "A party wishing to renew this Agreement shall give notice no less than thirty\n"
        "(30) days before the expiration of the term then in effect. The fee is ten percent\n(10%) of sales."
    )
    assert [" ".join(text[s:e].split()) for s, e in quote_units(text)] == [
        "A party wishing to renew this Agreement shall give notice no less than thirty (30) days before the "
        "expiration of the term then in effect.",
        "The fee is ten percent (10%) of sales.",
    ]
    listed = "Choose one:\n(1) the repair;\n(2) the payment."
    assert [listed[s:e] for s, e in quote_units(listed)] == ["Choose one:", "(1) the repair;", "(2) the payment."]


def test_the_text_after_a_run_on_capital_heading_is_quoted_from_its_sentence_start():
    """ "10. LIMITATION ON LIABILITY. EXCEPT IN THE EVENT OF A" was taken whole as the section's
    heading, and the quote began "BREACH OF SECTION 11, NEITHER PARTY…"; the heading is its title."""
    from policybot.core.passages import heading_end

    section = "10. LIMITATION ON LIABILITY. EXCEPT IN THE EVENT OF A"
    text = section + "\nBREACH OF SECTION 11, NEITHER PARTY SHALL BE LIABLE FOR LOST PROFITS.\nEach party may audit."
    begin = heading_end(section, text)
    assert text[begin:].startswith("EXCEPT IN THE EVENT OF A\nBREACH")
    s, e = quote_units(text, begin)[0]
    assert " ".join(text[s:e].split()) == (
        "EXCEPT IN THE EVENT OF A BREACH OF SECTION 11, NEITHER PARTY SHALL BE LIABLE FOR LOST PROFITS."
    )
    plain = "2.5 Escape of water\nWe will cover water escaping."
    assert plain[heading_end("Section 2 > 2.5 Escape of water", plain) :] == "We will cover water escaping."


FUNERAL = (
    "You could get a Funeral Expenses Payment (also called a Funeral Payment) if you get\n"
    "certain benefits and need help to pay for a funeral you’re arranging.\n"
    "This guide is also available in Welsh (Cymraeg).\n"
    "If you live in Scotland\n"
    "You can apply for a Funeral Support Payment. It has replaced Funeral Expenses\n"
    "Payment in Scotland.\n"
    "Time limits on making a claim\n"
    "You can only claim for a child once they are 2 years old.\n"
)


def test_a_heading_line_between_sentences_is_set_apart_and_shown_only_when_it_says_when():
    """A guide's sub-heading has no full stop and ran into the sentence under it: "Time limits on
    making a claim You can only claim…". It is a unit of its own, never quoted alone; one that says
    when the sentence applies ("If you live in Scotland") is shown before it, as a lead-in is. A
    sentence wrapped before a capitalised word ("…Funeral Expenses" / "Payment in Scotland.") and a
    table row stay as they are."""
    units = [" ".join(FUNERAL[s:e].split()) for s, e in quote_units(FUNERAL)]
    assert units[2:] == [
        "If you live in Scotland",
        "You can apply for a Funeral Support Payment.",
        "It has replaced Funeral Expenses Payment in Scotland.",
        "Time limits on making a claim",
        "You can only claim for a child once they are 2 years old.",
    ]
    scotland = choose_quote(FUNERAL, words_score("scotland", "funeral", "support", "payment")).text(FUNERAL)
    assert scotland.startswith("If you live in Scotland … You can apply for a Funeral Support Payment.")
    child = choose_quote(FUNERAL, words_score("time", "limits", "claim", "child")).text(FUNERAL)
    assert child == "You can only claim for a child once they are 2 years old."


def test_a_full_bullet_line_ends_before_a_heading_line_and_headings_in_a_row_are_each_apart():
    """ "•  6% of their income above £21,000 a year for Postgraduate loans" fills its line, so the
    width alone cannot tell that "Pensions" after it is a heading: the heading line itself can (short,
    and the sentence under it would have fitted on it). A bullet wrapped after "of" goes on, whatever
    follows."""
    payroll = (
        "They repay:\n"
        "•  9% of their income above £27,295 a year for Plan 2 and for all the other plans\n"
        "•  6% of their income above £21,000 a year for Postgraduate loans\n"
        "Pensions\n"
        "Make pension deductions after you take off National Insurance.\n"
    )
    units = [payroll[s:e] for s, e in quote_units(payroll)]
    assert units[2:] == [
        "•  6% of their income above £21,000 a year for Postgraduate loans",
        "Pensions",
        "Make pension deductions after you take off National Insurance.",
    ]
    wrapped = (
        "You must:\n"
        "•  have a fixed and permanent home in the UK, the Channel Islands or the Isle of\n"
        "Man\n"
        "You may be able to get money from the Family Support Fund for the costs of therapy.\n"
    )
    assert [" ".join(wrapped[s:e].split()) for s, e in quote_units(wrapped)][1] == (
        "• have a fixed and permanent home in the UK, the Channel Islands or the Isle of Man"
    )
    guide = (
        "This guide is also available in Welsh (Cymraeg)\nPay online\n"
        "Make sure you pay HM Revenue and Customs (HMRC) by the deadline which is on the notice you get.\n"
    )
    assert [guide[s:e] for s, e in quote_units(guide)] == [
        "This guide is also available in Welsh (Cymraeg)",
        "Pay online",
        "Make sure you pay HM Revenue and Customs (HMRC) by the deadline which is on the notice you get.",
    ]


def test_a_lead_in_that_points_back_comes_with_the_sentence_it_points_to():
    """ "This may include: … (c) photographs" says nothing of what "this" is: the sentence before it is shown."""
    text = (
        "8.3 Documents and evidence\nWe may ask you to provide any evidence we need to deal with your claim. "
        "This may include:\n(a) a completed claim form;\n(b) receipts or card statements;\n"
        "(c) photographs of the damage;\n"
    )
    begin = text.index("We may")
    third = choose_quote(text, lambda u: 1.0 if u.startswith("(c)") else 0.0, begin)
    assert third.text(text) == (
        "We may ask you to provide any evidence we need to deal with your claim. This may include: … "
        "(c) photographs of the damage;"
    )
    first = choose_quote(text, lambda u: 1.0 if u.startswith("(a)") else 0.0, begin)
    assert first.text(text).startswith("We may ask you") and first.text(text).endswith("(a) a completed claim form;")
    # A lead-in that names what it is about points nowhere; neither does one after a heading.
    named = text.replace("This may include:", "Evidence may include:")
    assert (
        choose_quote(named, lambda u: 1.0 if u.startswith("(c)") else 0.0, begin)
        .text(named)
        .startswith("Evidence may include: … (c)")
    )
    headed = "Evidence\nThis may include:\n(a) a claim form;\n(b) receipts;\n"
    assert choose_quote(headed, lambda u: 1.0 if u.startswith("(b)") else 0.0).text(headed) == (
        "This may include: … (b) receipts;"
    )


def test_clauses_numbered_by_their_sections_letter_open_their_own_units():
    """ "C2. The most we will pay…" then "C3. Driving other cars.": the next clause's number is not
    the end of this one's quote."""
    text = (
        "Section C: Liability to others\nC1. We will cover your legal liability for injury to any person.\n"
        "C2. The most we will pay for damage to property is £20,000,000 for any one claim.\n"
        "C3. Driving other cars. You may drive another private car with the owner's permission.\n"
    )
    units = [text[s:e] for s, e in quote_units(text, text.index("C1."))]
    assert units == [
        "C1. We will cover your legal liability for injury to any person.",
        "C2. The most we will pay for damage to property is £20,000,000 for any one claim.",
        "C3. Driving other cars. You may drive another private car with the owner's permission.",
    ]
    quote = choose_quote(text, lambda u: 1.0 if "The most" in u else 0.0, text.index("C1."))
    assert quote.text(text) == units[1]


def test_a_definition_after_its_term_on_its_line_is_quoted_with_the_term():
    text = (
        "Meaning of words\nCar: The vehicle shown in your schedule.\n"
        "Named driver: A person shown on your certificate of motor insurance as entitled to drive your car.\n"
    )
    quote = choose_quote(text, lambda u: 1.0 if u.startswith("A person") else 0.0, text.index("Car:"))
    assert quote.text(text) == (
        "Named driver: A person shown on your certificate of motor insurance as entitled to drive your car."
    )
    # A lead-in on a line of its own leads a list, not a definition: it is not run into the sentence.
    listed = "What you must do:\nTell us within 48 hours.\n"
    assert choose_quote(listed, lambda u: 1.0 if u.startswith("Tell") else 0.0).text(listed) == (
        "Tell us within 48 hours."
    )


def test_clause_starts_are_titled_or_clause_numbered_never_list_items():
    text = (
        "1. Looking after your car. You must keep it roadworthy.\n2. Making a claim. Tell us within 48 hours.\n"
        "A3. If your car is less than a year old we will replace it with a new one.\n4.2 We will pay the excess.\n"
        "You must:\n1. be over 18;\n2. live in the UK.\n"
    )
    starts = [text[s : s + 12] for s in clause_starts(text)]
    assert starts == ["1. Looking a", "2. Making a ", "A3. If your ", "4.2 We will "]


def test_a_clause_number_that_ends_a_sentence_on_the_next_line_is_no_list_item():
    """ "…held in accordance with clause" then "5." on its own line: the sentence's end, not an item."""
    text = '1.2 "Deposit" means £1,000 held in accordance with clause\n5.\n1.3 "Term" means a period of 12 months.\n'
    assert [text[s:e] for s, e in quote_units(text)] == [
        '1.2 "Deposit" means £1,000 held in accordance with clause\n5.',
        '1.3 "Term" means a period of 12 months.',
    ]


def test_a_lead_in_chosen_brings_the_item_closest_to_the_question():
    """ "…may deduct the reasonable cost of: (a) any unpaid Rent; … (c) cleaning, where…": asked about
    cleaning, the lead-in is quoted with item (c), not with its first item."""
    text = (
        "5.2 At the end of the tenancy the Landlord may deduct from the Deposit the reasonable cost of: "
        "(a) any unpaid Rent; (b) making good any damage beyond fair wear and tear; (c) cleaning, where the "
        "Property is not left in the condition it was in at the start of the tenancy."
    )

    cleaning = choose_quote(text, _sharing("landlord", "deposit", "cleaning"))
    assert cleaning.text(text) == (
        "5.2 At the end of the tenancy the Landlord may deduct from the Deposit the reasonable cost of: … "
        "(c) cleaning, where the Property is not left in the condition it was in at the start of the tenancy."
    )
    # No item speaks to the question: the lead-in comes with its first item, as before.
    assert choose_quote(text, _sharing("landlord", "deposit")).text(text).endswith("cost of: (a) any unpaid Rent;")


def test_a_lead_in_brings_an_item_of_its_own_list_and_a_nested_list_whole():
    limits = (
        "6. Special Limits. We will pay no more than $2,500 for any loss to the following kinds of property:\n"
        "a. Artwork and collectibles;\nb. Rare books;\nc. Jewelry and watches;\n"
        "7. If you are a tenant, you may apply up to 10 percent of the limit to jewelry cabinets.\n"
    )

    # "7." is the lead-in's next sibling, not an item of its list.
    quote = choose_quote(limits, _sharing("pay", "limits", "jewelry"))
    assert quote.text(limits).endswith("kinds of property: … c. Jewelry and watches;")
    flood = (
        "B. Flood means:\n1. A general and temporary condition of inundation of two or more acres from:\n"
        "a. Overflow of inland or tidal waters;\nb. Unusual and rapid accumulation of surface waters from any source;\n"
    )
    # The first item leads a list of its own: the definition is read from its start, as before.
    assert (
        choose_quote(flood, _sharing("flood", "means", "surface"))
        .text(flood)
        .startswith("B. Flood means: 1. A general and temporary condition")
    )


def test_a_second_quote_s_lead_in_brings_its_closest_item_too():
    """``other_quote`` chooses the unit, then the item its lead-in brings by the same closeness."""
    text = (
        "5.1 The Deposit is protected in a scheme.\n5.2 The Landlord may deduct from the Deposit the reasonable "
        "cost of: (a) any unpaid Rent; (b) damage; (c) cleaning, where the Property is left dirty.\n"
    )
    first = choose_quote(text, lambda unit: 1.0 if unit.startswith("5.1") else 0.0)
    found = other_quote(text, _sharing("deduct", "cleaning"), first)
    assert found is not None and found[0].text(text).endswith("… (c) cleaning, where the Property is left dirty.")


def test_a_lead_in_followed_by_its_own_sibling_brings_that_unit_as_before():
    """ "1. The following terms apply:" then "2. Term…": no item of its own list follows (it crashed)."""
    text = (
        "1. The following terms apply to this agreement:\n2. The Term of this agreement is one year from the date "
        "on which it is signed by both parties.\n3. Payment is due on the first day of every month of the Term.\n"
    )
    quote = choose_quote(text, lambda unit: 1.0 if unit.startswith("1.") else 0.0)
    assert quote.text(text).startswith("1. The following terms apply to this agreement: 2. The Term")


def test_a_short_sentence_after_its_term_still_brings_the_sentence_after_it():
    text = (
        "Cookies: We use cookies on our site. These technologies allow us to recognise your preferences and keep "
        "track of the choices you make about the e-mails you wish to receive.\n"
    )
    quote = choose_quote(text, lambda unit: 1.0 if unit.startswith("We use") else 0.0)
    assert quote.text(text).startswith("Cookies: We use cookies on our site. These technologies allow us")


def _sharing(*words: str):
    """A closeness that counts the given words a unit holds, as a quote's shared words count."""
    return lambda unit: float(sum(w in unit.lower() for w in words))
