"""Answering one question, stage by stage (``pipeline.py`` composes them): plan the queries,
retrieve and fuse, select, score, decide the band, write, check the citations, note an earlier
edition. Never imports ``ingestion``: a question only reads what the store holds."""
