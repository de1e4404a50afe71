"""What every room shares: the text helpers, the library's records (a document row, its chunk
rows), the passage carrier, the off-topic probe bank, editions and stage timings. Nothing here
imports another room of ``policybot``, so answering never needs ingestion to read a row."""
