/* marshal.dumps(value, 2) for JSON values, compiled: the cache key of a tool dict or schema.
 *
 * Registration keys every tool dict and schema by its marshal bytes (format 2: no back-references,
 * so the bytes depend on the value only, never on which strings happen to be one object; types
 * are kept, so True, 1 and 1.0 differ; dict keys in their order). CPython's marshal writes every
 * string through the UTF-8 codec into a new bytes object: for a thousand tool dicts that is most
 * of a millisecond, the cost of a request whose tools were seen before. Here an ASCII string's
 * bytes are copied as they are (they are its UTF-8), and every other string goes through the same
 * codec call marshal makes, so the output is marshal's, byte for byte (tests compare them).
 *
 * Only exact dicts, lists, strings, ints of 32 bits, floats, booleans and None are written; for
 * anything else (tuples, big ints, subclasses, nesting deeper than marshal's limit, which is also
 * where a cycle ends) dumps() returns None and the caller asks marshal itself, so the answer
 * never depends on whether this extension was built. The GIL is held throughout and no Python
 * code runs: list_key gives a long key's sorted pieces back unjoined, its caller looks up the keys
 * a cache holds under the key's sample, and list_join compares the pieces with those (plain bytes).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_DEPTH 1000 /* below marshal's MAX_MARSHAL_STACK_DEPTH (2000): deeper is marshal's to judge */

#if PY_VERSION_HEX < 0x030B0000
#define PyFloat_Pack8 _PyFloat_Pack8
#endif

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
} Buf;

static int reserve(Buf *b, Py_ssize_t more) {
    if (b->len + more <= b->cap) return 0;
    Py_ssize_t cap = b->cap * 2;
    while (cap < b->len + more) cap *= 2;
    char *data = PyMem_Realloc(b->data, cap);
    if (!data) { PyErr_NoMemory(); return -1; }
    b->data = data;
    b->cap = cap;
    return 0;
}

static void put_u32(Buf *b, uint32_t x) {  /* little-endian, as marshal's w_long */
    unsigned char *p = (unsigned char *)b->data + b->len;
    p[0] = (unsigned char)x; p[1] = (unsigned char)(x >> 8);
    p[2] = (unsigned char)(x >> 16); p[3] = (unsigned char)(x >> 24);
    b->len += 4;
}

/* 1: written; 0: a value this writer leaves to marshal; -1: a Python error is set. */
static int put_value(Buf *b, PyObject *v, int depth);

static int write_str(Buf *b, PyObject *v) {
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(v) < 0) return -1;
#endif
    const char *data;
    Py_ssize_t n;
    PyObject *utf8 = NULL;
    if (PyUnicode_IS_ASCII(v)) {
        data = (const char *)PyUnicode_DATA(v);
        n = PyUnicode_GET_LENGTH(v);
    } else {
        utf8 = PyUnicode_AsEncodedString(v, "utf8", "surrogatepass");  /* what marshal calls */
        if (!utf8) return -1;
        data = PyBytes_AS_STRING(utf8);
        n = PyBytes_GET_SIZE(utf8);
    }
    int ok = 1;
    if (n > INT32_MAX) ok = 0;
    else if (reserve(b, 5 + n) < 0) ok = -1;
    else {
        b->data[b->len++] = 'u';
        put_u32(b, (uint32_t)n);
        memcpy(b->data + b->len, data, n);
        b->len += n;
    }
    Py_XDECREF(utf8);
    return ok;
}

static int put_value(Buf *b, PyObject *v, int depth) {
    if (depth >= MAX_DEPTH) return 0;
    if (reserve(b, 9) < 0) return -1;
    if (v == Py_None) { b->data[b->len++] = 'N'; return 1; }
    if (v == Py_False) { b->data[b->len++] = 'F'; return 1; }
    if (v == Py_True) { b->data[b->len++] = 'T'; return 1; }
    if (PyUnicode_CheckExact(v)) return write_str(b, v);
    if (PyLong_CheckExact(v)) {
        int overflow;
        long x = PyLong_AsLongAndOverflow(v, &overflow);
        if (x == -1 && PyErr_Occurred()) return -1;
        if (overflow || x < INT32_MIN || x > INT32_MAX) return 0;  /* marshal's TYPE_LONG */
        b->data[b->len++] = 'i';
        put_u32(b, (uint32_t)(int32_t)x);
        return 1;
    }
    if (PyFloat_CheckExact(v)) {
        b->data[b->len++] = 'g';
        if (PyFloat_Pack8(PyFloat_AS_DOUBLE(v), b->data + b->len, 1) < 0) return -1;
        b->len += 8;
        return 1;
    }
    if (PyList_CheckExact(v)) {
        Py_ssize_t n = PyList_GET_SIZE(v);
        if (n > INT32_MAX) return 0;
        b->data[b->len++] = '[';
        put_u32(b, (uint32_t)n);
        for (Py_ssize_t i = 0; i < n; i++) {
            if (i + 1 < n) __builtin_prefetch(PyList_GET_ITEM(v, i + 1));
            int r = put_value(b, PyList_GET_ITEM(v, i), depth + 1);
            if (r <= 0) return r;
        }
        return 1;
    }
    if (PyDict_CheckExact(v)) {
        Py_ssize_t pos = 0;
        PyObject *key, *value, *next_key, *next_value;
        b->data[b->len++] = '{';
        /* one item ahead: its key and value are fetched from memory while this item is written
         * (a request's fresh dicts lie scattered, and the walk is mostly waiting for them) */
        int more = PyDict_Next(v, &pos, &next_key, &next_value);
        while (more) {
            key = next_key;
            value = next_value;
            more = PyDict_Next(v, &pos, &next_key, &next_value);
            if (more) {
                __builtin_prefetch(next_key);
                __builtin_prefetch(next_value);
            }
            int r = put_value(b, key, depth + 1);
            if (r <= 0) return r;
            r = put_value(b, value, depth + 1);
            if (r <= 0) return r;
        }
        if (reserve(b, 1) < 0) return -1;
        b->data[b->len++] = '0';  /* TYPE_NULL ends a dict */
        return 1;
    }
    return 0;
}

static PyObject *dumps(PyObject *Py_UNUSED(self), PyObject *value) {
    Buf b = {PyMem_Malloc(1024), 0, 1024};
    if (!b.data) return PyErr_NoMemory();
    int r = put_value(&b, value, 0);
    PyObject *out = r > 0 ? PyBytes_FromStringAndSize(b.data, b.len) : NULL;
    PyMem_Free(b.data);
    if (r == 0) Py_RETURN_NONE;
    return out;
}

typedef struct {
    uint64_t hi, lo;  /* the 16 bytes after the prefix every key shares, big-endian, zero-padded */
    const char *data;
    Py_ssize_t len;
    Py_ssize_t index;
} Piece;

/* Whether x sorts before y: bytes order, as Python sorts bytes; ties by index. */
static inline int before(const Piece *x, const Piece *y) {
    if (x->hi != y->hi) return x->hi < y->hi;
    if (x->lo != y->lo) return x->lo < y->lo;
    int c = memcmp(x->data, y->data, x->len < y->len ? x->len : y->len);
    if (c) return c < 0;
    if (x->len != y->len) return x->len < y->len;
    return x->index < y->index;
}

/* A merge sort of n pieces into room for n more; returns where the sorted run ended up (qsort
 * spent most of its time calling the comparison). */
static Piece *sort_pieces(Piece *from, Piece *room, Py_ssize_t n) {
    for (Py_ssize_t width = 1; width < n; width *= 2) {
        for (Py_ssize_t lo = 0; lo < n; lo += 2 * width) {
            Py_ssize_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            Py_ssize_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) room[k++] = before(&from[j], &from[i]) ? from[j++] : from[i++];
            while (i < mid) room[k++] = from[i++];
            while (j < hi) room[k++] = from[j++];
        }
        Piece *swap = from;
        from = room;
        room = swap;
    }
    return from;
}

/* Bytes [at, at + 8) of a piece as a big-endian number, zero past its end: numbers compare as the
 * bytes do (a zero pad sorts a shorter piece first, as a prefix sorts first; ties are compared
 * whole). Tool dicts' keys all begin alike (a dict's mark, then its first key, often more), and a
 * plain memcmp reads those bytes again in every one of a sort's ~10,000 comparisons of a thousand. */
static uint64_t word_at(const Piece *p, Py_ssize_t at) {
    uint64_t w = 0;
    for (int k = 0; k < 8; k++)
        w = (w << 8) | (at + k < p->len ? (unsigned char)p->data[at + k] : 0);
    return w;
}

/* The buffer list_key writes into, kept between calls (up to KEPT_MAX bytes): a fresh megabyte
 * for every request is a realloc chain and a page fault per 4 kB. Safe without a lock: `kept` is
 * read and written only with the GIL held, and a call takes the buffer out of it for as long as
 * its pieces live (until it returns, or for a long key until its Pieces are dropped), so a call
 * made meanwhile (another thread's, between list_key and list_join) allocates its own; whichever
 * ends first with `kept` empty puts its buffer back. */
static Buf kept = {NULL, 0, 0};
#define KEPT_MAX (2 << 20)  /* a list of ~2,000 tool dicts; larger lists allocate their own */

/* What a list is filed by in toolset._ListCache: the join itself up to SAMPLE_WHOLE bytes, else
 * every SAMPLE_STEP-th byte of it (join[::64]), gathered from the sorted pieces (a strided slice
 * of the finished bytes reads a cache line per byte). */
#define SAMPLE_WHOLE 4096
#define SAMPLE_STEP 64

/* The sorted pieces written one after another at `to`. */
static void join(char *to, const Piece *sorted, Py_ssize_t n) {
    for (Py_ssize_t j = 0; j < n; to += sorted[j].len, j++) memcpy(to, sorted[j].data, sorted[j].len);
}

/* Whether the sorted pieces, joined, are `known`'s bytes (a key filed before), read piece by piece. */
static int joins_to(const Piece *sorted, Py_ssize_t n, Py_ssize_t len, PyObject *known) {
    if (!PyBytes_CheckExact(known) || PyBytes_GET_SIZE(known) != len) return 0;
    const char *at = PyBytes_AS_STRING(known);
    for (Py_ssize_t j = 0; j < n; at += sorted[j].len, j++)
        if (memcmp(at, sorted[j].data, sorted[j].len)) return 0;
    return 1;
}

/* A long key's sorted pieces, not yet joined (a capsule of this name): they point into `b`. */
#define PIECES "tooldec.tools._value_key.Pieces"
typedef struct {
    Buf b;
    Piece *pieces, *sorted;
    Py_ssize_t n;
} Pieces;

static void drop_pieces(PyObject *capsule) {
    Pieces *p = PyCapsule_GetPointer(capsule, PIECES);
    if (!p) return;
    if (p->b.cap <= KEPT_MAX && !kept.data) kept = p->b;
    else PyMem_Free(p->b.data);
    PyMem_Free(p->pieces);
    PyMem_Free(p);
}

/* (the items' keys sorted and joined, the item of each sorted key, the end of each in the join,
 * both as native int64 bytes, the join's sample), or None if an item is not a dict this writer
 * writes: one pass and one sort, no Python object per item.
 *
 * A key longer than SAMPLE_WHOLE comes unjoined, as Pieces for list_join: a list seen before is
 * then compared with the keys a cache holds under its sample where its pieces lie, with no new
 * half megabyte written. */
static PyObject *list_key(PyObject *Py_UNUSED(self), PyObject *values) {
    if (!PyList_CheckExact(values)) Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(values);
    Buf b = kept;
    kept.data = NULL;
    if (!b.data) {
        b.cap = 1 << 16;
        b.data = PyMem_Malloc(b.cap);
    }
    b.len = 0;
    Py_ssize_t *starts = PyMem_Malloc((n + 1) * sizeof *starts);
    Piece *pieces = PyMem_Malloc((n ? 2 * n : 1) * sizeof *pieces), *sorted = pieces;
    PyObject *out = NULL, *data = NULL, *order = NULL, *ends = NULL, *sample = NULL;
    if (!b.data || !starts || !pieces) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(values, i);
        if (i + 1 < n) __builtin_prefetch(PyList_GET_ITEM(values, i + 1));
        starts[i] = b.len;
        int r = PyDict_CheckExact(item) ? put_value(&b, item, 0) : 0;
        if (r < 0) goto done;
        if (r == 0) { out = Py_None; Py_INCREF(out); goto done; }
    }
    starts[n] = b.len;
    Py_ssize_t shared = n ? starts[1] : 0;  /* the prefix every piece shares */
    for (Py_ssize_t i = 0; i < n; i++) {
        pieces[i].data = b.data + starts[i];
        pieces[i].len = starts[i + 1] - starts[i];
        pieces[i].index = i;
        Py_ssize_t k = 0, most = pieces[i].len < shared ? pieces[i].len : shared;
        while (k < most && pieces[i].data[k] == b.data[k]) k++;
        shared = k;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        pieces[i].hi = word_at(&pieces[i], shared);
        pieces[i].lo = word_at(&pieces[i], shared + 8);
    }
    sorted = sort_pieces(pieces, pieces + n, n);
    order = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    ends = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    int whole = b.len <= SAMPLE_WHOLE;
    if (whole) {
        data = PyBytes_FromStringAndSize(NULL, b.len);
        if (data) join(PyBytes_AS_STRING(data), sorted, n);
        sample = data;
        Py_XINCREF(sample);
    } else {
        sample = PyBytes_FromStringAndSize(NULL, (b.len + SAMPLE_STEP - 1) / SAMPLE_STEP);
    }
    if (!order || !ends || !sample) goto done;
    char *sample_at = PyBytes_AS_STRING(sample);
    char *order_at = PyBytes_AS_STRING(order), *end_at = PyBytes_AS_STRING(ends);
    Py_ssize_t at = 0, next = 0;  /* next: the next sampled offset in the join */
    for (Py_ssize_t j = 0; j < n; j++) {
        for (; !whole && next < at + sorted[j].len; next += SAMPLE_STEP)
            sample_at[next / SAMPLE_STEP] = sorted[j].data[next - at];
        at += sorted[j].len;
        int64_t index = sorted[j].index, end = at;
        memcpy(order_at + j * sizeof index, &index, sizeof index);
        memcpy(end_at + j * sizeof end, &end, sizeof end);
    }
    if (!whole) {  /* the pieces, with the buffer they lie in, go to the capsule */
        Pieces *p = PyMem_Malloc(sizeof *p);
        if (!p) { PyErr_NoMemory(); goto done; }
        *p = (Pieces){b, pieces, sorted, n};
        data = PyCapsule_New(p, PIECES, drop_pieces);
        if (!data) { PyMem_Free(p); goto done; }
        b.data = NULL;
        pieces = NULL;
    }
    out = PyTuple_Pack(4, data, order, ends, sample);
done:
    Py_XDECREF(sample);
    Py_XDECREF(data);
    Py_XDECREF(order);
    Py_XDECREF(ends);
    if (b.data && b.cap <= KEPT_MAX && !kept.data) kept = b;
    else PyMem_Free(b.data);
    PyMem_Free(starts);
    PyMem_Free(pieces);
    return out;
}

/* The join of list_key's Pieces: the first of `filed` (a list or tuple of bytes) equal to it, or
 * a new bytes object. */
static PyObject *list_join(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *capsule, *filed;
    if (!PyArg_ParseTuple(args, "OO:list_join", &capsule, &filed)) return NULL;
    Pieces *p = PyCapsule_GetPointer(capsule, PIECES);
    if (!p) return NULL;
    if (!PyList_CheckExact(filed) && !PyTuple_CheckExact(filed)) {
        PyErr_SetString(PyExc_TypeError, "list_join: filed must be a list or tuple of bytes");
        return NULL;
    }
    Py_ssize_t len = p->b.len;
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(filed); k++) {
        PyObject *known = PySequence_Fast_GET_ITEM(filed, k);
        if (joins_to(p->sorted, p->n, len, known)) { Py_INCREF(known); return known; }
    }
    PyObject *data = PyBytes_FromStringAndSize(NULL, len);
    if (data) join(PyBytes_AS_STRING(data), p->sorted, p->n);
    return data;
}

static PyMethodDef methods[] = {
    {"dumps", dumps, METH_O,
     "dumps(value) -> bytes | None: marshal.dumps(value, 2) for JSON values, None for anything else."},
    {"list_key", list_key, METH_O,
     "list_key(values) -> (bytes | Pieces, bytes, bytes, bytes) | None: the dicts' dumps sorted and"
     " joined (Pieces for list_join past 4 kB), the item of each and the end of each in the join"
     " (native int64s), the join's sample; None if an item is not written."},
    {"list_join", list_join, METH_VARARGS,
     "list_join(pieces, filed) -> bytes: list_key's pieces joined, or the first of filed equal to them."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_value_key", NULL, -1, methods};

PyMODINIT_FUNC PyInit__value_key(void) { return PyModule_Create(&module); }
