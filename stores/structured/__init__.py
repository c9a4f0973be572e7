"""Structured support memory (seed 002): typed memories, the rule-based extractor, their stores and the strategy."""
