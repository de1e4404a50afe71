"""core/roles.py: one role model for the answer's labels and the Evidence table, on any library."""

from policybot.core.roles import plain_label


def test_titles_decide_where_they_say_what_a_passage_does():
    assert plain_label("Section 1 Definitions > 1.18 Unoccupied", "Unoccupied means…") == "Definition"
    assert plain_label("2.5 Escape of water", "What is not covered … (c) Damage caused by water") == "Not covered"
    assert plain_label("Section 5 Deductibles > 5.2 Escape of water deductible", "A Deductible of $750") == "Limit"


def test_a_procedure_is_a_condition_only_where_its_quote_sets_one():
    """A claims or payment section's quote is a *Condition* when it sets one ("if", "must", "within 48
    hours"), and unlabelled when it only describes the steps: a guide's "Payment" titles no longer
    read as conditions."""
    section = "Section 8 Claims > 8.1 How to make a claim"
    assert plain_label(section, "You must report any theft to the police within 48 hours.") == "Condition"
    assert plain_label(section, "If any claim has been made, no refund of premium is due.") == "Condition"
    assert plain_label(section, "We will give you a claim reference number and explain what happens next.") is None
    assert plain_label("3. How you're paid", "Payments are made every 4 weeks into your bank account.") is None


def test_a_passage_whose_titles_say_nothing_is_labelled_by_its_quote():
    """gov.uk chapters ("2. What you'll get") and contract articles carry no insurance words."""
    assert plain_label("2. What you'll get", "You'll get a first payment of £3,500.") == "Covered"
    assert plain_label("1. Eligibility", "You can get it only if your partner paid National Insurance.") == "Condition"
    assert plain_label("ARTICLE 12 MISCELLANEOUS", "This Agreement shall be governed by the laws of New York.") is None
    assert plain_label("1. Overview", "You cannot claim BSP if you're in prison.") == "Not covered"


def test_an_item_of_an_exclusions_section_is_not_covered_though_its_words_never_say_so():
    """ "Section 4 General Exclusions > 4.3 Pests and vermin" lists "Loss or damage caused by…
    mice": a citizen asking about mice reads *Not covered*, not *Limit*. A deductible stays a
    *Limit*, and a write-back under an exclusion ("we will pay for…") is not called excluded."""
    pests = "Section 4 General Exclusions > 4.3 Pests and vermin"
    assert plain_label(pests, "Loss or damage caused by insects, vermin, rodents such as mice.") == "Not covered"
    assert plain_label("V. EXCLUSIONS > B", "Loss or damage caused by mold, mildew or moisture.") == "Not covered"
    assert plain_label("Section 4 General Exclusions > 4.9 Deductible", "A Deductible of $250 applies.") == "Limit"
    assert plain_label(pests, "We will pay for damage caused by a bird entering through a window.") == "Limit"


def test_an_exclusive_right_is_not_an_exclusion():
    """A contract's "3. EXCLUSIVITY." or "Exclusive Licence" grants a right; only "exclusion" and
    "excluded" exclude. The quote's own words still decide ("…is excluded" is *Not covered*)."""
    grant = "Licensor grants the Licensee the sole right to sell the Products in the Territory."
    assert plain_label("3. EXCLUSIVITY", grant) is None
    assert plain_label("ARTICLE 2 EXCLUSIVE LICENSE", grant) is None
    assert plain_label("3. EXCLUSIVITY", "Sales outside the Territory are excluded.") == "Not covered"
    assert plain_label("4. EXCLUSIONS", grant) == "Not covered"


def test_a_title_that_holds_cover_inside_a_word_says_nothing_of_cover():
    """ "3. Discovery of Insufficient Premium" (a FEMA form's clause under General Conditions) is not
    a cover clause: its quote reads as its nearer titles say, a *Condition*."""
    section = "VII. General Conditions > D. Insufficient Premium > 3. Discovery of Insufficient Premium"
    quote = "If you pay the additional amount within 30 days, we will reform the policy."
    assert plain_label(section, quote) == "Condition"
    assert plain_label("2.4 Recovery of costs", "You must pay us back before you keep any money.") == "Condition"


def test_a_refusal_of_something_other_than_cover_is_not_labelled_not_covered():
    """A privacy policy's "we will not share" and a contract's "shall not run banner advertisements"
    refuse something, but no cover: read beside them, *Not covered* would mislead."""
    assert plain_label("", "We will not share any information we collect with anyone outside of the Archives.") is None
    assert plain_label("Children", "We do not sell any personal information to third parties.") is None
    ads = "i-Escrow shall not run banner advertisements. 2TheMart shall list the companies they would like to exclude."
    assert plain_label("2.4 RESTRICTIONS ON COMMUNICATIONS", ads) is None
    assert plain_label("3. By debit or credit card", "You cannot pay by personal credit card.") is None
    # A refusal of cover still is one, however it is worded.
    gradually = "We will not pay for damage caused by water escaping gradually."
    assert plain_label("2.5 Escape of water", gradually) == "Not covered"
    assert plain_label("V. EXCLUSIONS", "We do not insure any of the following: a. Property.") == "Not covered"
    services = "You cannot get Statutory Maternity Leave if you have a contract for services."
    assert plain_label("1. Overview", services) == "Not covered"
    assert plain_label("ARTICLE 9 INDEMNITY", "The Company shall not be liable for any indirect loss.") == "Limit"


def test_an_excess_listed_among_what_is_not_covered_is_a_limit():
    """UK wordings list the excess first under "What is not covered": it is what the claimant pays
    towards a claim that is paid, a *Limit*, not a loss left out."""
    excess = "What is not covered … 1. The first £100 of each claim (the excess)."
    assert plain_label("Section 5 - Personal belongings and baggage", excess) == "Limit"
    assert plain_label("Section 5 > What is not covered", "1. The first £100 of each claim (the excess).") == "Limit"
    beach = "What is not covered … 2. Loss or theft of belongings left unattended on a beach."
    assert plain_label("Section 5 - Personal belongings and baggage", beach) == "Not covered"
