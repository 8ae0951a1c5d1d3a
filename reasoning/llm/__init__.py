"""LLMs: the client and its cache, the local model, prompts, the answer reader, the LLM
annotator."""
