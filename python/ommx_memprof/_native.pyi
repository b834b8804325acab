# The types of the compiled module (python/src/lib.rs): what crosses the
# boundary between the memprof library and this package. A test
# (tests/test_native.py) holds the names here to the module's.

import os
from typing import Any, Optional, Sequence, Union

__version__: str

class RealMemory:
    """The real-memory estimate of a profile's instances."""

    @property
    def runtime(self) -> str: ...
    @property
    def resident_bytes(self) -> int: ...
    @property
    def load_peak_bytes(self) -> int: ...
    @property
    def held_bytes(self) -> dict[str, int]: ...
    @property
    def first_load_extra_bytes(self) -> int: ...

class Rendered:
    """A document: the table the command prints, its JSON document, and
    the tables of rows it holds."""

    @property
    def text(self) -> str: ...
    @property
    def json(self) -> str: ...
    @property
    def table_names(self) -> list[str]: ...
    def records(self, name: str) -> list[dict[str, Any]]: ...

class CheckOutcome:
    """What ``check`` found."""

    @property
    def passed(self) -> bool: ...
    @property
    def warnings(self) -> list[str]: ...
    @property
    def document(self) -> Rendered: ...

class Profile:
    """One loaded profile."""

    @property
    def name(self) -> str: ...
    @property
    def total(self) -> int: ...
    @property
    def real_memory(self) -> Optional[RealMemory]: ...
    @property
    def is_baseline(self) -> bool: ...
    def records(self) -> list[dict[str, Any]]: ...
    def render(
        self,
        format: str,
        depth: Optional[int] = None,
        min_percent: Optional[float] = None,
        all: bool = False,
        top: int = 25,
    ) -> str: ...
    def flamegraph(
        self,
        title: Optional[str] = None,
        inverted: bool = False,
        reverse: bool = False,
        min_width: Optional[float] = None,
    ) -> str: ...
    def top(self, n: int = 10, kind: str = "all") -> Rendered: ...
    def stats(self, kind: str = "all", top: int = 25) -> Rendered: ...
    def advise(self, min_severity: str = "info") -> Rendered: ...
    def explain(self, paths: Sequence[str]) -> Rendered: ...
    def diff(
        self,
        new: Profile,
        format: str = "table",
        top: Optional[int] = None,
        depth: Optional[int] = None,
    ) -> str: ...
    def diff_records(self, new: Profile) -> list[dict[str, Any]]: ...
    def diff_flamegraph(
        self, new: Profile, widths: str = "new", companion: str = "the other graph"
    ) -> str: ...
    def report_html(
        self, old: Optional[Profile] = None, top: int = 100, notebook: bool = False
    ) -> str: ...
    def check(
        self,
        budget: Any = None,
        budget_file: Optional[str] = None,
        baseline: Optional[Profile] = None,
    ) -> CheckOutcome: ...

def profile_path(
    path: str,
    layer: Optional[int] = None,
    view: str = "memory",
    group_by: Optional[str] = None,
    registry: Union[str, os.PathLike, None] = None,
) -> Profile: ...
def profile_bytes(
    data: bytes,
    name: str,
    layer: Optional[int] = None,
    view: str = "memory",
    group_by: Optional[str] = None,
) -> Profile: ...
def is_instance_layer(media_type: str) -> bool: ...
def profile_layers(
    layers: Sequence[tuple[str, str, int, dict[str, str], Optional[bytes]]],
    name: str,
    layer: Optional[int] = None,
    view: str = "memory",
    group_by: Optional[str] = None,
) -> Profile: ...
def run_cli(argv: Sequence[str]) -> int: ...
