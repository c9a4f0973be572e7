"""The run tables' Arrow columns, built without `pyarrow.array` (harness.run.arrow): the same
arrays pyarrow builds, or pyarrow's own result and error for what the direct path does not take,
and no pandas imported on the way."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from harness.run import arrow
from harness.run.tables import SCHEMAS

ROOT = Path(__file__).resolve().parents[2]

UTC = pa.timestamp("us", tz="UTC")
CASES = [
    (pa.string(), ["a", None, "héllo", "", "日本", "x" * 1000]),
    (pa.string(), []),
    (pa.string(), [None, None]),
    (pa.list_(pa.string()), [["a", "b"], None, [], ("c",), ["é", None]]),
    (pa.list_(pa.string()), [[]]),
    (pa.int32(), [1, None, -5, 2**31 - 1, -(2**31)]),
    (pa.float64(), [1.5, None, float("nan"), float("inf"), 3, -0.0, np.float64(2.5)]),
    (pa.bool_(), [True, False, None] * 5),
    (UTC, [datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc), None,
           datetime(1960, 1, 1, 0, 0, 0, 5, tzinfo=timezone(timedelta(hours=5))), datetime(2020, 5, 5, 1, 2, 3, 456789)]),
    (pa.int32(), np.array([1, 2, 3], dtype=np.int64)),
    (pa.int32(), np.array([], dtype=np.int64)),
    (pa.float64(), np.array([1.0, np.nan, -0.0])),
    (pa.float64(), np.array([1.25, 2], dtype=np.float32)),
    (pa.bool_(), np.array([True, False, True] * 7)),
    (pa.string(), np.array(["a", None], dtype=object)),
]


def same(a: pa.Array, b: pa.Array) -> bool:
    """Equal arrays (NaN equal to NaN, -0.0 told from 0.0)."""
    return a.type == b.type and a.null_count == b.null_count and repr(a.to_pylist()) == repr(b.to_pylist())


@pytest.mark.parametrize("typ,values", CASES)
def test_a_column_is_what_pyarrow_builds(typ, values):
    built = arrow.column(values, typ)
    built.validate(full=True)
    assert same(built, pa.array(values, type=typ))


@pytest.mark.parametrize("typ,values", [
    (pa.string(), [1]), (pa.string(), [b"bytes"]), (pa.int32(), [2**40]), (pa.int32(), [1.5]),
    (pa.int32(), np.array([2**40])), (pa.list_(pa.string()), ["ab"]), (pa.float64(), [2**60 + 1]),
    (pa.bool_(), [np.bool_(True)]), (pa.int64(), [1, 2]),
])
def test_what_the_direct_path_does_not_take_is_pyarrows_to_convert_or_refuse(typ, values):
    try:
        expected = pa.array(values, type=typ)
    except Exception as e:
        with pytest.raises(type(e)):
            arrow.column(values, typ)
    else:
        assert same(arrow.column(values, typ), expected)


def test_tables_from_rows_and_empty_tables_match_pyarrows():
    rows = [{"strategy": "tfidf", "scenario": "s", "probe_id": "p", "rank": 1, "item_id": "t1", "subject": "c",
             "session": "z", "text": "hello", "score": 0.5, "components": "{}", "source_ids": ["t1"], "included": True,
             "reason": "", "tokens": 3, "not_in_the_schema": 1},
            {"strategy": "tfidf", "rank": 2}]  # a missing key is null
    schema = SCHEMAS["candidates"]
    assert arrow.table_from_rows(rows, schema).equals(pa.Table.from_pylist(rows, schema=schema))
    for schema in SCHEMAS.values():
        assert arrow.empty_table(schema).equals(schema.empty_table())


def test_building_the_run_tables_imports_no_pandas():
    code = (
        "import sys; from datetime import datetime, timezone\n"
        "from harness.run.tables import SCHEMAS\n"
        "from harness.run.arrow import empty_table, table_from_rows\n"
        "t = table_from_rows([{'suite': 's', 'at': datetime(2026, 1, 1, tzinfo=timezone.utc), 'event_index': 1, "
        "'tags': ['a'], 'unlabelled': False}], SCHEMAS['events'])\n"
        "[empty_table(s) for s in SCHEMAS.values()]\n"
        "assert t.num_rows == 1\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"
