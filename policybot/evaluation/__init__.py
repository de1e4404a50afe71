"""Measuring PolicyBot on evaluation sets: the dataset format, the metrics (one of each, for
every benchmark), the configurations run by ``policybot eval``, their reports, and evidence
mode's clause recall."""
