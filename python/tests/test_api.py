"""The store from Python: best on the shipped results.db, errors as exceptions, pandas."""
from __future__ import annotations

import pytest

import kforge
from conftest import REPO

STORE = dict(db=REPO / "results.db", spec_dir=REPO / "search_spaces")


def test_best_on_the_shipped_store(kforge_bin: str) -> None:
    rows = kforge.best("gemm", **STORE)
    assert rows, "the shipped store has gemm winners"
    for r in rows:
        assert r["family"] == "gemm" and r["median_us"] > 0
        assert {"M", "N", "K", "dtype", "BLOCK_M", "MMA", "shape", "config"} <= set(r)
    one = kforge.best("gemm", shape=rows[0]["shape"], **STORE)
    assert [r["config"] for r in one] == [rows[0]["config"]]
    as_dict = {k: rows[0][k] for k in ("M", "N", "K", "dtype")}
    assert kforge.best("gemm", shape=as_dict, **STORE)[0]["config"] == rows[0]["config"]


def test_best_by_energy_on_a_store_without_energy(kforge_bin: str) -> None:
    # The shipped store's records were timed without energy: by energy no shape has a winner (rows without a
    # config), and the Pareto front is empty.
    rows = kforge.best("gemm", objective="energy", **STORE)
    assert rows and all("config" not in r or r["config"] is None for r in rows)
    assert kforge.best("gemm", pareto=True, **STORE) == []
    with pytest.raises(kforge.KforgeUsageError):
        kforge.best("gemm", objective="joules", **STORE)


def test_best_loads_into_pandas(kforge_bin: str) -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(kforge.best("sdpa_fwd", **STORE))
    assert len(df) > 0 and {"median_us", "S", "D", "config"} <= set(df.columns)
    assert df["median_us"].dtype.kind == "f"


def test_cli_errors_become_exceptions(kforge_bin: str) -> None:
    with pytest.raises(kforge.KforgeError, match="unknown family 'nope'"):
        kforge.best("nope", **STORE)
    with pytest.raises(kforge.KforgeError, match="dimension 'M' needs an integer"):
        kforge.best("gemm", shape="M=x,N=1,K=1,dtype=f16", **STORE)
    with pytest.raises(kforge.KforgeUsageError) as e:  # exit 2: a bad command line
        kforge.search("gemm", strategy="serach", **STORE)
    assert e.value.returncode == 2 and "serach" in str(e.value)
    assert isinstance(e.value, ValueError)


def test_show_and_families(kforge_bin: str) -> None:
    assert any(c["family"] == "gemm" for c in kforge.show(db=STORE["db"]))
    names = [f.get("name", f.get("family")) for f in kforge.families(spec_dir=STORE["spec_dir"])]
    assert {"gemm", "sdpa_fwd"} <= set(names)


def test_results_as_kernel_tuner_records(kforge_bin: str) -> None:
    shape = kforge.best("gemm", **STORE)[0]["shape"]
    recs = kforge.results("gemm", shape, **STORE)
    assert recs and all("BLOCK_M" in r for r in recs)
    assert any(isinstance(r.get("time"), float) for r in recs)
