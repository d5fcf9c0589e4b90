"""Floor 4 (a feature): retrieval for the assistant. The derived search database (SQLite FTS5), its
records and text handling, the index kept up to date, federated search fused with RRF, context packs
within a token budget, and statistics (SQLite, optionally PostgreSQL).

May import the root floor, core, store and git; never sync or board."""
