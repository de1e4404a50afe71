"""Seconds per stage of one question, for the answer's ``timings`` and the evaluation."""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator


class Timings(dict[str, float]):
    """Stage name -> seconds; a stage measured twice adds up."""

    @contextmanager
    def measure(self, stage: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self[stage] = round(self.get(stage, 0.0) + time.perf_counter() - started, 4)
