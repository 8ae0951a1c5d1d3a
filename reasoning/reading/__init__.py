"""Reading a narrative into flows and facts: the rule reader (facts), the flow extractor,
the LLM's flows."""
