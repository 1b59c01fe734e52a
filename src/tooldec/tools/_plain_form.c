/* schema_plain.plain_form_cost, compiled: the normal form of a plain schema and its size.
 *
 * Registering a list of a thousand new tools spends a third of its time recognising and writing
 * plain schemas in Python (a dict, a few lookups and a recursive call per subschema). This is the
 * same walk over exact dicts, lists and strings: the same answer, key order
 * included, or None where the Python walk says "not plain" (tests compare the two on every schema
 * of the inventories and on random ones). The keyword sets, type maps and costs are the Python
 * module's own, given once by configure() as plain frozensets, dicts and ints. The two rules it
 * writes again are small and compared with Python's by the tests: a string the grammar can write
 * has no lone surrogate (schema_core.is_writable), and an enum costs its values' JSON bytes
 * (schema_size.enum_cost). It calls no Python function: a schema is read through exact dicts,
 * lists and strings (only a key of a Python class runs its own __hash__ or __eq__ on lookup, as
 * in the Python walk). The GIL is held throughout.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *READ, *READ_BUT_TYPE, *SCALARS, *BFCL_TYPES, *PLAIN_OWN;
static long long PLAIN_MEMBER, PLAIN_NO_PROPERTIES, PLAIN_ANY;
static int DEPTH = -1; /* -1: not configured */
static PyObject *S_TYPE, *S_PROPERTIES, *S_REQUIRED, *S_ITEMS, *S_ENUM, *S_OBJECT, *S_ARRAY;

static int is_ascii_str(PyObject *s) {
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(s) < 0) return -1;
#endif
    return PyUnicode_IS_ASCII(s);
}

/* Python's _writable for an exact str: no code point in 0xD800-0xDFFF (a lone surrogate, which
 * only a string of two or four bytes a code point can hold). 1, 0 or -1 (error). */
static int writable(PyObject *text) {
    int ascii = is_ascii_str(text);
    if (ascii != 0) return ascii;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (kind == PyUnicode_1BYTE_KIND) return 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c >= 0xD800 && c <= 0xDFFF) return 0;
    }
    return 1;
}

/* len(json.dumps(text, ensure_ascii=False).encode()) of a writable exact str: its quotes, a
 * two-byte escape for '"', '\\' and \b \f \n \r \t, \u00XX for another control character, and
 * every other code point as its UTF-8 (json's escape_unicode). -1: an error is set. */
static long long json_str_bytes(PyObject *text) {
    if (is_ascii_str(text) < 0) return -1;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    long long total = 2;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') total += 2;
        else if (c < 0x20) total += 6;
        else total += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    }
    return total;
}

/* len(json.dumps(value, ensure_ascii=False).encode()) of an enum value node() takes (an exact
 * writable str, int or bool); 0: another value, which node() never gives (so: not plain);
 * -1: an error is set. An int beyond 64 bits is written by CPython's own int-to-decimal C
 * conversion (json.dumps's, with its digit limit and error). */
static long long json_bytes(PyObject *v) {
    if (v == Py_True) return 4;
    if (v == Py_False) return 5;
    if (PyUnicode_CheckExact(v)) return json_str_bytes(v);
    if (!PyLong_CheckExact(v)) return 0;
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred()) return -1;
    if (overflow) {
        PyObject *digits = PyObject_Str(v);
        if (!digits) return -1;
        long long n = PyUnicode_GET_LENGTH(digits);
        Py_DECREF(digits);
        return n;
    }
    unsigned long long m = x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
    long long n = x < 0 ? 2 : 1;
    while (m >= 10) { m /= 10; n++; }
    return n;
}

/* schema_size.enum_cost(values) for the distinct values of a plain enum: 1: *cost is set; 0: a
 * value json_bytes does not write (not plain); -1: an error is set. */
static int enum_cost(PyObject *values, long long *cost) {
    long long total = 2;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(values); i++) {
        long long n = json_bytes(PyList_GET_ITEM(values, i));
        if (n <= 0) return (int)n;
        total += n + 1;
    }
    *cost = total;
    return 1;
}

static int eq(PyObject *a, PyObject *b) { return a == b ? 1 : PyObject_RichCompareBool(a, b, Py_EQ); }

/* 1: *out is the normal form (new reference); 0: not plain; -1: a Python error is set. */
static int node(PyObject *n, int depth, long long *cost, PyObject **out);

static int object_checks(PyObject *out, long long *own) {
    PyObject *listed = PyDict_GetItemWithError(out, S_PROPERTIES);
    if (!listed && PyErr_Occurred()) return -1;
    PyObject *required = PyDict_GetItemWithError(out, S_REQUIRED);
    if (!required && PyErr_Occurred()) return -1;
    if (!listed) {  /* any members, unless some are required (the reader lists them) */
        if (required) return 0;
        *own += PLAIN_NO_PROPERTIES;
        return 1;
    }
    if (required) {
        Py_ssize_t n = PyList_GET_SIZE(required);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *r = PyList_GET_ITEM(required, i);
            if (!PyUnicode_CheckExact(r)) return 0;
            int in = PyDict_Contains(listed, r);
            if (in <= 0) return in;
        }
        PyObject *unique = PySet_New(required);
        if (!unique) return -1;
        Py_ssize_t m = PySet_GET_SIZE(unique);
        Py_DECREF(unique);
        if (m < n) return 0;
    }
    if (PyDict_GET_SIZE(listed) == 0) *own += PLAIN_NO_PROPERTIES;
    return 1;
}

static int enum_values(PyObject *kind, PyObject *value, int *taken) {
    /* 1: value is a plain enum of kind (taken); 0: not plain; -1: error. Not an enum kind or not a
     * non-empty list: the Python walk's branch does not apply (*taken stays 0, the caller says 0). */
    PyTypeObject *want;
    if (PyUnicode_CompareWithASCIIString(kind, "string") == 0) want = &PyUnicode_Type;
    else if (PyUnicode_CompareWithASCIIString(kind, "integer") == 0) want = &PyLong_Type;
    else if (PyUnicode_CompareWithASCIIString(kind, "boolean") == 0) want = &PyBool_Type;
    else return 0;
    if (!PyList_CheckExact(value) || PyList_GET_SIZE(value) == 0) return 0;
    Py_ssize_t n = PyList_GET_SIZE(value);
    for (Py_ssize_t i = 0; i < n; i++)
        if (Py_TYPE(PyList_GET_ITEM(value, i)) != want) return 0;
    if (want == &PyUnicode_Type) {
        for (Py_ssize_t i = 0; i < n; i++) {
            int ok = writable(PyList_GET_ITEM(value, i));
            if (ok <= 0) return ok;
        }
    }
    *taken = 1;
    return 1;
}

static int node(PyObject *n, int depth, long long *cost, PyObject **out) {
    if (!PyDict_CheckExact(n) || depth > DEPTH) return 0;
    PyObject *kind = PyDict_GetItemWithError(n, S_TYPE);
    if (!kind && PyErr_Occurred()) return -1;
    if (!kind) {  /* annotations only: any value (True); a keyword the reader acts on: not plain */
        Py_ssize_t at = 0;
        PyObject *k;
        while (PyDict_Next(n, &at, &k, NULL)) {
            int in = PySet_Contains(READ, k);
            if (in != 0) return in < 0 ? -1 : 0;
        }
        *cost += PLAIN_ANY;
        Py_INCREF(Py_True);
        *out = Py_True;
        return 1;
    }
    if (!PyUnicode_CheckExact(kind)) return 0;
    PyObject *mapped = PyDict_GetItemWithError(BFCL_TYPES, kind);
    if (mapped) kind = mapped;
    else if (PyErr_Occurred()) return -1;
    PyObject *own_obj = PyDict_GetItemWithError(PLAIN_OWN, kind);
    if (!own_obj) return PyErr_Occurred() ? -1 : 0;
    long long own = PyLong_AsLongLong(own_obj);
    if (own == -1 && PyErr_Occurred()) return -1;
    Py_INCREF(kind);  /* kept while a key of a Python class runs its __hash__ or __eq__ */
    int scalar = PySet_Contains(SCALARS, kind);
    if (scalar < 0) goto error_kind;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    if (scalar) {
        int disjoint = 1;
        while (PyDict_Next(n, &pos, &key, NULL)) {
            int in = PySet_Contains(READ_BUT_TYPE, key);
            if (in < 0) goto error_kind;
            if (in) { disjoint = 0; break; }
        }
        if (disjoint) {
            *cost += own;
            PyObject *d = PyDict_New();
            if (!d || PyDict_SetItem(d, S_TYPE, kind) < 0) { Py_XDECREF(d); goto error_kind; }
            Py_DECREF(kind);
            *out = d;
            return 1;
        }
    }
    int is_object = PyUnicode_CompareWithASCIIString(kind, "object") == 0;
    int is_array = PyUnicode_CompareWithASCIIString(kind, "array") == 0;
    PyObject *d = PyDict_New();
    if (!d) goto error_kind;
    PyObject *enumerated = NULL;  /* borrowed from the node, as the walk's `enum` */
    int status = 1;
    pos = 0;
    while (status == 1 && PyDict_Next(n, &pos, &key, &value)) {
        int in = PySet_Contains(READ, key);
        if (in < 0) { status = -1; break; }
        if (!in) continue;
        Py_INCREF(key);
        Py_INCREF(value);
        int is;
        if ((is = eq(key, S_TYPE)) != 0) {
            status = is < 0 || PyDict_SetItem(d, key, kind) < 0 ? -1 : 1;
        } else if ((is = eq(key, S_PROPERTIES)) != 0 && is_object && PyDict_CheckExact(value)) {
            PyObject *props = is < 0 ? NULL : PyDict_New();
            if (!props) status = -1;
            Py_ssize_t p = 0;
            PyObject *name, *sub;
            while (status == 1 && PyDict_Next(value, &p, &name, &sub)) {
                PyObject *read = NULL;
                Py_INCREF(name);
                Py_INCREF(sub);
                status = node(sub, depth + 1, cost, &read);
                if (status == 1) {
                    int ok = PyUnicode_CheckExact(name) ? writable(name) : 0;
                    if (ok <= 0) status = ok;
                    else if (PyDict_SetItem(props, name, read) < 0) status = -1;
                    else own += PyUnicode_GET_LENGTH(name) + PLAIN_MEMBER;
                }
                Py_XDECREF(read);
                Py_DECREF(name);
                Py_DECREF(sub);
            }
            if (status == 1 && PyDict_SetItem(d, key, props) < 0) status = -1;
            Py_XDECREF(props);
        } else if (is >= 0 && (is = eq(key, S_REQUIRED)) != 0 && is_object && PyList_CheckExact(value)) {
            if (is < 0) status = -1;
            else if (PyList_GET_SIZE(value)) {
                PyObject *copy = PyList_GetSlice(value, 0, PyList_GET_SIZE(value));
                status = !copy || PyDict_SetItem(d, key, copy) < 0 ? -1 : 1;
                Py_XDECREF(copy);
            }
        } else if (is >= 0 && (is = eq(key, S_ITEMS)) != 0 && is_array) {
            PyObject *read = NULL;
            status = is < 0 ? -1 : node(value, depth + 1, cost, &read);
            if (status == 1 && PyDict_SetItem(d, key, read) < 0) status = -1;
            Py_XDECREF(read);
        } else if (is >= 0 && (is = eq(key, S_ENUM)) != 0) {
            int taken = 0;
            status = is < 0 ? -1 : enum_values(kind, value, &taken);
            if (status == 1) enumerated = value;  /* the node holds it */
        } else {
            status = is < 0 ? -1 : 0;
        }
        Py_DECREF(key);
        Py_DECREF(value);
    }
    if (status != 1) { Py_DECREF(d); Py_DECREF(kind); return status; }
    if (enumerated) {
        Py_DECREF(d);
        Py_DECREF(kind);
        PyObject *values = NULL, *unique = PyDict_New();  /* the values, first occurrences in order */
        long long add = 0;
        status = unique ? 1 : -1;
        Py_ssize_t m = PyList_GET_SIZE(enumerated);
        for (Py_ssize_t i = 0; status == 1 && i < m; i++)
            if (PyDict_SetDefault(unique, PyList_GET_ITEM(enumerated, i), Py_None) == NULL) status = -1;
        if (status == 1) values = PyDict_Keys(unique);
        if (status == 1) status = values ? enum_cost(values, &add) : -1;
        if (status == 1) {
            d = PyDict_New();
            if (!d || PyDict_SetItem(d, S_ENUM, values) < 0) { Py_XDECREF(d); status = -1; }
            else { *cost += add; *out = d; }
        }
        Py_XDECREF(values);
        Py_XDECREF(unique);
        return status;
    }
    if (is_object) status = object_checks(d, &own);
    else if (is_array) {
        int has = PyDict_Contains(d, S_ITEMS);
        status = has < 0 ? -1 : has;
    }
    Py_DECREF(kind);
    if (status != 1) { Py_DECREF(d); return status; }
    *cost += own;
    *out = d;
    return 1;
error_kind:
    Py_DECREF(kind);
    return -1;
}

static PyObject *plain_form_cost(PyObject *Py_UNUSED(self), PyObject *schema) {
    if (DEPTH < 0) {
        PyErr_SetString(PyExc_RuntimeError, "_plain_form.configure() was not called");
        return NULL;
    }
    long long cost = 0;
    PyObject *out = NULL;
    int status = node(schema, 0, &cost, &out);
    if (status < 0) return NULL;
    if (status == 0) Py_RETURN_NONE;
    PyObject *kind = PyDict_CheckExact(out) ? PyDict_GetItemWithError(out, S_TYPE) : NULL;  /* True: not an object */
    int object = kind && PyUnicode_CheckExact(kind) && PyUnicode_CompareWithASCIIString(kind, "object") == 0;
    if (!object) {
        Py_DECREF(out);
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    PyObject *c = PyLong_FromLongLong(cost);
    if (!c) { Py_DECREF(out); return NULL; }
    PyObject *pair = PyTuple_Pack(2, out, c);
    Py_DECREF(out);
    Py_DECREF(c);
    return pair;
}

static PyObject *configure(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *read, *read_but_type, *scalars, *bfcl, *own;
    int depth;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!LLLi", &PyFrozenSet_Type, &read, &PyFrozenSet_Type, &read_but_type,
                          &PyFrozenSet_Type, &scalars, &PyDict_Type, &bfcl, &PyDict_Type, &own,
                          &PLAIN_MEMBER, &PLAIN_NO_PROPERTIES, &PLAIN_ANY, &depth))
        return NULL;
    PyObject **slots[] = {&READ, &READ_BUT_TYPE, &SCALARS, &BFCL_TYPES, &PLAIN_OWN};
    PyObject *given[] = {read, read_but_type, scalars, bfcl, own};
    for (int i = 0; i < 5; i++) {
        Py_INCREF(given[i]);
        Py_XSETREF(*slots[i], given[i]);
    }
    DEPTH = depth;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(read, read_but_type, scalars, bfcl_types, plain_own, plain_member, plain_no_properties, plain_any,"
     " depth): schema_plain's tables, given once."},
    {"plain_form_cost", plain_form_cost, METH_O,
     "plain_form_cost(schema) -> (dict, int) | None: schema_plain.plain_form_cost, compiled."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_plain_form", NULL, -1, methods};

PyMODINIT_FUNC PyInit__plain_form(void) {
    const char *names[] = {"type", "properties", "required", "items", "enum", "object", "array"};
    PyObject **slots[] = {&S_TYPE, &S_PROPERTIES, &S_REQUIRED, &S_ITEMS, &S_ENUM, &S_OBJECT, &S_ARRAY};
    for (int i = 0; i < 7; i++)
        if (!(*slots[i] = PyUnicode_InternFromString(names[i]))) return NULL;
    return PyModule_Create(&module);
}
