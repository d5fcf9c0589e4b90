import sys

from kbsync.assist.hookrun import plain_hook_call

hook = plain_hook_call(sys.argv[1:])  # an assistant's hook: answered without building the command line
if hook:
    from kbsync.assist.hookrun import run

    sys.exit(run(*hook))

from kbsync.main import entry  # noqa: E402

entry()
