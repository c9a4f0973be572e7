"""The scenario format: the file model (and the gold vocabulary declared on it), the runtime model, its schema, checks and loader, YAML positions, time parsing, issues."""
