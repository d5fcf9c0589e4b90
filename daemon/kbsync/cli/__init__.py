"""Floor 7, the command line: argparse, one module per subcommand, each parsing its arguments, calling
kbsync.app and printing the result; nothing else. Imported by nothing but kbsync.main, which finds the
subcommands by listing this folder.

Each module imports heavy libraries only inside its run function, so that start-up stays fast."""
