"""Floor 1, the protocol as pure logic: paths and ids, frontmatter, sessions, validation, the named
lossless repairs, index rows, the board entry model, candidates, transcripts; and, in core/detect/, the
secret scan and the embedded-instruction detector.

No I/O: these modules read no file, start no process and open no socket (the files shipped in kbsync/data
that core/detect/ reads, each once and lazily, are the only reads: the secret rules, the stored prefixes of
the detector's rules, the classifier's weights). They may import the root floor (errors, config)
and one another, nothing else."""
