"""Retrieval baselines: history stuffing, TF-IDF, embedding similarity, and the cached sentence encoder."""
