"""profile() of an image name: read from OMMX's local registry (the one
fixtures/registry/make.sh writes with ommx 2.9.3 and 3.0.0b7), equal to the
package's own profile; diff() and check() take names too."""

import pytest

import ommx_memprof
from conftest import REPO

REGISTRY = REPO / "fixtures" / "registry"
ROOT = REGISTRY / "root"


def expected(layout: str, stem: str, k: int, accounting: str) -> str:
    return (REGISTRY / "expected" / layout / f"{stem}.layer{k}.{accounting}.folded").read_text()


def test_an_image_of_each_layout_is_its_ommx_profile():
    multi = ommx_memprof.profile("localhost:5000/memprof/multi:v2", layer=1, registry=ROOT)
    assert multi.folded() == expected("2.9.3", "localhost_5000_memprof_multi_v2", 1, "2.9.3")
    knapsack = ommx_memprof.profile("ghcr.io/memprof/fixtures/knapsack:v3", registry=str(ROOT))
    assert knapsack.folded() == expected("3.0", "ghcr.io_memprof_fixtures_knapsack_v3", 0, "3.0")
    assert knapsack.name == "ghcr.io/memprof/fixtures/knapsack:v3"
    assert knapsack.to_dict()["input"]["registry"]["layout"] == "3.0"


def test_the_root_comes_from_ommx_s_variable_for_diff_and_check_too(monkeypatch):
    monkeypatch.setenv("OMMX_LOCAL_REGISTRY_ROOT", str(ROOT))
    p = ommx_memprof.profile("ghcr.io/memprof/fixtures/description_full:v1")
    assert p.folded() == expected("2.9.3", "ghcr.io_memprof_fixtures_description_full_v1", 0, "2.9.3")
    same = p.diff("ghcr.io/memprof/fixtures/description_full:v1")
    assert same.to_dict()["total"]["delta"] == 0
    assert p.check(baseline="ghcr.io/memprof/fixtures/description_full:v1")


def test_a_name_not_there_is_a_value_error_saying_where():
    with pytest.raises(ValueError, match=r"ghcr.io/nope/x:v1 is not in the local registry at .*searched"):
        ommx_memprof.profile("ghcr.io/nope/x:v1", registry=ROOT)
