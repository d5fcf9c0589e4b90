"""The search sources that read files or wait on a program, one module each behind the interface in base:
`folder` (another folder of Markdown, indexed beside the workspace's own records), `command` (an external
program that prints JSON lines) and `semantic` (the derived semantic index). `kinds` registers them by the
`kind` a `[[search.sources]]` table names; kbsync.retrieval.search runs them in its pool and fuses their
lists with the workspace's own kinds. A new kind is a module here with a `KIND` and one line in `kinds`.

May import what the retrieval folder may: the root floor, core, store, git and retrieval; never sync or board."""
