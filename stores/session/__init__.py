"""The session-aware reference design: its ranking, the hybrid variant, the health model and the handoff brief."""
