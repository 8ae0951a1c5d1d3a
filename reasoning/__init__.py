"""Deciding a case: reading its flows, the offline reasoner, the LLM layer and the paper's LLM
methods with their prompts, the LLM annotator of norms and the evaluation harness."""
