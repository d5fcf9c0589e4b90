from kbsync.main import entry

entry()
