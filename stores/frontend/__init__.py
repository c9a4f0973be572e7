"""Front ends: what reads the customer's words at the three seams (decision signals, memory
classes, extraction). `rules` (the regular expressions of each seam), `learned` (MiniLM
embeddings and a small classifier per head, trained on the phrase bank, rules as fallback when
unsure) and `chat` (an OpenAI-compatible model, learned as fallback)."""
