"""A finding of validation: where, how bad, what to do."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable, Literal

Level = Literal["error", "warning"]


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int
    level: Level
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.level}: {self.message}"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def has_errors(findings: Iterable[Finding]) -> bool:
    return any(f.level == "error" for f in findings)
