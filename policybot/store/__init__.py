"""Where the library lives: the registry (SQLite, the source of truth), the vector index
(Chroma), the BM25 shards, the cross-process library lock and the feedback store."""
