"""Where the library lives: the registry (SQLite, the source of truth), the vector index
(Chroma), the BM25 shards, the cross-process library lock, the feedback store and the kept conversations."""
