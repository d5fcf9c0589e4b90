"""Floor 4 (a feature): the knowledge board on disk. The board file, per-machine feedback and decay,
the weekly review, the watermark scan of knowledge sources and their change detection.

May import the root floor, core, store and git; never sync or retrieval."""
