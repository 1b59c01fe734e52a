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
            int r = put_value(b, PyList_GET_ITEM(v, i), depth + 1);
            if (r <= 0) return r;
        }
        return 1;
    }
    if (PyDict_CheckExact(v)) {
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        b->data[b->len++] = '{';
        while (PyDict_Next(v, &pos, &key, &value)) {
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

static PyMethodDef methods[] = {
    {"dumps", dumps, METH_O,
     "dumps(value) -> bytes | None: marshal.dumps(value, 2) for JSON values, None for anything else."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_value_key", NULL, -1, methods};

PyMODINIT_FUNC PyInit__value_key(void) { return PyModule_Create(&module); }
