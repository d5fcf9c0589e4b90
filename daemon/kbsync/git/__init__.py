"""Floor 3, the only code that starts git or writes git objects: the repository (plumbing through
kbsync.proc, loose objects written directly), object formats, the staged files, the commit that the
daemon and `kbsync commit` make, the pre-commit and pre-push hooks and their install.

May import the root floor, core and store."""
