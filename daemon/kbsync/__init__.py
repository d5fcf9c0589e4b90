"""kbsync: keeps a Markdown memory workspace dependable across machines."""

__version__ = "0.1.0"
