"""Long-term memory: knowledge files, KnowledgeRetriever, experience bank."""
