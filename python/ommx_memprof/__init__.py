"""See where the memory of an OMMX optimization problem goes.

``ommx_memprof.profile(x)`` profiles an ``ommx.v1.Instance`` (anything with
``to_bytes()``), raw bytes, a path (``.ommx`` archive, OCI directory, raw
protobuf, gzip, or a baseline JSON saved by ``memprof inspect --format json``)
or an image name of OMMX's local registry (``"ghcr.io/org/name:tag"``)
exactly as ``ommx`` 2.9.3's ``Instance.logical_memory_profile()`` counts it.

Every number and every text comes from the memprof Rust library (the same
code as the ``memprof`` command); this module only wraps it for Python.
Errors raise ``ValueError`` with the one-line reason the command prints.
"""

from __future__ import annotations

import html
import json
import os
import warnings
from typing import Any, Mapping, NamedTuple, Optional, Union

from . import _native

__all__ = [
    "CheckResult",
    "Diff",
    "Document",
    "Profile",
    "RealMemory",
    "assert_within",
    "profile",
]

__version__: str = _native.__version__

#: A budget: a size for the total (``"64 MiB"``, or an int of bytes), or a
#: mapping from path (or pattern, or ``"total"``) to a size or to the limits
#: of a budget rule (``{"max_growth": "5%", "min_delta": "1 MiB"}``).
Budget = Union[str, int, Mapping[str, Any]]


def profile(
    x: Any,
    layer: Optional[int] = None,
    view: str = "memory",
    group_by: Optional[str] = None,
    *,
    name: Optional[str] = None,
    registry: Union[str, os.PathLike, None] = None,
) -> "Profile":
    """Profiles ``x`` exactly as OMMX's ``Instance.logical_memory_profile()``
    counts it. ``x`` is what OMMX users hold:

    - an ``ommx.artifact.Artifact`` (every instance layer, each under a root
      frame, or the ``layer``-th alone);
    - an ``Instance`` of OMMX 2.x (``ommx.v1.Instance``: counted as 2.9.3
      holds it) or of OMMX 3.0 (``ommx.Instance``: counted as 3.0 holds it);
    - a path (``str`` or ``os.PathLike``): an ``.ommx`` archive, an OCI
      directory, raw protobuf, gzip, or a baseline JSON saved by
      ``Profile.save``;
    - ``bytes`` of any of those;
    - an image name (``"ghcr.io/org/name:tag"``, ``"name@sha256:..."``) that
      no file has: the image of OMMX's local registry (2.9.3's or 3.0's
      layout) under ``registry``, else ``$OMMX_LOCAL_REGISTRY_ROOT``, else
      OMMX's default root, read without writing to it and never pulled.

    ``layer`` picks the N-th instance layer (0-based, manifest order) without
    a root frame; ``view`` is ``"memory"`` (OMMX's logical bytes) or
    ``"wire"`` (encoded protobuf bytes); ``group_by="name"`` inserts one
    frame per entity family. ``name`` names bytes, instances and artifacts in
    reports. Raises ``ValueError`` when the input cannot be read or OMMX would
    reject it.
    """
    if isinstance(x, Profile):
        return x
    if isinstance(x, (str, os.PathLike)):
        native = _native.profile_path(
            os.fsdecode(x),
            layer,
            view,
            group_by,
            None if registry is None else os.fsdecode(registry),
        )
    elif isinstance(x, (bytes, bytearray, memoryview)):
        native = _native.profile_bytes(bytes(x), name or "<bytes>", layer, view, group_by)
    elif _is_artifact(x):
        native = _native.profile_layers(
            _artifact_layers(x), name or _artifact_name(x), layer, view, group_by
        )
    elif callable(getattr(x, "to_v2_bytes", None)):
        # OMMX 3.0's Instance: its own schema, counted as 3.0 holds it.
        native = _native.profile_bytes(
            _bytes_of(x, "to_v2_bytes"), name or "<instance>", layer, view, group_by
        )
    elif callable(getattr(x, "to_bytes", None)) and not isinstance(x, int):
        native = _native.profile_bytes(
            _bytes_of(x, "to_bytes"), name or "<instance>", layer, view, group_by
        )
    else:
        raise TypeError(
            "profile() takes an ommx Artifact, an ommx Instance (2.x or 3.0), a path or "
            f"bytes, not {type(x).__name__}"
        )
    return Profile(native)


def _bytes_of(x: Any, method: str) -> bytes:
    data = getattr(x, method)()
    if not isinstance(data, bytes):
        raise TypeError(f"{type(x).__name__}.{method}() returned {type(data).__name__}, not bytes")
    return data


def _is_artifact(x: Any) -> bool:
    """An OMMX artifact (2.x's or 3.0's ``ommx.artifact.Artifact``): layer
    descriptors and their blobs."""
    return hasattr(x, "layers") and callable(getattr(x, "get_blob", None))


def _artifact_layers(artifact: Any) -> list:
    """Every layer of the manifest as (media type, digest, size,
    annotations, blob); only instance layers carry their bytes."""
    layers = []
    for d in artifact.layers:
        blob = artifact.get_blob(d.digest) if _native.is_instance_layer(d.media_type) else None
        layers.append((d.media_type, d.digest, d.size, dict(d.annotations), blob))
    return layers


def _artifact_name(artifact: Any) -> str:
    image = getattr(artifact, "image_name", None)
    return str(image) if image else "<artifact>"


class RealMemory(NamedTuple):
    """An estimate of what loading the instance really takes in a Python
    process (docs/real-memory.md), beside the byte-exact logical count."""

    runtime: str
    """The runtime estimated, e.g. ``OMMX 2.9.3 (Python)``."""
    resident_bytes: int
    """Held once loaded and the input bytes freed, beyond the interpreter."""
    load_peak_bytes: int
    """The most held while loading, the input bytes included."""
    held_bytes: dict
    """The part of ``resident_bytes`` the instance's own allocations take,
    by owner: ``decision_variables``, ``objective``, ``constraints``,
    ``removed_constraints``, ``instance``. The rest of the resident is heap
    the allocator kept from the load."""
    first_load_extra_bytes: int = 0
    """What a fresh process's first load holds beyond ``resident_bytes``, once
    (the runtime's own set-up; measured by bench/real_memory.py)."""


class Profile:
    """The logical memory of one input, as ``memprof inspect`` sees it."""

    def __init__(self, native: Any) -> None:
        self._native = native
        self._pages: dict = {}

    @property
    def name(self) -> str:
        """The input as reports name it (the path, ``<bytes>``, ...)."""
        return self._native.name

    @property
    def total(self) -> int:
        """Total bytes."""
        return self._native.total

    @property
    def real_memory(self) -> Optional[RealMemory]:
        """What loading the instance(s) would really take in a Python process:
        OMMX 2.9.3's ``Instance.from_bytes`` (3.0.0b7's for an ommx.v2
        instance). An estimate (docs/real-memory.md), ``None`` for a
        baseline saved without one."""
        real = self._native.real_memory
        if real is None:
            return None
        return RealMemory(
            runtime=real.runtime,
            resident_bytes=real.resident_bytes,
            load_peak_bytes=real.load_peak_bytes,
            held_bytes=real.held_bytes,
            first_load_extra_bytes=real.first_load_extra_bytes,
        )

    def folded(self) -> str:
        """OMMX's folded text, identical to ``Instance.logical_memory_profile()``:
        ``frame;frame;... BYTES`` lines, sorted, with no newline after the last."""
        text = self._native.render("folded")
        return text[:-1] if text.endswith("\n") else text

    def tree(
        self, depth: Optional[int] = None, min_percent: Optional[float] = None, all: bool = False
    ) -> str:
        """``memprof inspect --format tree``: inclusive bytes per node, cut as
        the command cuts it: a screenful (3 levels, siblings under 2% folded
        into "(N others)") unless ``all``; ``depth``/``min_percent`` override."""
        return self._native.render("tree", depth=depth, min_percent=min_percent, all=all)

    def table(self, top: int = 25) -> str:
        """``memprof inspect --format table``: the ``top`` largest paths."""
        return self._native.render("table", top=top)

    def to_json(self) -> str:
        """``memprof inspect --format json``: the document ``memprof diff`` and
        ``memprof check`` take as a baseline."""
        return self._native.render("json")

    def to_yaml(self) -> str:
        """``memprof inspect --format yaml``."""
        return self._native.render("yaml")

    def to_speedscope(self) -> str:
        """``memprof inspect --format speedscope``: speedscope's JSON file
        (speedscope.app opens it), one sample per line of ``folded()``,
        weighed in bytes."""
        return self._native.render("speedscope")

    def to_dict(self) -> dict:
        """The JSON document (``schema_version``, ``total_bytes``, ``tree``, ...)
        as Python data."""
        return json.loads(self.to_json())

    def records(self) -> list:
        """One record per path of the profile (``path``: frames joined by
        ``;``, ``bytes``: its own bytes), as ``folded()`` lists them."""
        return self._native.records()

    def to_pandas(self) -> Any:
        """``records()`` as a ``pandas.DataFrame`` (pandas comes with ommx)."""
        return _frame(self.records())

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Writes the JSON document to ``path``: a baseline for ``diff``/``check``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json())

    def top(self, n: int = 10, kind: str = "all") -> "Document":
        """``memprof top``: the ``n`` largest entities (``kind``: ``objective``,
        ``constraint``, ``removed``, ``variable``, ``named-function``, ``one-hot``,
        ``sos1`` (the constraint hints) or ``all``; OMMX 3.0 adds ``indicator``,
        ``removed-indicator``, ``removed-one-hot``, ``removed-sos1``). Ties are
        listed by id, smaller first; the objective has none (``id`` is ``None``)."""
        return Document(self._native.top(n, kind))

    def stats(self, kind: str = "all", top: int = 25) -> "Document":
        """``memprof stats``: size distributions per entity kind and family."""
        return Document(self._native.stats(kind, top))

    def advise(self, min_severity: str = "info") -> "Document":
        """``memprof advise``: what would make the instance smaller."""
        return Document(self._native.advise(min_severity))

    def explain(self, *paths: str) -> "Document":
        """``memprof explain``: how each path's bytes were computed (the rule,
        the counts, the arithmetic). Paths as ``folded()`` prints them."""
        return Document(self._native.explain(list(paths)))

    def diff(self, new: Any) -> "Diff":
        """``memprof diff SELF NEW``: ``self`` is the old side; ``new`` is a
        ``Profile`` or anything ``profile()`` takes."""
        return Diff(self, profile(new))

    def check(
        self,
        budget: Optional[Budget] = None,
        *,
        baseline: Any = None,
        budget_file: Union[str, os.PathLike, None] = None,
    ) -> "CheckResult":
        """``memprof check``: ``budget`` (see ``Budget``) or ``budget_file`` (a
        budget YAML file), and/or a ``baseline`` (a ``Profile`` or anything
        ``profile()`` takes, e.g. a saved JSON). With a baseline and no budget
        the rule is that of ``memprof check --baseline``: the total may not grow."""
        base = None if baseline is None else profile(baseline)
        outcome = self._native.check(
            budget=budget,
            budget_file=None if budget_file is None else os.fsdecode(budget_file),
            baseline=None if base is None else base._native,
        )
        for note in outcome.warnings:
            warnings.warn(f"memprof: {note}", stacklevel=2)
        return CheckResult(outcome.passed, outcome.document)

    def flamegraph(
        self,
        title: Optional[str] = None,
        inverted: bool = False,
        min_width: Optional[float] = None,
        reverse: bool = False,
    ) -> str:
        """``memprof flamegraph``: the interactive SVG, as text. ``inverted``
        draws it upside down (an icicle graph); ``reverse`` draws it leaves
        first (``--reverse``: the frames holding bytes at the root, their
        callers above)."""
        return self._native.flamegraph(
            title=title, inverted=inverted, reverse=reverse, min_width=min_width
        )

    def html(self, top: int = 100) -> str:
        """``memprof report``: one self-contained HTML page (an interactive
        flamegraph, the ``top`` largest entities, the families, the statistics
        per kind and the advice) that works offline. Its analyses read the
        instance again, once: the page is kept for the next call."""
        if top not in self._pages:
            self._pages[top] = self._native.report_html(top=top)
        return self._pages[top]

    def save_html(self, path: Union[str, os.PathLike], top: int = 100) -> None:
        """Writes :meth:`html`'s page to ``path``."""
        _write_text(path, self.html(top=top))

    def __str__(self) -> str:
        return self.tree()

    def __repr__(self) -> str:
        return f"<ommx_memprof.Profile {self.name!r}: {self.total:,} bytes>"

    def _repr_html_(self) -> str:
        # A static summary, then the page in a frame (html::notebook): what
        # a notebook shows, trusted or not. No SVG beside it: the page holds
        # the graph, and an untrusted notebook shows the summary.
        if "notebook" not in self._pages:
            self._pages["notebook"] = self._native.report_html(notebook=True)
        return self._pages["notebook"]


class Diff:
    """``memprof diff OLD NEW``; displays itself as its differential flamegraphs."""

    def __init__(self, old: Profile, new: Profile) -> None:
        self.old = old
        self.new = new

    def _render(self, format: str, **options: Any) -> str:
        return self.old._native.diff(self.new._native, format, **options)

    def table(self, top: Optional[int] = None) -> str:
        """The counts side by side, then the changed paths, largest change first."""
        return self._render("table", top=top)

    def tree(self, depth: Optional[int] = None) -> str:
        """The changed part of the tree."""
        return self._render("tree", depth=depth)

    def markdown(self, top: Optional[int] = None) -> str:
        """A pull-request comment."""
        return self._render("markdown", top=top)

    def folded(self) -> str:
        """``path OLD NEW`` lines: inferno's differential input."""
        return self._render("folded")

    def to_dict(self) -> dict:
        """Every path with old and new bytes, as ``memprof diff --format json``."""
        return json.loads(self._render("json"))

    def records(self) -> list:
        """One record per path: ``path``, ``status`` (added, removed, changed,
        unchanged), old and new bytes and leaves, ``delta`` and
        ``delta_percent``, largest change first."""
        return self.old._native.diff_records(self.new._native)

    def to_pandas(self) -> Any:
        """``records()`` as a ``pandas.DataFrame`` (pandas comes with ommx)."""
        return _frame(self.records())

    def flamegraph(self, widths: str = "new", companion: str = "the other graph") -> str:
        """The differential flamegraph (red grew, blue shrank) with frames as
        wide as the ``"new"`` bytes (added paths show) or the ``"old"`` ones
        (removed paths show)."""
        return self.old._native.diff_flamegraph(self.new._native, widths, companion)

    def html(self, top: int = 100) -> str:
        """``memprof report OLD NEW``: one self-contained HTML page with the
        differential flamegraph (growth red, shrinkage blue), the changed
        paths, and the new side's tables."""
        return self.new._native.report_html(old=self.old._native, top=top)

    def save_html(self, path: Union[str, os.PathLike], top: int = 100) -> None:
        """Writes :meth:`html`'s page to ``path``."""
        _write_text(path, self.html(top=top))

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return (
            f"<ommx_memprof.Diff {self.old.name!r} ({self.old.total:,} bytes) -> "
            f"{self.new.name!r} ({self.new.total:,} bytes)>"
        )

    def _repr_html_(self) -> str:
        # As a Profile's (see Profile._repr_html_).
        return self.new._native.report_html(old=self.old._native, notebook=True)


class Document:
    """What ``top``, ``stats``, ``advise``, ``explain`` or ``check`` found: its
    rows as data (``records()``, ``to_pandas()``), its whole JSON document
    (``to_dict()``), and ``str()``, the table the command prints."""

    def __init__(self, native: Any) -> None:
        self._native = native

    @property
    def text(self) -> str:
        """The table the command prints."""
        return self._native.text

    @property
    def tables(self) -> list:
        """The names of the document's tables of rows, the default first."""
        return list(self._native.table_names)

    def to_dict(self) -> dict:
        return json.loads(self._native.json)

    def records(self, table: Optional[str] = None) -> list:
        """The document's rows, one dict each, nested fields flattened with
        ``.`` (``bytes.p50``, ``largest.name``). ``table`` picks one when the
        document has several (``stats``: ``"kinds"``, the default, or
        ``"families"``)."""
        tables = self.tables
        if not tables:
            raise ValueError("this document has no table of rows")
        if table is None:
            table = tables[0]
        if table not in tables:
            raise ValueError(f"table must be one of {tables}, not {table!r}")
        return self._native.records(table)

    def to_pandas(self, table: Optional[str] = None) -> Any:
        """``records(table)`` as a ``pandas.DataFrame`` (pandas comes with ommx)."""
        return _frame(self.records(table))

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(self.text)}</pre>"


def _frame(records: list) -> Any:
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - pandas comes with ommx
        raise ImportError("to_pandas() needs pandas (pip install pandas)") from e
    frame = pandas.DataFrame.from_records(records)
    # Whole numbers with gaps (the objective's id, a variable's terms) stay
    # whole: pandas would make them floats, which lose ids past 2**53.
    for column in frame.columns:
        values = [r.get(column) for r in records]
        numbers = [v for v in values if v is not None]
        if len(numbers) in (0, len(values)):
            continue
        if all(isinstance(v, int) and not isinstance(v, bool) for v in numbers):
            dtype = "UInt64" if all(v >= 0 for v in numbers) else "Int64"
            frame[column] = pandas.array(values, dtype=dtype)
    return frame


class CheckResult(Document):
    """The verdict of ``check``: true when every budget holds; ``str()`` is
    the check table."""

    def __init__(self, passed: bool, native: Any) -> None:
        super().__init__(native)
        self.passed = passed

    def __bool__(self) -> bool:
        return self.passed


def assert_within(
    instance: Any,
    budget: Optional[Budget] = None,
    *,
    baseline: Any = None,
    budget_file: Union[str, os.PathLike, None] = None,
    **profile_options: Any,
) -> Profile:
    """Asserts that ``instance`` (anything ``profile()`` takes) stays within
    ``budget`` (``"64 MiB"``, or ``{"Instance.constraints": "32 MiB"}``),
    ``budget_file`` and/or ``baseline``; raises ``AssertionError`` whose
    message is the check table. Returns the profile."""
    __tracebackhide__ = True  # pytest: show the caller's line, not this one
    p = profile(instance, **profile_options)
    result = p.check(budget, baseline=baseline, budget_file=budget_file)
    if not result.passed:
        raise AssertionError(result.text)
    return p


def _write_text(path: Union[str, os.PathLike], text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def __getattr__(name: str) -> Any:
    # `Report`, the name `Document` had before 0.2: still importable, with a
    # warning, so that code written against it keeps working for a release.
    if name == "Report":
        warnings.warn(
            "ommx_memprof.Report is now ommx_memprof.Document",
            DeprecationWarning,
            stacklevel=2,
        )
        return Document
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
