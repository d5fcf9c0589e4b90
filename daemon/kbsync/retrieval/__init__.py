"""Floor 4 (a feature): retrieval for the assistant. The derived search database (SQLite FTS5: its storage
in db, the keyword ranking over it in ranking), its records and text handling, the index kept up to date,
federated search fused with RRF (search, with the sources run beside the workspace's own kinds registered
in sources/), context packs within a token budget, and statistics (SQLite, optionally PostgreSQL).

May import the root floor, core, store and git; never sync or board."""
