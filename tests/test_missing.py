"""answer/missing.py: naming what the passages do not state."""

from policybot.answer.missing import missing

INSTALMENTS = (
    "9.3 If you pay by monthly instalments. If you pay by monthly instalments and cancel your policy, we will "
    "stop collecting instalments. After taking off the $30 administration charge, we will refund $210."
)
EXAMPLE = "For example, if your annual premium is $480 and you cancel after six months, the refund is $240."


def test_an_amount_asked_for_and_stated_about_something_else_is_missing():
    assert missing("How much does this policy cost per month?", [INSTALMENTS, EXAMPLE]) == "an amount"
    # The word that asks is no topic: "the cost of a road ambulance" says nothing of the policy's price.
    ambulance = "2.5 Road Ambulance. We reimburse the cost of a road ambulance, up to Rs. 2,000 per hospitalisation."
    assert missing("How much does this policy cost per month?", [ambulance]) == "an amount"
    assert missing("How much do you pay for the ambulance?", [ambulance]) is None


def test_an_amount_stated_about_what_was_asked_is_not_missing():
    assert missing("How much is the administration charge?", [INSTALMENTS]) is None
    assert missing("What does the policy cost per month?", ["The policy costs $40 a month."]) is None


def test_a_worked_example_does_not_state_the_amount():
    assert missing("How much is the annual premium?", [EXAMPLE]) == "an amount"


def test_a_length_of_time_a_phone_number_and_an_email_address():
    report = "You must report a theft to the police within 48 hours."
    assert missing("How long do I have to report a theft?", [report]) is None
    assert missing("How long do I have to report a theft?", ["Report every theft to the police."]) == "a length of time"
    assert missing("What is the phone number for claims?", ["Claims: call 0800 123 4567."]) is None
    assert missing("What is the phone number for claims?", ["Tell us about a claim."]) == "a phone number"
    assert missing("What email address do complaints go to?", ["Write to complaints@insurer.example."]) is None


def test_a_question_that_asks_for_no_quantity_is_left_alone():
    assert missing("Am I covered for a burst pipe?", ["Escape of water is covered."]) is None
    assert missing("How much does it cost?", []) is None  # nothing found: the refusal speaks


def test_a_cost_asked_about_as_covered_asks_for_no_amount():
    """ "Divorce legal costs covered?" asks whether, not how much: no "does not state an amount"."""
    legal = ["We will not pay for: (e) disputes about divorce, separation, children or maintenance."]
    assert missing("divorce legal costs covered?", legal) is None
    assert missing("Do you pay the cost of a hotel while my house is repaired?", legal) is None
    assert missing("How much of the legal costs do you pay?", legal) == "an amount"


def test_only_a_clause_that_opens_with_the_ask_asks_for_an_amount():
    """ "How much" inside a story, or a cost named in a yes/no question, asks for no amount."""
    offer = ["If you disagree with the amount we offer, either of us may refer it to an arbitrator."]
    assert missing("i dont agree with how much u offered for my claim what can i do", offer) is None
    assert missing("Is there a penalty or break fee spelled out in our agreement?", offer) is None
    assert missing("does it cost anything", ["The service is free to use."]) is None
    assert missing("what is the revised due date on a second premium bill?", ["We will mail a second bill."]) is None
    # A clause of its own that asks still does, after the words that join it on.
    rings = ["Any single item of Valuables: see your schedule."]
    assert missing("They took my ring and some cash, how much do we get back?", rings) == "an amount"
    assert missing("What is the annual premium?", ["Pay the premium by direct debit."]) == "an amount"


def test_a_contract_states_a_period_in_words_with_its_digits_or_by_its_dates():
    renew = ["This Agreement shall automatically renew for an additional term of five (5) years thereafter."]
    assert missing("Does the agreement renew automatically, and for how long each time?", renew) is None
    assert missing("Does the agreement renew automatically, and for how long each time?", ["It may renew."]) == (
        "a length of time"
    )
    dates = ["The Joint Venture is a fixed term beginning November 27, 2018 and ending November 30th, 2019."]
    assert missing("How long does our joint venture run before the term is up?", dates) is None


def test_a_local_phone_number():
    assert missing("legal helpline number", ["Call our legal advice helpline on 555-0177, 24 hours a day."]) is None
    assert missing("legal helpline number", ["Call our legal advice helpline at any time."]) == "a phone number"


def test_how_much_notice_asks_for_a_length_of_time():
    notice = ["6.1 The Tenant may end the tenancy by giving at least one month's written notice."]
    assert missing("how much notice do i have to give if i want to move out early", notice) is None
    assert missing("how much notice do i have to give to move out?", ["Give notice in writing."]) == "a length of time"
