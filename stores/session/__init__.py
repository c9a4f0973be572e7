"""The session-aware reference design (docs/reference.md): its ranking, the hybrid variant, the health model and the handoff brief."""
