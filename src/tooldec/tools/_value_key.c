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
 * never depends on whether this extension was built. Nothing is cached; the GIL is held.
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
    const char *data;
    Py_ssize_t len;
    Py_ssize_t index;
} Piece;

static int by_bytes(const void *a, const void *b) {  /* bytes order, as Python sorts bytes; ties by index */
    const Piece *x = a, *y = b;
    int c = memcmp(x->data, y->data, x->len < y->len ? x->len : y->len);
    if (c) return c;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The buffer list_key writes into, kept between calls (up to KEPT_MAX bytes): a fresh megabyte
 * for every request is a realloc chain and a page fault per 4 kB. Safe without a lock: the GIL
 * is held from the start of list_key to its end and nothing in it runs Python code. */
static Buf kept = {NULL, 0, 0};
#define KEPT_MAX (2 << 20)  /* a list of ~2,000 tool dicts; larger lists allocate their own */

/* (the items' keys sorted and joined, the item of each sorted key, the end of each in the join),
 * or None if an item is not a dict this writer writes: one pass and one sort, no bytes per item. */
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
    Piece *pieces = PyMem_Malloc((n ? n : 1) * sizeof *pieces);
    PyObject *out = NULL, *data = NULL, *order = NULL, *ends = NULL;
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
    for (Py_ssize_t i = 0; i < n; i++) {
        pieces[i].data = b.data + starts[i];
        pieces[i].len = starts[i + 1] - starts[i];
        pieces[i].index = i;
    }
    qsort(pieces, n, sizeof *pieces, by_bytes);
    data = PyBytes_FromStringAndSize(NULL, b.len);
    order = PyList_New(n);
    ends = PyList_New(n);
    if (!data || !order || !ends) goto done;
    char *to = PyBytes_AS_STRING(data);
    Py_ssize_t at = 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        memcpy(to + at, pieces[j].data, pieces[j].len);
        at += pieces[j].len;
        PyObject *index = PyLong_FromSsize_t(pieces[j].index), *end = PyLong_FromSsize_t(at);
        if (!index || !end) { Py_XDECREF(index); Py_XDECREF(end); goto done; }
        PyList_SET_ITEM(order, j, index);
        PyList_SET_ITEM(ends, j, end);
    }
    out = PyTuple_Pack(3, data, order, ends);
done:
    Py_XDECREF(data);
    Py_XDECREF(order);
    Py_XDECREF(ends);
    if (b.data && b.cap <= KEPT_MAX && !kept.data) kept = b;
    else PyMem_Free(b.data);
    PyMem_Free(starts);
    PyMem_Free(pieces);
    return out;
}

static PyMethodDef methods[] = {
    {"dumps", dumps, METH_O,
     "dumps(value) -> bytes | None: marshal.dumps(value, 2) for JSON values, None for anything else."},
    {"list_key", list_key, METH_O,
     "list_key(values) -> (bytes, list[int], list[int]) | None: the dicts' dumps sorted and joined,"
     " the item of each, the end of each in the join; None if an item is not written."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_value_key", NULL, -1, methods};

PyMODINIT_FUNC PyInit__value_key(void) { return PyModule_Create(&module); }
