/* schema_plain.plain_form_cost, compiled: the normal form of a plain schema and its size.
 *
 * Registering a list of a thousand new tools spends a third of its time recognising and writing
 * plain schemas in Python (a dict, a few lookups and a recursive call per subschema). This is the
 * same walk over exact dicts, lists and strings: the same answer, key order
 * included, or None where the Python walk says "not plain" (tests compare the two on every schema
 * of the inventories and on random ones). The keyword sets, type maps and costs are the Python
 * module's own, given once by configure(); an enum's cost and a non-ASCII string's check call
 * back the Python functions, so no rule is written twice. The GIL is held throughout.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *READ, *READ_BUT_TYPE, *SCALARS, *BFCL_TYPES, *PLAIN_OWN, *ENUM_COST, *IS_WRITABLE;
static long long PLAIN_MEMBER, PLAIN_NO_PROPERTIES, PLAIN_ANY;
static int DEPTH = -1; /* -1: not configured */
static PyObject *S_TYPE, *S_PROPERTIES, *S_REQUIRED, *S_ITEMS, *S_ENUM, *S_OBJECT, *S_ARRAY;

static int is_ascii_str(PyObject *s) {
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(s) < 0) return -1;
#endif
    return PyUnicode_IS_ASCII(s);
}

/* Python's _writable for an exact str: ASCII, or is_writable(text). 1, 0 or -1 (error). */
static int writable(PyObject *text) {
    int ascii = is_ascii_str(text);
    if (ascii != 0) return ascii;
    PyObject *r = PyObject_CallOneArg(IS_WRITABLE, text);
    if (!r) return -1;
    int ok = PyObject_IsTrue(r);
    Py_DECREF(r);
    return ok;
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
        for (Py_ssize_t i = 0; i < n && i < PyList_GET_SIZE(value); i++) {
            PyObject *v = PyList_GET_ITEM(value, i);
            Py_INCREF(v);
            int ok = writable(v);
            Py_DECREF(v);
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
    Py_INCREF(kind);  /* kept while the node's own callbacks run */
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
        PyObject *values = NULL, *unique = PyDict_New(), *c = NULL;
        if (!unique) return -1;
        Py_ssize_t m = PyList_GET_SIZE(enumerated);
        for (Py_ssize_t i = 0; i < m && i < PyList_GET_SIZE(enumerated); i++)
            if (PyDict_SetDefault(unique, PyList_GET_ITEM(enumerated, i), Py_None) == NULL) goto enum_error;
        values = PyDict_Keys(unique);
        if (!values) goto enum_error;
        c = PyObject_CallOneArg(ENUM_COST, values);
        if (!c) goto enum_error;
        long long add = PyLong_AsLongLong(c);
        if (add == -1 && PyErr_Occurred()) goto enum_error;
        *cost += add;
        d = PyDict_New();
        if (!d || PyDict_SetItem(d, S_ENUM, values) < 0) { Py_XDECREF(d); goto enum_error; }
        Py_DECREF(c);
        Py_DECREF(values);
        Py_DECREF(unique);
        *out = d;
        return 1;
    enum_error:
        Py_XDECREF(c);
        Py_XDECREF(values);
        Py_DECREF(unique);
        return -1;
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
    PyObject *read, *read_but_type, *scalars, *bfcl, *own, *enum_cost, *is_writable;
    int depth;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!LLLOOi", &PyFrozenSet_Type, &read, &PyFrozenSet_Type, &read_but_type,
                          &PyFrozenSet_Type, &scalars, &PyDict_Type, &bfcl, &PyDict_Type, &own,
                          &PLAIN_MEMBER, &PLAIN_NO_PROPERTIES, &PLAIN_ANY, &enum_cost, &is_writable, &depth))
        return NULL;
    PyObject **slots[] = {&READ, &READ_BUT_TYPE, &SCALARS, &BFCL_TYPES, &PLAIN_OWN, &ENUM_COST, &IS_WRITABLE};
    PyObject *given[] = {read, read_but_type, scalars, bfcl, own, enum_cost, is_writable};
    for (int i = 0; i < 7; i++) {
        Py_INCREF(given[i]);
        Py_XSETREF(*slots[i], given[i]);
    }
    DEPTH = depth;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(read, read_but_type, scalars, bfcl_types, plain_own, plain_member, plain_no_properties, plain_any,"
     " enum_cost, is_writable, depth): schema_plain's tables and rules, given once."},
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
