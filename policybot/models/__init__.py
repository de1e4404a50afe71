"""The models: profiles (which embedding model, reranker and LLM), their loading, the LLM and
its providers (Ollama, llama.cpp), and downloads for offline use."""
