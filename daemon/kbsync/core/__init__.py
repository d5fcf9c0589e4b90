"""Floor 1, the protocol as pure logic: paths and ids, frontmatter, sessions, validation, the named
lossless repairs, index rows, the board entry model, candidates, and the secret and injection rules.

No I/O: these modules read no file, start no process and open no socket (the secret rules file, shipped
in kbsync/data, is the one read, done once and lazily). They may import the root floor (errors, config)
and one another, nothing else."""
