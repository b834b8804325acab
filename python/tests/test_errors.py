"""Errors become ValueError with the line the `memprof` command prints."""

import pytest

import ommx_memprof
from conftest import ORACLE, REJECTED, run_memprof

REJECTED_FILES = sorted(REJECTED.glob("*.pb"))


def cli_error(*args) -> str:
    cli = run_memprof(*args)
    assert cli.returncode == 2
    prefix = "memprof: error: "
    assert cli.stderr.startswith(prefix) and cli.stderr.count("\n") == 1, cli.stderr
    return cli.stderr[len(prefix):-1]


@pytest.mark.parametrize("path", REJECTED_FILES, ids=lambda p: p.name)
def test_rejected_instances(path):
    with pytest.raises(ValueError) as err:
        ommx_memprof.profile(path)
    assert str(err.value) == cli_error("inspect", path)
    with pytest.raises(ValueError) as err:
        ommx_memprof.profile(path.read_bytes(), name="x.pb")
    assert str(err.value) == cli_error("inspect", path).replace(str(path), "x.pb")


def test_missing_file(tmp_path):
    missing = tmp_path / "missing.ommx"
    with pytest.raises(ValueError) as err:
        ommx_memprof.profile(missing)
    assert str(err.value) == cli_error("inspect", missing)
    assert "cannot read" in str(err.value)


def test_wrong_kind():
    with pytest.raises(ValueError, match=r"^<bytes>: not an OMMX instance or archive: the content looks like a PNG image$"):
        ommx_memprof.profile(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(ValueError, match="^<bytes>: the input is empty$"):
        ommx_memprof.profile(b"")


def test_bad_arguments(kitchen_sink):
    with pytest.raises(ValueError, match='view must be "memory" or "wire"'):
        ommx_memprof.profile(kitchen_sink, view="both")
    with pytest.raises(ValueError, match='group_by must be one of "none", "name"'):
        ommx_memprof.profile(kitchen_sink, group_by="family")
    with pytest.raises(ValueError, match="kind must be one of"):
        ommx_memprof.profile(kitchen_sink).top(kind="nope")
    with pytest.raises(TypeError, match="not int"):
        ommx_memprof.profile(42)


def test_a_baseline_has_no_entities(tmp_path, kitchen_sink):
    ommx_memprof.profile(kitchen_sink).save(tmp_path / "b.json")
    with pytest.raises(ValueError, match="looks like JSON text"):
        ommx_memprof.profile(tmp_path / "b.json").top()
