"""Long-term memory: knowledge files, KnowledgeRetriever, experience bank.

- ``knowledge/``: human-reviewed archetypes (Markdown), C skeletons and pitfalls (YAML).
- ``knowledge_files``: loading and validating them into pydantic models.
- ``retrieval``: ``KnowledgeRetriever`` (lookup by id, semantic search), ``RetrieverHandle`` and
  ``get_retriever`` (the serializable handle graph state holds, resolved to a process-cached
  retriever).
- ``embeddings`` and ``vector_index``: the embedding seam (sentence-transformers, imported
  lazily) and the FAISS index with its on-disk embedding cache.

Importing this package loads no model: torch, sentence-transformers and FAISS are imported on
the first semantic search.
"""
