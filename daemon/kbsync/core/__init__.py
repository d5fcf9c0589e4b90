"""Floor 1, the protocol as pure logic: paths and ids, frontmatter, sessions, validation, the named
lossless repairs, index rows, the board entry model, candidates, and the secret and injection rules.

No I/O: these modules read no file, start no process and open no socket (two files shipped in kbsync/data
are the reads, each done once and lazily: the secret rules, and the stored prefixes of the instruction
detector's rules). They may import the root floor (errors, config)
and one another, nothing else."""
