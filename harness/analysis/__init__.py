"""Results and analysis: DuckDB over runs, the app's queries, aggregation with intervals, rescoring."""
