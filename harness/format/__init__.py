"""The scenario format: the file model, its schema, checks and loader, YAML positions, time parsing, issues."""
