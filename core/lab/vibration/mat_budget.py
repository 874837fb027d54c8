"""What a MATLAB .mat file costs to read, counted before scipy.io reads any of it (`check_mat_budget`).

A v5 .mat is a 128-byte text header, then tagged data elements; a miCOMPRESSED element is a zlib stream that
can inflate a thousandfold, and scipy.io (whosmat too) inflates it whole. Besides the bytes, scipy allocates
from declared sizes alone (an object per element of a cell or struct array, text for a char array, complex
temporaries), compares every pair of a struct's field names, recurses in C through nested arrays (a deep nest
crashes the process) and reads through a null pointer for a data type it does not know. So the check walks the
elements exactly as scipy.io.matlab reads them, inflating in bounded chunks, adds what each one allocates, and
stops the moment the total passes the budget. A structure scipy would read differently from this walk is
refused as damaged, so nothing scipy reads is left uncounted. MATLAB v4 files (no text header) are uncompressed:
they count their size, their variables, and their complex and text values.
"""

from __future__ import annotations

import struct
import zlib
from math import prod
from typing import NamedTuple

from core import limits
from core.lab.vibration.types import DataError
from core.limits import BudgetExceeded
from core.safe_text import shown

HEADER_BYTES = 128
CHUNK_BYTES = 1 << 16  # the most inflated output held at once, and the compressed input fed per step

# What scipy.io.loadmat allocates beyond the bytes it reads, per unit, measured with tracemalloc (scipy 1.17, 200,000
# elements, both the squeezed mat_struct reading of matlab.py and the record reading of cwru.py; the largest kept).
VARIABLE_BYTES = 288  # each variable: its array object, name and entry in the dict loadmat returns (271 measured)
CELL_ELEMENT_BYTES = 144  # its slot in the object array, and the array scipy makes of it (121 to 137 measured)
STRUCT_ELEMENT_BYTES = 160  # its slot, and the mat_struct with its __dict__ (152 measured)
FIELD_VALUE_BYTES = 144  # each field of each element: its slot or dict entry, and the array it holds (113 to 129)
CHAR_BYTES = 12  # per character: the decoded text, the U1 array, and the strings made of its rows (5 when empty)
COMPLEX_VALUE_BYTES = 32  # per stored value of a complex array: the complex128 result and a temporary
# scipy compares each field name with every earlier one (a C strcmp each, quadratic in the count): each pair is
# charged one byte, so the names of any struct within the budget are compared in a fraction of a second.
FIELD_PAIR_BYTES = 1

_MATRIX, _COMPRESSED = 14, 15
# The data types scipy reads (their item sizes); for any other code it dereferences a null dtype and crashes.
_ITEMSIZE = {1: 1, 2: 1, 3: 2, 4: 2, 5: 4, 6: 4, 7: 4, 9: 8, 12: 8, 13: 8, 16: 1, 17: 2, 18: 4}
_INT32S, _STRINGS = (5, 6), (1, 16)  # miINT32 / miUINT32; miINT8 / miUTF8
_CELL, _STRUCT, _OBJECT, _CHAR, _SPARSE, _FUNCTION, _OPAQUE = 1, 2, 3, 4, 5, 16, 17
_NUMERIC = range(6, 16)  # mxDOUBLE_CLASS .. mxUINT64_CLASS
_V4_ITEMSIZE = {0: 8, 1: 4, 2: 4, 3: 2, 4: 2, 5: 1}  # MOPT precision digit: double, single, int32, ...


class MatBudgetExceeded(BudgetExceeded, DataError):
    """A .mat file past a budget: a BudgetExceeded, and a DataError, so every caller that shows a reader's
    DataError as one line shows this one too."""


def check_mat_budget(raw: bytes, name: str, limit: int = limits.MAX_MAT_DECOMPRESSED_BYTES) -> int:
    """The bytes the .mat file `raw` (named `name` in messages) takes to read: its size once inflated, plus what
    scipy allocates per variable and from declared sizes. MatBudgetExceeded (one line, naming the file and `limit`
    in MB) as soon as the count passes `limit`; DataError (one line) for a damaged or unreadable structure."""
    meter = _Meter(name, limit)
    if len(raw) < 20:  # scipy reads 20 bytes to tell the version
        raise meter.damaged("it is too short to be a MATLAB file")
    if not any(raw[:20]):
        raise meter.damaged("its header is all zeros")
    if 0 in raw[:4]:  # scipy's test for v4: no text header, a zero byte in the first word
        _walk_v4(raw, meter)
        return meter.total
    if len(raw) < HEADER_BYTES:
        raise meter.damaged("it is too short for a MATLAB header")
    major = raw[124 + (raw[126] == ord("I"))]  # scipy's reading of the version word, in either byte order
    if major == 2:
        raise DataError(f"{meter.name} is a MATLAB v7.3 (HDF5) file, which this app does not read; save it with '-v7'.")
    if major != 1:
        raise meter.damaged("its header names no MATLAB version this app reads")
    _walk_v5(raw, meter)
    return meter.total


class _Meter:
    """The running count, refused the moment it passes the limit."""

    def __init__(self, name: str, limit: int) -> None:
        self.name, self.limit, self.total = shown(name), limit, 0

    def add(self, cost: int) -> None:
        self.total += cost
        if self.total > self.limit:
            raise MatBudgetExceeded(
                f"{self.name} expands to more than {self.limit / 1e6:,.0f} MB when read, over the limit for one "
                "MATLAB file; save fewer or shorter variables, or split the recording into several files."
            )

    def too_deep(self) -> MatBudgetExceeded:
        return MatBudgetExceeded(
            f"{self.name} nests cells or structs more than {limits.MAX_MAT_NESTING} levels deep, over the limit for "
            "one MATLAB file; save the signal as a plain numeric vector."
        )

    def damaged(self, why: str) -> DataError:
        return DataError(f"{self.name} is not a MATLAB file this app can read: {why}.")


# --- byte sources: a plain slice of the file, or one compressed element inflated chunk by chunk -------------


class _Plain:
    def __init__(self, view: memoryview, meter: _Meter) -> None:
        self.view, self.meter, self.pos = view, meter, 0

    def read(self, n: int) -> bytes:
        self._advance(n)
        return bytes(self.view[self.pos - n : self.pos])

    def skip(self, n: int) -> None:
        self._advance(n)

    def _advance(self, n: int) -> None:
        if self.pos + n > len(self.view):
            raise self.meter.damaged("it ends inside a variable")
        self.pos += n


class _Inflating:
    """A zlib stream read forwards; at most CHUNK_BYTES of its output exist at a time, each counted as made."""

    def __init__(self, payload: memoryview, meter: _Meter) -> None:
        self.meter, self.pos = meter, 0
        self._zlib = zlib.decompressobj()
        self._input, self._fed = payload, 0
        self._chunk, self._at = b"", 0

    def read(self, n: int) -> bytes:
        parts = []
        while n:
            part = self._take(n)
            parts.append(part)
            n -= len(part)
        return b"".join(parts)

    def skip(self, n: int) -> None:
        while n:
            n -= len(self._take(n))

    def drain(self) -> None:
        """Inflate (and count) the rest of the stream; scipy checks a compressed element to its end."""
        self._chunk, self._at = b"", 0
        while self._fill():
            self._chunk = b""
        if not self._zlib.eof:
            raise self.meter.damaged("a compressed variable is cut short")

    def _take(self, n: int) -> bytes:
        if self._at == len(self._chunk) and not self._fill():
            raise self.meter.damaged("a compressed variable ends inside its data")
        part = self._chunk[self._at : self._at + n]
        self._at += len(part)
        self.pos += len(part)
        return part

    def _fill(self) -> bool:
        """The next chunk of output in self._chunk; False at the end of the stream."""
        while not self._zlib.eof:
            data = self._zlib.unconsumed_tail
            if not data and self._fed < len(self._input):
                data = self._input[self._fed : self._fed + CHUNK_BYTES]
                self._fed += len(data)
            try:
                out = self._zlib.decompress(data, CHUNK_BYTES)
            except zlib.error:
                raise self.meter.damaged("a compressed variable is not a valid zlib stream") from None
            if out:
                self.meter.add(len(out))
                self._chunk, self._at = out, 0
                return True
            if not data:
                return False  # input used up, nothing pending: the stream is cut short
        return False


# --- v5 --------------------------------------------------------------------------------------------------------


def _walk_v5(raw: bytes, meter: _Meter) -> None:
    order = "<" if raw[126:128] == b"IM" else ">"  # scipy's rule: anything but "IM" is big-endian
    meter.add(HEADER_BYTES)
    view, pos = memoryview(raw), HEADER_BYTES
    while pos < len(raw):
        if len(raw) - pos < 8:
            raise meter.damaged("it ends inside a variable's tag")
        kind, size = struct.unpack_from(order + "II", raw, pos)
        end = pos + 8 + size
        if size == 0 or end > len(raw):
            raise meter.damaged("a variable's size is zero or runs past the end of the file")
        meter.add(8 + VARIABLE_BYTES)
        if kind == _COMPRESSED:
            source = _Inflating(view[pos + 8 : end], meter)
            inner, inner_size = struct.unpack(order + "II", source.read(8))
            if inner != _MATRIX:
                raise meter.damaged("a compressed element holds no variable")
            _Walk(source, order, meter).matrix(inner_size, depth=1, top=True)
            source.drain()
        elif kind == _MATRIX:
            meter.add(size)
            _Walk(_Plain(view[pos + 8 : end], meter), order, meter).matrix(size, depth=1, top=True)
        else:
            raise meter.damaged(f"an element of type {kind} where a variable should be")
        pos = end


class _Walk:
    """One variable's array and the arrays nested in it, sub-element by sub-element, in scipy's reading order."""

    def __init__(self, source: _Plain | _Inflating, order: str, meter: _Meter) -> None:
        self.source, self.order, self.meter = source, order, meter

    def matrix(self, size: int, depth: int, top: bool = False) -> None:
        """The miMATRIX of `size` bytes whose tag was just read. scipy reads a nested empty one as [] but
        reads a header for a top-level one of any size, so only a nested one may be empty."""
        if size == 0 and not top:
            return
        if depth > limits.MAX_MAT_NESTING:
            raise self.meter.too_deep()
        end = self.source.pos + size
        if size < 16:
            raise self.meter.damaged("an array is too short for its header")
        flags = struct.unpack(self.order + "I", self.source.read(16)[8:12])[0]  # scipy skips the flags' tag
        kind, is_complex = flags & 0xFF, bool(flags >> 11 & 1)
        if kind == _OPAQUE:
            self._opaque(end, depth)
            return
        if kind not in (_CELL, _STRUCT, _OBJECT, _CHAR, _SPARSE, _FUNCTION, *_NUMERIC):
            raise self.meter.damaged(f"an array of unknown class {kind}")
        dims = self._ints(end, "its dimensions", max_bytes=128)
        if len(dims) < 2:  # MATLAB writes two or more; scipy crashes turning a char array of none into text
            raise self.meter.damaged("an array has fewer than two dimensions")
        count = prod(dims)
        self._string(end)  # the array's name
        arrays, data = self._declared_contents(kind, is_complex, count, end)
        self._data_elements(data, kind, is_complex, end)
        self._nested_arrays(arrays, depth, end)
        if self.source.pos != end:
            raise self.meter.damaged("an array's size does not match its contents")

    def _declared_contents(self, kind: int, is_complex: bool, count: int, end: int) -> tuple[int, int]:
        """Charge what scipy allocates for an array of `count` elements of class `kind`; the number of nested
        arrays and of data elements that follow."""
        if kind in (_STRUCT, _OBJECT):
            return self._struct_fields(kind, count, end), 0
        if kind == _CELL:
            self.meter.add(count * CELL_ELEMENT_BYTES)
            return count, 0
        if kind == _FUNCTION:
            return 1, 0
        if kind == _CHAR:
            self.meter.add(count * CHAR_BYTES)
            return 0, 1
        # numeric: the real part (and the imaginary); sparse: row indices and column starts before them
        return 0, (3 if kind == _SPARSE else 1) + is_complex

    def _struct_fields(self, kind: int, count: int, end: int) -> int:
        """Read a struct's (or object's) field names and charge its elements and their fields; the number of
        nested arrays: one per field of each element."""
        if kind == _OBJECT:
            self._string(end)  # the class name
        (name_length,) = self._ints(end, "its field name length", max_bytes=4, exactly=1)
        if name_length == 0:
            raise self.meter.damaged("a struct's field name length is zero")
        fields = self._string(end) // name_length
        self.meter.add(fields * (fields - 1) // 2 * FIELD_PAIR_BYTES)
        self.meter.add(count * (STRUCT_ELEMENT_BYTES + fields * FIELD_VALUE_BYTES))
        return count * fields

    def _data_elements(self, data: int, kind: int, is_complex: bool, end: int) -> None:
        """Walk `data` data elements, charging the complex values scipy builds from a complex numeric one."""
        for _ in range(data):
            element = self._tag(end)
            if element.kind == _MATRIX:
                raise self.meter.damaged("an array holds another array where its data should be")
            if is_complex and kind != _CHAR:
                self.meter.add(element.size // _ITEMSIZE[element.kind] * COMPLEX_VALUE_BYTES)

    def _nested_arrays(self, arrays: int, depth: int, end: int) -> None:
        """Walk the `arrays` arrays a cell, struct or function handle holds, one level deeper."""
        for _ in range(arrays):
            element = self._tag(end)
            if element.kind != _MATRIX:
                raise self.meter.damaged("a cell or struct holds data where an array should be")
            self.matrix(element.size, depth + 1)

    def _opaque(self, end: int, depth: int) -> None:
        """A MATLAB object (string, table, ...): scipy versions read different header strings before its one
        nested array, so any strings, then exactly one array that ends it."""
        while self.source.pos < end:
            element = self._tag(end)
            if element.kind == _MATRIX:
                self.matrix(element.size, depth + 1)
                if self.source.pos == end:
                    return
                break
            if element.kind not in (*_INT32S, *_STRINGS):
                break
        raise self.meter.damaged("a MATLAB object is not a header and one array")

    def _tag(self, end: int) -> _Element:
        """The next sub-element. Data is read only when small and skipped otherwise; a nested array leaves the
        source at its contents, for the caller to walk."""
        if self.source.pos + 8 > end:
            raise self.meter.damaged("an array ends inside an element's tag")
        tag = self.source.read(8)
        first, size = struct.unpack(self.order + "II", tag)
        if first >> 16:  # small data element: type and byte count in the first word, the data in the second
            kind, size = first & 0xFFFF, first >> 16
            if size > 4:
                raise self.meter.damaged("a small data element claims more than 4 bytes")
            data = tag[4 : 4 + size]
        elif first == _MATRIX:
            if self.source.pos + size > end:
                raise self.meter.damaged("a nested array runs past the array holding it")
            return _Element(_MATRIX, size, b"")
        else:
            kind, padded = first, size + (-size) % 8
            if self.source.pos + padded > end:
                raise self.meter.damaged("an element runs past the array holding it")
            data = self.source.read(size) if size <= 128 else b""
            self.source.skip(padded - len(data))
        if kind not in _ITEMSIZE:
            raise self.meter.damaged(f"an element of unknown data type {kind}")
        return _Element(kind, size, data)

    def _ints(self, end: int, what: str, max_bytes: int, exactly: int | None = None) -> tuple[int, ...]:
        element = self._tag(end)
        count = element.size // 4
        if element.kind not in _INT32S or element.size > max_bytes or count != (exactly or count):
            raise self.meter.damaged(f"an array's header does not give {what}")
        values = struct.unpack(f"{self.order}{count}i", element.data[: 4 * count])
        if any(value < 0 for value in values):
            raise self.meter.damaged(f"an array's header gives a negative number for {what}")
        return values

    def _string(self, end: int) -> int:
        """Skip a name-like text element; its length in bytes."""
        element = self._tag(end)
        if element.kind not in _STRINGS:
            raise self.meter.damaged("an array's name is not text")
        return element.size


class _Element(NamedTuple):
    kind: int  # the data type, or _MATRIX for a nested array
    size: int  # bytes of data (of contents, for an array)
    data: bytes  # the data when 128 bytes or fewer (never an array's)


# --- v4 --------------------------------------------------------------------------------------------------------


def _walk_v4(raw: bytes, meter: _Meter) -> None:
    """v4 variables: a 20-byte header (MOPT, rows, columns, imaginary flag, name length), the name, the data."""
    meter.add(len(raw))
    first = struct.unpack_from("<i", raw)[0]
    order = ">" if first < 0 or first > 5000 else "<"  # scipy's guess: a MOPT out of range was byte-swapped
    pos = 0
    while pos < len(raw):
        if len(raw) - pos < 20:
            raise meter.damaged("it ends inside a variable's header")
        mopt, rows, columns, imaginary, name_length = struct.unpack_from(order + "5i", raw, pos)
        precision, shape = mopt // 10 % 10, mopt % 10
        if not 0 <= mopt <= 5000 or mopt // 100 % 10 or precision not in _V4_ITEMSIZE or shape > 2:
            raise meter.damaged("a variable's type code (MOPT) is not one MATLAB v4 defines")
        if min(rows, columns, name_length) < 0:
            raise meter.damaged("a variable's header gives a negative size")
        values = rows * columns
        full_complex = imaginary == 1 and shape != 2  # a sparse matrix keeps its imaginary part in a column
        pos += 20 + name_length + values * _V4_ITEMSIZE[precision] * (2 if full_complex else 1)
        if pos > len(raw):
            raise meter.damaged("a variable runs past the end of the file")
        per_value = COMPLEX_VALUE_BYTES if full_complex else CHAR_BYTES if shape == 1 else 0
        meter.add(VARIABLE_BYTES + values * per_value)
