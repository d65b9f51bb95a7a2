"""tests/test_elementwise.py's tables exercise every ufunc gpuarr has (or
NOT_TABLED says where one is tested instead).  CPU only: it reads the
tables and gpuarr._core.ufuncs, which need no device."""
from gpuarr import _core

from test_elementwise import BINARY, NOT_TABLED, UNARY


def untested(ufuncs, tables, not_tabled):
    """What keeps `tables` (name -> dtypes and domain) and `not_tabled`
    (name -> reason) from covering the names in `ufuncs` exactly once."""
    tabled = [name for table in tables for name in table]
    problems = [f"{name}: in no table and not in NOT_TABLED" for name in sorted(ufuncs)
                if name not in tabled and name not in not_tabled]
    problems += [f"{name}: not a gpuarr ufunc" for name in sorted({*tabled, *not_tabled})
                 if name not in ufuncs]
    problems += [f"{name}: tabled twice" for name in sorted(set(tabled))
                 if tabled.count(name) > 1 or name in not_tabled]
    return problems


def test_every_ufunc_is_in_the_elementwise_tables():
    assert untested(_core.ufuncs, (BINARY, UNARY), NOT_TABLED) == []


def test_table_check_catches_missing_stale_and_doubled_names():
    ufuncs = {"add": None, "sin": None, "clip": None}
    problems = untested(ufuncs, ({"add": 0, "hypot": 0}, {"add": 0}), {"sin": "elsewhere"})
    assert problems == ["clip: in no table and not in NOT_TABLED", "hypot: not a gpuarr ufunc",
                        "add: tabled twice"]
