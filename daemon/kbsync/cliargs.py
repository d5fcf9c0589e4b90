"""The type of argparse's sub-command registry, named once for every door that registers commands (the
standard library types it as a generic only in its stubs, so it cannot be subscripted at run time)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    Subparsers = argparse._SubParsersAction
