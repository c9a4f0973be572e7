"""Arrow columns built from Python values without `pyarrow.array`.

`pyarrow.array` (and `Table.from_pylist` / `from_pydict`, which call it) asks pandas whether the
values are a pandas object before converting anything, and that first question imports pandas:
a fifth of a second of every run's start, for tables that never meet a DataFrame. The run tables
use six column types; `column` builds those from the Arrow buffers directly (strings encoded and
joined, offsets and validity from NumPy), with the same values and nulls `pyarrow.array` gives.
Anything else (another type, a value of an unexpected kind, a string column past Arrow's 2 GiB
offsets) goes through `pyarrow.array` itself, so its result or its error is pyarrow's own.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from itertools import repeat
from operator import is_not
from typing import Any, Mapping, Sequence

import numpy as np
import pyarrow as pa

_INT32 = (np.iinfo(np.int32).min, np.iinfo(np.int32).max)
_OFFSET_MAX = np.iinfo(np.int32).max
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_EPOCH_NAIVE = datetime(1970, 1, 1)
_US = timedelta(microseconds=1)


class _Unsupported(Exception):
    """The values are not ones the direct path builds: `pyarrow.array` converts them."""


def table(columns: Mapping[str, Any], schema: pa.Schema) -> pa.Table:
    """`pa.Table.from_pydict(columns, schema=schema)`, column by column through `column`."""
    return pa.Table.from_arrays([column(columns[f.name], f.type) for f in schema], schema=schema)


def table_from_rows(rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """`pa.Table.from_pylist(rows, schema=schema)` (a key a row lacks is null), through `column`."""
    if all(type(r) is dict for r in rows):  # each column read in C: `dict.get` mapped over the rows
        return table({f.name: list(map(dict.get, rows, repeat(f.name))) for f in schema}, schema)
    return table({f.name: [r.get(f.name) for r in rows] for f in schema}, schema)


def empty_table(schema: pa.Schema) -> pa.Table:
    """`schema.empty_table()` (which builds its columns with `pyarrow.array`, importing pandas)."""
    return table({f.name: [] for f in schema}, schema)


def column(values: Any, typ: pa.DataType) -> pa.Array:
    """`pa.array(values, type=typ)`, built without importing pandas for the run tables' types."""
    try:
        return _build(values, typ)
    except _Unsupported:
        return pa.array(values, type=typ)


def _build(values: Any, typ: pa.DataType) -> pa.Array:
    if isinstance(values, np.ndarray):
        return _from_ndarray(values, typ)
    if not isinstance(values, list):
        values = list(values)
    if pa.types.is_string(typ):
        return _string_array(values)
    if pa.types.is_list(typ) and pa.types.is_string(typ.value_type):
        return _string_lists(values, typ)
    if typ == pa.int32():
        return _int32(values)
    if typ == pa.float64():
        return _fixed(values, typ, np.float64, {float}, lambda v: isinstance(v, float) or (type(v) is int and abs(v) <= 2**53))
    if typ == pa.bool_():
        return _fixed(values, typ, np.bool_, {bool}, lambda v: type(v) is bool)
    if pa.types.is_timestamp(typ) and typ.unit == "us":
        return _timestamps(values, typ)
    raise _Unsupported


_NONE = type(None)


def _validity(values: list, nulls: int) -> pa.Buffer | None:
    if not nulls:
        return None
    valid = np.array(list(map(is_not, values, repeat(None))), dtype=np.bool_)
    return pa.py_buffer(np.packbits(valid, bitorder="little"))


def _offsets(lengths: np.ndarray) -> pa.Buffer:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] > _OFFSET_MAX:  # pyarrow splits such a column into chunks
        raise _Unsupported
    return pa.py_buffer(offsets.astype(np.int32))


def _string_array(values: list) -> pa.Array:
    kinds = set(map(type, values))
    if not kinds <= {str, _NONE}:  # a subclass of str, bytes, a number: pyarrow's own conversion
        raise _Unsupported
    nulls = values.count(None) if _NONE in kinds else 0
    texts = values if not nulls else ["" if v is None else v for v in values]
    joined = "".join(texts)
    if joined.isascii():  # one byte per character: the lengths are the strings' own
        data = joined.encode("ascii")
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    else:
        try:
            encoded = list(map(str.encode, texts))
        except UnicodeEncodeError:  # a lone surrogate: pyarrow says what it makes of it
            raise _Unsupported from None
        data = b"".join(encoded)
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    buffers = [_validity(values, nulls), _offsets(lengths), pa.py_buffer(data)]
    return pa.Array.from_buffers(pa.string(), len(values), buffers, null_count=nulls)


def _string_lists(values: list, typ: pa.DataType) -> pa.Array:
    kinds = set(map(type, values))
    if not kinds <= {list, tuple, _NONE}:
        raise _Unsupported
    nulls = values.count(None) if _NONE in kinds else 0
    present = values if not nulls else [() if v is None else v for v in values]
    flat = [x for v in present for x in v]
    child = _string_array(flat)
    lengths = np.fromiter(map(len, present), dtype=np.int64, count=len(present))
    return pa.Array.from_buffers(typ, len(values), [_validity(values, nulls), _offsets(lengths)], null_count=nulls,
                                 children=[child])


def _fixed(values: list, typ: pa.DataType, dtype: type, kinds: set, ok) -> pa.Array:
    """`kinds`: the value types taken as they are; any other value must pass `ok` (else pyarrow converts)."""
    present = set(map(type, values))
    nulls = values.count(None) if _NONE in present else 0
    if not present <= kinds | {_NONE} and not all(v is None or ok(v) for v in values):
        raise _Unsupported
    data = np.array(values if not nulls else [0 if v is None else v for v in values], dtype=dtype)
    return _from_numpy(data, typ, _validity(values, nulls), nulls)


def _int32(values: list) -> pa.Array:
    present = set(map(type, values))
    if not present <= {int, _NONE}:  # bool, a float, a NumPy integer: pyarrow's own conversion
        raise _Unsupported
    nulls = values.count(None) if _NONE in present else 0
    try:
        data = np.array(values if not nulls else [0 if v is None else v for v in values], dtype=np.int64)
    except OverflowError:
        raise _Unsupported from None
    if len(data) and (data.min() < _INT32[0] or data.max() > _INT32[1]):
        raise _Unsupported  # pyarrow says it does not fit
    return _from_numpy(data.astype(np.int32), pa.int32(), _validity(values, nulls), nulls)


def _from_numpy(data: np.ndarray, typ: pa.DataType, validity: pa.Buffer | None = None, nulls: int = 0) -> pa.Array:
    if data.dtype == np.bool_:
        buf = pa.py_buffer(np.packbits(data, bitorder="little"))
    else:
        buf = pa.py_buffer(np.ascontiguousarray(data))
    return pa.Array.from_buffers(typ, len(data), [validity, buf], null_count=nulls)


def _from_ndarray(values: np.ndarray, typ: pa.DataType) -> pa.Array:
    if values.ndim != 1:
        raise _Unsupported
    kind = values.dtype.kind
    if typ == pa.int32() and kind in "iu":
        if len(values) and (values.min() < _INT32[0] or values.max() > _INT32[1]):
            raise _Unsupported  # pyarrow's safe cast says why
        return _from_numpy(values.astype(np.int32), typ)
    if typ == pa.float64() and kind == "f":
        return _from_numpy(values.astype(np.float64), typ)
    if typ == pa.bool_() and kind == "b":
        return _from_numpy(values, typ)
    if kind == "O":
        return _build(values.tolist(), typ)
    raise _Unsupported


def _timestamps(values: list, typ: pa.DataType) -> pa.Array:
    if not all(v is None or type(v) is datetime for v in values):
        raise _Unsupported
    nulls = values.count(None)
    # an aware time is its UTC instant, a naive one is read as UTC: what pyarrow stores
    micros = np.fromiter(
        (0 if v is None else (v - (_EPOCH_NAIVE if v.tzinfo is None else _EPOCH)) // _US for v in values),
        dtype=np.int64, count=len(values),
    )
    return _from_numpy(micros, typ, _validity(values, nulls), nulls)


__all__ = ["column", "empty_table", "table", "table_from_rows"]
