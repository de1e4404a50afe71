"""Adding a document, stage by stage (``pipeline.py`` composes them): read the PDF (with OCR
for scanned pages), find its sections, chunk, embed, score the off-topic probes, store and
register it. Never imports ``answer``."""
