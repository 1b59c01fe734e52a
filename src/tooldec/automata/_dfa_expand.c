/* One state of a LazyDFA expanded in C: the subset construction of dfa.py's expand(), compiled.
 *
 * LazyDFA.expand builds a state's row the first time a walk needs it: the NFA states' byte moves
 * split into intervals, each interval's targets closed under epsilon moves (counted regions'
 * guards included) and interned. In Python that is 8-60 us a state, and a cold mask meets several
 * (a key literal is a chain of one-byte states); here it is a microsecond or two.
 *
 * tables(...) reads the NFA and its cost tables once into C arrays (an NFA never changes once
 * its DFA is made), from the lists and tuples dfa.py's _compiled_tables() hands over; its last
 * argument is the DFA's dict of state labels, which expansion adds to. tables.use(table, expanded, accepting, exits, dist) hands over the DFA's
 * arrays, each time the DFA replaces them. tables.expand(sid) then does what the Python expand
 * does: new states are kept here (the same keys: (frozenset of NFA states, sorted (region, class)
 * pairs)), their flags and distances go to the arrays, their labels to marks, the row to the
 * table; the counter steps stay here until LazyDFA.actions asks (tables.steps). States are
 * interned in the order Python interns them, so both number them alike
 * (tests/automata/test_dfa_expand.py compares them).
 *
 * The arrays are Python's: where a new state finds them full, the call raises NeedsRoom and
 * leaves everything as it was but the states already interned, which a second call finds again
 * in the same order; the DFA grows its arrays, hands them over and calls again. Nothing here
 * calls back into Python or reads an attribute by name.
 *
 * A state's distance (Costs.of, and Costs.text_dist's bounded search) is computed here too, from
 * the cost tables read at the start. The tables keep an index of the states
 * interned here and scratch space: callers hold the DFA's lock (LazyDFA.expand does), and the GIL
 * is held throughout.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TOP (-1)
#define MID (-1)
#define NONE (-1) /* a region without an upper bound */
#define RESET 0
#define BELOW_HIGH 1
#define AT_LEAST_LOW 2
static const int64_t INF = (int64_t)1 << 60; /* costs.INF */

typedef struct { int32_t region; int64_t cls; } Class;

/* A small map region -> counter class (a state is inside a handful of regions at most). */
typedef struct {
    Class *items;
    Py_ssize_t n, cap;
} Classes;

typedef struct {
    Py_buffer table, expanded, accepting, exits, dist;
    int held;
    Py_ssize_t capacity;
} View;

typedef struct {
    PyObject_HEAD
    Py_ssize_t n_states, n_regions;
    /* per NFA state: byte edges, plain and guarded epsilon edges (offsets into flat arrays) */
    Py_ssize_t *edge_at, *eps_at, *guard_at;
    uint8_t *edge_lo, *edge_hi, *guard_kind;
    int32_t *edge_dst, *eps_dst, *guard_dst, *guard_region;
    int32_t *scope, *unit_region, *mark_rank;
    uint8_t *reach, *is_unit, *is_sep; /* is_unit / is_sep: among its own region's units / separator states */
    int64_t *chars, *local;
    /* per region */
    int64_t *low, *high, *band, *unit_min, *sep_min;
    int32_t *parent, *decide, *loop, *exit, *quote, *unit;
    uint8_t *text, *has_sep, *blank;
    int32_t accept;
    int prune;
    PyObject *labels;    /* tuple: the marks' labels by rank (shortest, then smallest first) */
    PyObject *marks;     /* the DFA's labels by state (a dict): where new states' labels go */
    /* Costs.text_dist's search: per NFA state the most characters left it was reached with
     * (best_at == best_generation), the (state, characters left) pairs of this distance and the
     * next, and a small cache of answers by (state, budget) (bounded: a slot is overwritten) */
    int64_t *best;
    uint32_t *best_at, best_generation;
    int64_t *levels[2];
    Py_ssize_t level_caps[2];
    int64_t found_key[2 * 256], found_dist[256];
    /* the states interned here, by (NFA states, classes): open addressing over a pool of keys */
    /* the DFA's states: key_at[sid] is where a state's key starts in ``pool``; key_objs[sid] its
     * Python key once asked for (made on demand: most states are never looked at from Python) */
    Py_ssize_t n_keys, keys_cap;
    Py_ssize_t *key_at;
    PyObject **key_objs;
    /* the counter steps of the expanded states that have any: step_at[sid] is where the state's
     * int16 step number per byte starts in ``step_of`` (-1: none), step_data_at[sid] where its
     * steps are in ``step_data`` ([count, then per step: n_incs, incs..., n_resets, resets...,
     * tracked]); Python's _Step objects are made when LazyDFA.actions first asks */
    Py_ssize_t *step_at, *step_data_at;
    int16_t *step_of;
    Py_ssize_t step_of_len, step_of_cap;
    int32_t *step_data;
    Py_ssize_t step_data_len, step_data_cap;
    int32_t *slots; /* the state in each slot, -1 for an empty one */
    uint64_t *slot_hash;
    Py_ssize_t *slot_at; /* where the slot's key starts in ``pool`` */
    Py_ssize_t n_slots, n_used;
    int64_t *pool;
    Py_ssize_t pool_len, pool_cap;
    View view;
    /* scratch, reused by every call (under the DFA's lock) */
    uint32_t *seen, generation;
    uint32_t *memo_at, memo_generation;
    int64_t *memo;
    int32_t *stack, *out, *active_list;
    Py_ssize_t stack_cap;
    uint8_t *active;
    struct Move *moves;
    int32_t *targets, *incs, *resets;
    Py_ssize_t most_moves;
    Classes cls, after, kept;
} Tables;

typedef struct Move { int32_t lo, hi, dst, region; } Move;

/* -- small helpers ---------------------------------------------------------------------------- */

static int classes_set(Classes *c, int32_t region, int64_t cls) {
    for (Py_ssize_t i = 0; i < c->n; i++) {
        if (c->items[i].region == region) { c->items[i].cls = cls; return 0; }
    }
    if (c->n == c->cap) {
        Py_ssize_t cap = c->cap ? c->cap * 2 : 8;
        Class *items = PyMem_Realloc(c->items, cap * sizeof(Class));
        if (!items) { PyErr_NoMemory(); return -1; }
        c->items = items;
        c->cap = cap;
    }
    c->items[c->n].region = region;
    c->items[c->n].cls = cls;
    c->n++;
    return 0;
}

/* 1 and the class in *cls if ``region`` has one, else 0. */
static int classes_get(const Classes *c, int32_t region, int64_t *cls) {
    for (Py_ssize_t i = 0; i < c->n; i++) {
        if (c->items[i].region == region) { *cls = c->items[i].cls; return 1; }
    }
    return 0;
}

static int64_t class_or_mid(const Classes *c, int32_t region) {
    int64_t cls = MID;
    classes_get(c, region, &cls);
    return cls;
}

static int classes_copy(Classes *dst, const Classes *src) {
    dst->n = 0;
    for (Py_ssize_t i = 0; i < src->n; i++) {
        if (classes_set(dst, src->items[i].region, src->items[i].cls) < 0) return -1;
    }
    return 0;
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_move(const void *a, const void *b) {
    const Move *x = a, *y = b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    if (x->hi != y->hi) return x->hi < y->hi ? -1 : 1;
    if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
    return (x->region > y->region) - (x->region < y->region);
}

static int64_t sat_add(int64_t a, int64_t b) { return a >= INF || b >= INF || a + b >= INF ? INF : a + b; }

static int64_t sat_mul(int64_t a, int64_t b) {
    if (a <= 0 || b <= 0) return a * b;
    return a >= INF || b >= INF || a > INF / b ? INF : a * b;
}

/* Costs.class_of: the exact count below ``low`` or within the band under ``high``, else MID. */
static int64_t class_of(const Tables *t, int32_t r, int64_t count) {
    if (count < t->low[r]) return count;
    if (t->high[r] == NONE || t->high[r] - count > t->band[r]) return MID;
    return count;
}

static int below_high(const Tables *t, int32_t r, int64_t cls) {
    return cls == MID || t->high[r] == NONE || cls < t->high[r];
}

static int at_least_low(const Tables *t, int32_t r, int64_t cls) { return cls == MID || cls >= t->low[r]; }

/* -- the DFA's arrays ------------------------------------------------------------------------ */

static void view_release(View *v) {
    Py_buffer *views[5] = {&v->table, &v->expanded, &v->accepting, &v->exits, &v->dist};
    for (int k = 0; k < v->held; k++) PyBuffer_Release(views[k]);
    v->held = 0;
    v->capacity = 0;
}

/* Writable views of the DFA's arrays (sizes checked), kept until the DFA hands over new ones. */
static int view_take(View *v, PyObject *const *arrays) {
    view_release(v);
    static const Py_ssize_t sizes[5] = {256 * 4, 1, 1, 1, 8};
    Py_buffer *views[5] = {&v->table, &v->expanded, &v->accepting, &v->exits, &v->dist};
    for (int k = 0; k < 5; k++) {
        if (PyObject_GetBuffer(arrays[k], views[k], PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) { view_release(v); return -1; }
        v->held = k + 1;
    }
    v->capacity = v->expanded.len;
    for (int k = 0; k < 5; k++) {
        if (views[k]->len != v->capacity * sizes[k]) {
            view_release(v);
            PyErr_SetString(PyExc_ValueError, "use: the DFA's arrays have mismatched sizes");
            return -1;
        }
    }
    return 0;
}

/* -- reading the NFA ------------------------------------------------------------------------ */

static void tables_dealloc(PyObject *self) {
    Tables *t = (Tables *)self;
    void *arrays[] = {t->edge_at, t->eps_at, t->guard_at, t->edge_lo, t->edge_hi, t->guard_kind, t->edge_dst,
                      t->eps_dst, t->guard_dst, t->guard_region, t->scope, t->unit_region, t->mark_rank, t->reach,
                      t->is_unit, t->is_sep, t->chars, t->local, t->low, t->high, t->band, t->unit_min, t->sep_min,
                      t->parent, t->decide, t->loop, t->exit, t->quote, t->unit, t->text, t->has_sep, t->blank, t->slots, t->slot_hash, t->slot_at,
                      t->pool, t->key_at, t->step_at, t->step_data_at, t->step_of, t->step_data, t->seen, t->memo_at, t->memo, t->best, t->best_at, t->levels[0], t->levels[1], t->stack, t->out, t->active_list, t->active,
                      t->moves, t->targets, t->incs, t->resets, t->cls.items, t->after.items, t->kept.items};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) PyMem_Free(arrays[i]);
    if (t->key_objs) {
        for (Py_ssize_t i = 0; i < t->n_keys; i++) Py_XDECREF(t->key_objs[i]);
        PyMem_Free(t->key_objs);
    }
    view_release(&t->view);
    Py_XDECREF(t->labels);
    Py_XDECREF(t->marks);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject TablesType;

static int64_t as_i64(PyObject *obj, int *bad) {
    long long v = PyLong_AsLongLong(obj);
    if (v == -1 && PyErr_Occurred()) *bad = 1;
    return (int64_t)v;
}

/* ``list`` if it is a list of ``n`` items (any length for n < 0), else NULL with an exception set. */
static PyObject *checked_list(PyObject *list, const char *name, Py_ssize_t n) {
    if (PyList_Check(list) && (n < 0 || PyList_GET_SIZE(list) == n)) return list;
    PyErr_Format(PyExc_ValueError, "tables: %s must be a list of %zd items", name, n);
    return NULL;
}

/* Read a list of ``n`` ints (bools included) into ``out``. */
static int read_ints(PyObject *list, Py_ssize_t n, int64_t *out) {
    int bad = 0;
    for (Py_ssize_t i = 0; i < n && !bad; i++) out[i] = as_i64(PyList_GET_ITEM(list, i), &bad);
    return bad ? -1 : 0;
}

static void *alloc(Py_ssize_t count, Py_ssize_t size, int *failed) {
    void *p = PyMem_Calloc(count + 1, size);
    if (!p) *failed = 1;
    return p;
}

/* Fill the per-state edge tables from the NFA's edges / eps / guarded (lists of sequences of tuples). */
static int read_cells(Tables *t, PyObject *edges, PyObject *eps, PyObject *guarded) {
    Py_ssize_t n = t->n_states;
    int ok = -1, bad = 0, failed = 0;
    if (!checked_list(edges, "edges", n) || !checked_list(eps, "eps", n) || !checked_list(guarded, "guarded", n))
        goto done;
    Py_ssize_t n_edges = 0, n_eps = 0, n_guards = 0;
    for (Py_ssize_t s = 0; s < n; s++) {
        Py_ssize_t a = PySequence_Size(PyList_GET_ITEM(edges, s)), b = PySequence_Size(PyList_GET_ITEM(eps, s)),
                   c = PySequence_Size(PyList_GET_ITEM(guarded, s));
        if (a < 0 || b < 0 || c < 0) goto done;
        n_edges += a; n_eps += b; n_guards += c;
    }
    t->edge_at = alloc(n, sizeof(Py_ssize_t), &failed); t->eps_at = alloc(n, sizeof(Py_ssize_t), &failed);
    t->guard_at = alloc(n, sizeof(Py_ssize_t), &failed);
    t->edge_lo = alloc(n_edges, 1, &failed); t->edge_hi = alloc(n_edges, 1, &failed);
    t->edge_dst = alloc(n_edges, 4, &failed); t->eps_dst = alloc(n_eps, 4, &failed);
    t->guard_dst = alloc(n_guards, 4, &failed); t->guard_region = alloc(n_guards, 4, &failed);
    t->guard_kind = alloc(n_guards, 1, &failed);
    if (failed) { PyErr_NoMemory(); goto done; }
    Py_ssize_t e = 0, p = 0, g = 0;
    for (Py_ssize_t s = 0; s < n; s++) {
        t->edge_at[s] = e; t->eps_at[s] = p; t->guard_at[s] = g;
        PyObject *cell = PySequence_Fast(PyList_GET_ITEM(edges, s), "tables: an edges cell");
        if (!cell) goto done;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(cell) && !bad; i++, e++) {
            PyObject *edge = PySequence_Fast_GET_ITEM(cell, i);
            if (!PyTuple_Check(edge) || PyTuple_GET_SIZE(edge) != 3) { bad = 1; break; }
            int64_t lo = as_i64(PyTuple_GET_ITEM(edge, 0), &bad), hi = as_i64(PyTuple_GET_ITEM(edge, 1), &bad);
            int64_t dst = as_i64(PyTuple_GET_ITEM(edge, 2), &bad);
            if (lo < 0 || hi > 255 || lo > hi || dst < 0 || dst >= n) bad = 1;
            t->edge_lo[e] = (uint8_t)lo; t->edge_hi[e] = (uint8_t)hi; t->edge_dst[e] = (int32_t)dst;
        }
        Py_DECREF(cell);
        if (bad || !(cell = PySequence_Fast(PyList_GET_ITEM(eps, s), "tables: an eps cell"))) goto done;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(cell) && !bad; i++, p++) {
            int64_t dst = as_i64(PySequence_Fast_GET_ITEM(cell, i), &bad);
            if (dst < 0 || dst >= n) bad = 1;
            t->eps_dst[p] = (int32_t)dst;
        }
        Py_DECREF(cell);
        if (bad || !(cell = PySequence_Fast(PyList_GET_ITEM(guarded, s), "tables: a guarded cell"))) goto done;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(cell) && !bad; i++, g++) {
            PyObject *guard = PySequence_Fast_GET_ITEM(cell, i);
            if (!PyTuple_Check(guard) || PyTuple_GET_SIZE(guard) != 3) { bad = 1; break; }
            int64_t dst = as_i64(PyTuple_GET_ITEM(guard, 0), &bad), kind = as_i64(PyTuple_GET_ITEM(guard, 1), &bad);
            int64_t region = as_i64(PyTuple_GET_ITEM(guard, 2), &bad);
            if (dst < 0 || dst >= n || kind < 0 || kind > 2 || region < 0 || region >= t->n_regions) bad = 1;
            t->guard_dst[g] = (int32_t)dst; t->guard_kind[g] = (uint8_t)kind; t->guard_region[g] = (int32_t)region;
        }
        Py_DECREF(cell);
        if (bad) goto done;
    }
    t->edge_at[n] = e; t->eps_at[n] = p; t->guard_at[n] = g;
    ok = 0;
done:
    if (bad && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "tables: an edge or guard out of range");
    return ok;
}

/* Flag every state of ``states`` (an iterable) in ``flags`` (with the region's number in
 * ``owner`` if given), those of region ``own`` only if ``own`` >= 0. */
static int flag_states(Tables *t, PyObject *states, int32_t own, uint8_t *flags, int32_t *owner, int32_t r) {
    PyObject *iter = PyObject_GetIter(states), *item;
    if (!iter) return -1;
    int bad = 0;
    while (!bad && (item = PyIter_Next(iter))) {
        int64_t s = as_i64(item, &bad);
        Py_DECREF(item);
        if (bad || s < 0 || s >= t->n_states) { bad = 1; break; }
        if (owner) owner[s] = r;
        if (flags && (own < 0 || t->scope[s] == own)) flags[s] = 1;
    }
    Py_DECREF(iter);
    if (bad && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "tables: a region's state out of range");
    return bad || PyErr_Occurred() ? -1 : 0;
}

/* Read the regions: per region the tuple dfa.py's _compiled_tables() makes (low, high or -1,
 * parent, decide, loop, exit, text, blank, string_quote, has_separator, units, separator_states,
 * band, unit_min, sep_min). */
static int read_regions(Tables *t, PyObject *regions) {
    Py_ssize_t m = t->n_regions;
    int failed = 0;
    t->low = alloc(m, 8, &failed); t->high = alloc(m, 8, &failed); t->band = alloc(m, 8, &failed);
    t->unit_min = alloc(m, 8, &failed); t->sep_min = alloc(m, 8, &failed);
    t->parent = alloc(m, 4, &failed); t->decide = alloc(m, 4, &failed); t->loop = alloc(m, 4, &failed);
    t->exit = alloc(m, 4, &failed); t->text = alloc(m, 1, &failed); t->has_sep = alloc(m, 1, &failed);
    t->quote = alloc(m, 4, &failed); t->unit = alloc(m, 4, &failed); t->blank = alloc(m, 1, &failed);
    if (failed) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t r = 0; r < m; r++) {
        PyObject *row = PyList_GET_ITEM(regions, r), *units, *separators;
        long long low, high, band, unit_min, sep_min;
        int parent, decide, loop, exit, quote, text, blank, has_sep;
        if (!PyTuple_Check(row)) { PyErr_SetString(PyExc_TypeError, "tables: a region is a tuple"); return -1; }
        if (!PyArg_ParseTuple(row, "LLiiiippipOOLLL", &low, &high, &parent, &decide, &loop, &exit, &text, &blank,
                              &quote, &has_sep, &units, &separators, &band, &unit_min, &sep_min)) return -1;
        t->low[r] = low; t->high[r] = high; t->parent[r] = parent; t->decide[r] = decide; t->loop[r] = loop;
        t->exit[r] = exit; t->text[r] = (uint8_t)text; t->blank[r] = (uint8_t)blank; t->quote[r] = quote;
        t->has_sep[r] = (uint8_t)has_sep; t->band[r] = band; t->unit_min[r] = unit_min; t->sep_min[r] = sep_min;
        if ((parent != TOP && (parent < 0 || parent >= r)) || low < 0 || high < NONE || quote < -1 || quote >= t->n_states
            || decide < 0 || decide >= t->n_states || loop < 0 || loop >= t->n_states || exit < 0 || exit >= t->n_states) {
            PyErr_SetString(PyExc_ValueError, "tables: a region out of range (parents come first, nfa.py)");
            return -1;
        }
        /* nfa.unit_of keeps the last region listing a unit state */
        if (flag_states(t, units, (int32_t)r, t->is_unit, t->unit_region, (int32_t)r) < 0) return -1;
        t->unit[r] = -1; /* a string's or a whitespace run's only unit */
        if (PyObject_Length(units) == 1) {
            int bad = 0;
            PyObject *iter = PyObject_GetIter(units), *one = iter ? PyIter_Next(iter) : NULL;
            if (one) t->unit[r] = (int32_t)as_i64(one, &bad);
            Py_XDECREF(one);
            Py_XDECREF(iter);
        }
        if (PyErr_Occurred()) return -1;
        if (flag_states(t, separators, (int32_t)r, t->is_sep, NULL, (int32_t)r) < 0) return -1;
    }
    return 0;
}

/* mark_rank and labels: the NFA's marks ranked as dfa.py picks among them (shortest, then smallest). */
static int read_marks(Tables *t, PyObject *marks) {
    PyObject *items = PyDict_Items(marks), *labels = PyList_New(0);
    int ok = -1;
    if (!items || !labels) goto done;
    Py_ssize_t k = PyList_GET_SIZE(items);
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *label = PyTuple_GET_ITEM(PyList_GET_ITEM(items, i), 1);
        int has = PySequence_Contains(labels, label);
        if (has < 0 || (!has && PyList_Append(labels, label) < 0)) goto done;
    }
    Py_ssize_t n = PyList_GET_SIZE(labels);
    for (Py_ssize_t i = 1; i < n; i++) { /* insertion sort by (len, text): a few labels */
        for (Py_ssize_t j = i; j > 0; j--) {
            PyObject *a = PyList_GET_ITEM(labels, j - 1), *b = PyList_GET_ITEM(labels, j);
            Py_ssize_t la = PyObject_Length(a), lb = PyObject_Length(b);
            if (la < 0 || lb < 0) goto done;
            int after = la > lb;
            if (la == lb && (after = PyObject_RichCompareBool(a, b, Py_GT)) < 0) goto done;
            if (!after) break;
            PyList_SET_ITEM(labels, j - 1, b);
            PyList_SET_ITEM(labels, j, a);
        }
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *pair = PyList_GET_ITEM(items, i);
        int bad = 0;
        int64_t s = as_i64(PyTuple_GET_ITEM(pair, 0), &bad);
        Py_ssize_t rank = PySequence_Index(labels, PyTuple_GET_ITEM(pair, 1));
        if (bad || rank < 0) goto done;
        if (s < 0 || s >= t->n_states) { PyErr_SetString(PyExc_ValueError, "tables: a mark out of range"); goto done; }
        t->mark_rank[s] = (int32_t)rank;
    }
    t->labels = PyList_AsTuple(labels);
    ok = t->labels ? 0 : -1;
done:
    Py_XDECREF(items);
    Py_XDECREF(labels);
    return ok;
}

/* tables((scope, edges, eps, guarded, marks), regions, (reach, chars, local), accept, prune, labels)
 *   -> Tables: see dfa.py's _compiled_tables(), which makes the arguments. */
static PyObject *tables(PyObject *self, PyObject *args) {
    PyObject *scope, *edges, *eps, *guarded, *marks, *regions, *reach, *chars, *local, *labels_out;
    int accept, prune;
    if (!PyArg_ParseTuple(args, "(OOOOO!)O(OOO)ipO!", &scope, &edges, &eps, &guarded, &PyDict_Type, &marks, &regions,
                          &reach, &chars, &local, &accept, &prune, &PyDict_Type, &labels_out)) return NULL;
    Tables *t = PyObject_New(Tables, &TablesType);
    if (!t) return NULL;
    memset((char *)t + sizeof(PyObject), 0, sizeof(Tables) - sizeof(PyObject));
    PyObject *capsule = NULL; /* the result */
    int64_t *scratch = NULL;
    int failed = 0;
    if (!checked_list(scope, "scope", -1) || !checked_list(regions, "regions", -1)) goto fail;
    Py_ssize_t n = t->n_states = PyList_GET_SIZE(scope), m = t->n_regions = PyList_GET_SIZE(regions);
    if (!checked_list(reach, "reach", n) || !checked_list(chars, "chars", n) || !checked_list(local, "local", n)) goto fail;
    if (accept < 0 || accept >= n) { PyErr_SetString(PyExc_ValueError, "tables: accept out of range"); goto fail; }
    t->accept = accept;
    t->prune = prune;
    t->scope = alloc(n, 4, &failed); t->unit_region = alloc(n, 4, &failed); t->mark_rank = alloc(n, 4, &failed);
    t->reach = alloc(n, 1, &failed); t->is_unit = alloc(n, 1, &failed); t->is_sep = alloc(n, 1, &failed);
    t->chars = alloc(n, 8, &failed); t->local = alloc(n, 8, &failed);
    t->seen = alloc(n, 4, &failed); t->memo_at = alloc(n, 4, &failed); t->memo = alloc(n, 8, &failed);
    t->best = alloc(n, 8, &failed); t->best_at = alloc(n, 4, &failed);
    t->out = alloc(n, 4, &failed); t->active = alloc(m, 1, &failed); t->active_list = alloc(m, 4, &failed);
    scratch = alloc(n, 8, &failed);
    if (failed) { PyErr_NoMemory(); goto fail; }
    if (read_ints(scope, n, scratch) < 0) goto fail;
    for (Py_ssize_t s = 0; s < n; s++) {
        if (scratch[s] < TOP || scratch[s] >= m) { PyErr_SetString(PyExc_ValueError, "tables: a scope out of range"); goto fail; }
        t->scope[s] = (int32_t)scratch[s];
        t->unit_region[s] = -1;
        t->mark_rank[s] = -1;
    }
    if (read_ints(reach, n, scratch) < 0) goto fail;
    for (Py_ssize_t s = 0; s < n; s++) t->reach[s] = scratch[s] != 0;
    if (read_ints(chars, n, t->chars) < 0 || read_ints(local, n, t->local) < 0) goto fail;
    if (read_regions(t, regions) < 0 || read_cells(t, edges, eps, guarded) < 0 || read_marks(t, marks) < 0) goto fail;
    /* a closure pushes its targets and each visited state's epsilon edges once; a state's moves
     * are at most all the edges */
    t->stack_cap = n + t->eps_at[n] + t->guard_at[n] + 1;
    t->most_moves = t->edge_at[n] + 1;
    t->stack = alloc(t->stack_cap, 4, &failed);
    t->moves = alloc(t->most_moves, sizeof(Move), &failed);
    t->targets = alloc(t->most_moves, 4, &failed); t->incs = alloc(t->most_moves, 4, &failed);
    t->resets = alloc(t->guard_at[n], 4, &failed);
    t->n_slots = 64;
    t->slots = alloc(t->n_slots, 4, &failed); t->slot_hash = alloc(t->n_slots, 8, &failed);
    t->slot_at = alloc(t->n_slots, sizeof(Py_ssize_t), &failed);
    t->keys_cap = 64;
    t->key_at = alloc(t->keys_cap, sizeof(Py_ssize_t), &failed);
    t->key_objs = alloc(t->keys_cap, sizeof(PyObject *), &failed);
    t->step_at = alloc(t->keys_cap, sizeof(Py_ssize_t), &failed);
    t->step_data_at = alloc(t->keys_cap, sizeof(Py_ssize_t), &failed);
    t->pool_cap = 1024;
    t->pool = alloc(t->pool_cap, 8, &failed);
    if (failed) { PyErr_NoMemory(); goto fail; }
    for (Py_ssize_t i = 0; i < t->n_slots; i++) t->slots[i] = -1;
    t->pool_len = 2; /* the dead state: no NFA states, no classes (found by its emptiness, not indexed) */
    t->key_at[0] = 0;
    t->step_at[0] = -1;
    t->n_keys = 1;
    Py_INCREF(labels_out);
    t->marks = labels_out;
    for (int k = 0; k < 256; k++) t->found_key[2 * k] = -1;
    capsule = (PyObject *)t;
    t = NULL;
fail:
    Py_XDECREF(t);
    PyMem_Free(scratch);
    return capsule;
}

/* -- distances (costs.py) ----------------------------------------------------------------------- */

static int pool_room(void **data, Py_ssize_t len, Py_ssize_t *cap, Py_ssize_t more, Py_ssize_t size);

/* Append (node, left) to level ``k`` (0 or 1) of the search, which has ``*len`` items. -1 on error. */
static int level_push(Tables *t, int k, Py_ssize_t *len, int32_t node, int64_t left) {
    if (pool_room((void **)&t->levels[k], *len, &t->level_caps[k], 2, 8) < 0) return -1;
    t->levels[k][(*len)++] = node;
    t->levels[k][(*len)++] = left;
    return 0;
}

/* Costs.text_dist: fewest bytes from NFA state ``s`` to its text region's loop spending at most
 * ``budget`` characters (a unit state's byte costs one). Past the shortcuts, a search by
 * distance: a state reached again with no more characters left than before is dropped (more left
 * never hurts), so each level holds the pairs that improve. -2 on error. */
static int64_t text_dist(Tables *t, int32_t s, int64_t budget) {
    int64_t chars = t->chars[s], local = t->local[s];
    if (budget >= INF || chars >= INF || chars > budget) return chars <= budget ? local : INF;
    if (local <= budget) return local;
    Py_ssize_t slot = (Py_ssize_t)(((uint64_t)s * 1000003u + (uint64_t)budget) & 255);
    if (t->found_key[2 * slot] == s && t->found_key[2 * slot + 1] == budget) return t->found_dist[slot];
    if (++t->best_generation == 0) {
        memset(t->best_at, 0, t->n_states * 4);
        t->best_generation = 1;
    }
    uint32_t gen = t->best_generation;
    int32_t rid = t->scope[s], loop = t->loop[rid];
    Py_ssize_t n_here = 0, n_next = 0;
    int here = 0;
    int64_t result = INF;
    t->best_at[s] = gen;
    t->best[s] = budget;
    if (level_push(t, here, &n_here, s, budget) < 0) return -2;
    for (int64_t d = 0; n_here && result == INF; d++) {
        for (Py_ssize_t i = 0; i < n_here; i += 2) { /* grows while it is read (epsilon moves) */
            int32_t node = (int32_t)t->levels[here][i];
            int64_t left = t->levels[here][i + 1];
            if (left < t->best[node]) continue; /* reached with more left since */
            if (node == loop) { result = d; break; }
            for (Py_ssize_t p = t->eps_at[node]; p < t->eps_at[node + 1]; p++) {
                int32_t dst = t->eps_dst[p];
                if (t->scope[dst] != rid || (t->best_at[dst] == gen && t->best[dst] >= left)) continue;
                t->best_at[dst] = gen;
                t->best[dst] = left;
                if (level_push(t, here, &n_here, dst, left) < 0) return -2;
            }
            int64_t after = left - t->is_unit[node];
            if (after < 0) continue;
            for (Py_ssize_t e = t->edge_at[node]; e < t->edge_at[node + 1]; e++) {
                int32_t dst = t->edge_dst[e];
                if (t->scope[dst] != rid || (t->best_at[dst] == gen && t->best[dst] >= after)) continue;
                t->best_at[dst] = gen;
                t->best[dst] = after;
                if (level_push(t, 1 - here, &n_next, dst, after) < 0) return -2;
            }
        }
        here = 1 - here;
        n_here = n_next;
        n_next = 0;
    }
    t->found_key[2 * slot] = s;
    t->found_key[2 * slot + 1] = budget;
    t->found_dist[slot] = result;
    return result;
}

/* Costs.cost: fewest bytes to acceptance from NFA state ``s`` with counters at ``classes``,
 * memoised for one Costs.of (memo_at == memo_generation). -2 on error. */
static int64_t cost(Tables *t, int32_t s, const Classes *classes) {
    if (t->memo_at[s] == t->memo_generation) return t->memo[s];
    int32_t r = t->scope[s];
    int64_t result;
    if (r == TOP) {
        result = t->local[s];
    } else {
        int64_t cls = class_or_mid(classes, r), out = cost(t, t->exit[r], classes);
        if (out == -2) return -2;
        if (t->text[r]) {
            int64_t left = cls == MID || t->high[r] == NONE ? INF : t->high[r] - cls;
            int64_t d = text_dist(t, s, left);
            if (d == -2) return -2;
            result = sat_add(d, out);
        } else {
            int64_t step = sat_add(t->sep_min[r], t->unit_min[r]);
            int64_t next = cls == MID ? MID : class_of(t, r, cls + 1);
            int64_t after_one = sat_add(next == MID ? 0 : sat_mul(t->low[r] - next > 0 ? t->low[r] - next : 0, step), out);
            if (s == t->decide[r] || s == t->loop[r]) {
                result = INF;
                if (cls == MID || cls >= t->low[r]) result = out;
                if (cls == MID || t->high[r] == NONE || cls < t->high[r]) {
                    int64_t first = s == t->loop[r] && t->has_sep[r] ? t->sep_min[r] : 0;
                    int64_t via = sat_add(sat_add(first, t->unit_min[r]), after_one);
                    if (via < result) result = via;
                }
            } else if (t->is_unit[s] || t->is_sep[s]) {
                result = sat_add(t->local[s], after_one);
            } else {
                int64_t owed = cls == MID ? 0 : sat_mul(t->low[r] - cls > 0 ? t->low[r] - cls : 0, step);
                result = sat_add(sat_add(t->local[s], owed), out);
            }
        }
    }
    if (result > INF) result = INF;
    t->memo_at[s] = t->memo_generation;
    t->memo[s] = result;
    return result;
}

/* Costs.of: the fewest bytes from any of ``states`` (-1: none reaches acceptance); -2 on error. */
static int64_t distance(Tables *t, const int32_t *states, Py_ssize_t n, const Classes *classes) {
    if (++t->memo_generation == 0) {
        memset(t->memo_at, 0, t->n_states * 4);
        t->memo_generation = 1;
    }
    int64_t best = INF;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t d = t->scope[states[i]] == TOP ? t->local[states[i]] : cost(t, states[i], classes);
        if (d == -2) return -2;
        if (d < best) best = d;
    }
    return best < INF ? best : -1;
}

/* -- closure ---------------------------------------------------------------------------------- */

static int viable(const Tables *t, int32_t s, const Classes *classes) {
    if (!t->reach[s]) return 0;
    int32_t r = t->scope[s];
    if (r == TOP) return 1;
    int64_t cls = class_or_mid(classes, r);
    if (cls == MID || t->high[r] == NONE || !t->text[r]) return 1;
    return t->chars[s] <= t->high[r] - cls;
}

static int push(Tables *t, Py_ssize_t *top, int32_t s) {
    if (*top >= t->stack_cap) { PyErr_SetString(PyExc_RuntimeError, "expand: closure stack overflow"); return -1; }
    t->stack[(*top)++] = s;
    return 0;
}

/* LazyDFA._closure of targets[0..k) with counter classes ``classes`` (changed in place to the
 * classes after the guards): the viable states, sorted, into t->out (their count returned); the
 * active regions' classes into ``kept``, sorted by region; the regions reset into t->resets, sorted
 * and distinct (their count in *n_resets). -1 on error. */
static Py_ssize_t closure(Tables *t, const int32_t *targets, Py_ssize_t k, Classes *classes, Classes *kept,
                          Py_ssize_t *n_resets) {
    if (++t->generation == 0) {
        memset(t->seen, 0, t->n_states * 4);
        t->generation = 1;
    }
    uint32_t gen = t->generation;
    Py_ssize_t top = 0, n_out = 0, resets = 0;
    for (Py_ssize_t i = k - 1; i >= 0; i--) if (push(t, &top, targets[i]) < 0) return -1;
    while (top) {
        int32_t s = t->stack[--top];
        if (t->seen[s] == gen) continue;
        t->seen[s] = gen;
        t->out[n_out++] = s;
        for (Py_ssize_t p = t->eps_at[s]; p < t->eps_at[s + 1]; p++) {
            if (t->seen[t->eps_dst[p]] != gen && push(t, &top, t->eps_dst[p]) < 0) return -1;
        }
        for (Py_ssize_t g = t->guard_at[s]; g < t->guard_at[s + 1]; g++) {
            int32_t d = t->guard_dst[g], r = t->guard_region[g];
            int pass = 1;
            if (t->guard_kind[g] == RESET) {
                if (classes_set(classes, r, class_of(t, r, 0)) < 0) return -1;
                t->resets[resets++] = r;
            } else {
                int64_t cls;
                if (!classes_get(classes, r, &cls)) {
                    PyErr_Format(PyExc_KeyError, "expand: a guard of region %d with no counter class", (int)r);
                    return -1;
                }
                pass = t->guard_kind[g] == BELOW_HIGH ? below_high(t, r, cls) : at_least_low(t, r, cls);
            }
            if (pass && t->seen[d] != gen && push(t, &top, d) < 0) return -1;
        }
    }
    /* the viable states; their regions and the enclosing ones are the active ones */
    Py_ssize_t n_viable = 0, n_active = 0;
    for (Py_ssize_t i = 0; i < n_out; i++) {
        int32_t s = t->out[i];
        if (t->prune && !viable(t, s, classes)) continue;
        t->out[n_viable++] = s;
        for (int32_t r = t->scope[s]; r != TOP && !t->active[r]; r = t->parent[r]) {
            t->active[r] = 1;
            t->active_list[n_active++] = r;
        }
    }
    qsort(t->out, n_viable, 4, cmp_i32);
    qsort(t->active_list, n_active, 4, cmp_i32);
    kept->n = 0;
    for (Py_ssize_t i = 0; i < n_active; i++) {
        int32_t r = t->active_list[i];
        t->active[r] = 0;
        int64_t cls;
        if (!classes_get(classes, r, &cls)) {
            PyErr_Format(PyExc_KeyError, "expand: active region %d has no counter class", (int)r);
            return -1;
        }
        if (classes_set(kept, r, cls) < 0) return -1;
    }
    qsort(t->resets, resets, 4, cmp_i32);
    Py_ssize_t distinct = 0;
    for (Py_ssize_t i = 0; i < resets; i++) {
        if (!distinct || t->resets[distinct - 1] != t->resets[i]) t->resets[distinct++] = t->resets[i];
    }
    *n_resets = distinct;
    return n_viable;
}

/* -- interning ------------------------------------------------------------------------------- */

static uint64_t key_hash(const int32_t *states, Py_ssize_t n, const Classes *kept) {
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)n;
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ (uint64_t)(uint32_t)states[i]) * 1099511628211ULL;
    for (Py_ssize_t i = 0; i < kept->n; i++) {
        h = (h ^ (uint64_t)(uint32_t)kept->items[i].region) * 1099511628211ULL;
        h = (h ^ (uint64_t)kept->items[i].cls) * 1099511628211ULL;
    }
    return h ^ (h >> 29);
}

/* Whether the key stored at ``pool[at]`` ([n, states..., m, (region, class)...]) is this one. */
static int key_equal(const Tables *t, Py_ssize_t at, const int32_t *states, Py_ssize_t n, const Classes *kept) {
    const int64_t *p = t->pool + at;
    if (p[0] != n) return 0;
    for (Py_ssize_t i = 0; i < n; i++) if (p[1 + i] != states[i]) return 0;
    p += 1 + n;
    if (p[0] != kept->n) return 0;
    for (Py_ssize_t i = 0; i < kept->n; i++) {
        if (p[1 + 2 * i] != kept->items[i].region || p[2 + 2 * i] != kept->items[i].cls) return 0;
    }
    return 1;
}

/* The state of this key if it is in the index here, else -1 with its free slot in *slot. */
static long find(const Tables *t, uint64_t h, const int32_t *states, Py_ssize_t n, const Classes *kept,
                 Py_ssize_t *slot) {
    Py_ssize_t mask = t->n_slots - 1, i = (Py_ssize_t)(h & (uint64_t)mask);
    for (; t->slots[i] >= 0; i = (i + 1) & mask) {
        if (t->slot_hash[i] == h && key_equal(t, t->slot_at[i], states, n, kept)) return t->slots[i];
    }
    *slot = i;
    return -1;
}

/* Store the key of state ``sid`` (a new one, numbered n_keys) in the pool and the index (at
 * ``slot``, from find), growing them as needed. */
static int remember(Tables *t, Py_ssize_t slot, uint64_t h, const int32_t *states, Py_ssize_t n,
                    const Classes *kept, long sid) {
    if (sid != t->n_keys) {
        PyErr_SetString(PyExc_RuntimeError, "expand: states must be added in order");
        return -1;
    }
    Py_ssize_t need = t->pool_len + 2 + n + 2 * kept->n;
    if (need > t->pool_cap) {
        Py_ssize_t cap = t->pool_cap;
        while (cap < need) cap *= 2;
        int64_t *pool = PyMem_Realloc(t->pool, cap * 8);
        if (!pool) { PyErr_NoMemory(); return -1; }
        t->pool = pool;
        t->pool_cap = cap;
    }
    if (t->n_keys == t->keys_cap) {
        Py_ssize_t cap = t->keys_cap * 2;
        Py_ssize_t *at = PyMem_Realloc(t->key_at, cap * sizeof(Py_ssize_t));
        if (!at) { PyErr_NoMemory(); return -1; }
        t->key_at = at;
        PyObject **objs = PyMem_Realloc(t->key_objs, cap * sizeof(PyObject *));
        if (!objs) { PyErr_NoMemory(); return -1; }
        memset(objs + t->keys_cap, 0, (cap - t->keys_cap) * sizeof(PyObject *));
        t->key_objs = objs;
        Py_ssize_t *step_at = PyMem_Realloc(t->step_at, cap * sizeof(Py_ssize_t));
        if (!step_at) { PyErr_NoMemory(); return -1; }
        t->step_at = step_at;
        Py_ssize_t *data_at = PyMem_Realloc(t->step_data_at, cap * sizeof(Py_ssize_t));
        if (!data_at) { PyErr_NoMemory(); return -1; }
        t->step_data_at = data_at;
        t->keys_cap = cap;
    }
    Py_ssize_t at = t->pool_len;
    int64_t *p = t->pool + at;
    *p++ = n;
    for (Py_ssize_t i = 0; i < n; i++) *p++ = states[i];
    *p++ = kept->n;
    for (Py_ssize_t i = 0; i < kept->n; i++) { *p++ = kept->items[i].region; *p++ = kept->items[i].cls; }
    t->pool_len = need;
    t->key_at[sid] = at;
    t->key_objs[sid] = NULL;
    t->step_at[sid] = -1;
    t->n_keys++; /* counted once written: a reader never sees a half-made key */
    t->slots[slot] = (int32_t)sid;
    t->slot_hash[slot] = h;
    t->slot_at[slot] = at;
    if (++t->n_used * 2 <= t->n_slots) return 0;
    /* rehash into twice the slots */
    Py_ssize_t size = t->n_slots * 2, mask = size - 1;
    int32_t *slots = PyMem_Malloc(size * 4);
    uint64_t *hashes = PyMem_Malloc(size * 8);
    Py_ssize_t *ats = PyMem_Malloc(size * sizeof(Py_ssize_t));
    if (!slots || !hashes || !ats) {
        PyMem_Free(slots); PyMem_Free(hashes); PyMem_Free(ats);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < size; i++) slots[i] = -1;
    for (Py_ssize_t i = 0; i < t->n_slots; i++) {
        if (t->slots[i] < 0) continue;
        Py_ssize_t j = (Py_ssize_t)(t->slot_hash[i] & (uint64_t)mask);
        while (slots[j] >= 0) j = (j + 1) & mask;
        slots[j] = t->slots[i]; hashes[j] = t->slot_hash[i]; ats[j] = t->slot_at[i];
    }
    PyMem_Free(t->slots); PyMem_Free(t->slot_hash); PyMem_Free(t->slot_at);
    t->slots = slots; t->slot_hash = hashes; t->slot_at = ats; t->n_slots = size;
    return 0;
}

static PyObject *NeedsRoom; /* the exception: the arrays are full (see the module comment) */

/* Whether the DFA has handed over its arrays (tables.use); else -1 with an exception set. */
static int have_arrays(const Tables *t) {
    if (t->view.held == 5) return 0;
    PyErr_SetString(PyExc_RuntimeError, "tables: the DFA's arrays were not handed over (use)");
    return -1;
}

/* LazyDFA._intern of states[0..n) (sorted) with classes ``kept``: the state's number, found or
 * new; -1 on error (NeedsRoom where the arrays are full). A new state's flags and distance go to
 * the arrays, its label to the marks. */
static long intern(Tables *t, const int32_t *states, Py_ssize_t n, const Classes *kept) {
    if (!n) return 0;
    uint64_t h = key_hash(states, n, kept);
    Py_ssize_t slot;
    long sid = find(t, h, states, n, kept, &slot);
    if (sid >= 0) return sid;
    Py_ssize_t new_sid = t->n_keys;
    if (new_sid >= t->view.capacity) {
        PyErr_SetString(NeedsRoom, "the DFA's arrays are full");
        return -1;
    }
    int accepting = 0;
    int32_t rank = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (states[i] == t->accept) accepting = 1;
        int32_t r = t->mark_rank[states[i]];
        if (r >= 0 && (rank < 0 || r < rank)) rank = r;
    }
    int64_t dist = distance(t, states, n, kept);
    if (dist == -2) return -1;
    ((uint8_t *)t->view.accepting.buf)[new_sid] = (uint8_t)accepting;
    ((uint8_t *)t->view.exits.buf)[new_sid] = (uint8_t)(accepting || rank >= 0);
    ((int64_t *)t->view.dist.buf)[new_sid] = dist;
    if (rank >= 0) {
        PyObject *number = PyLong_FromSsize_t(new_sid);
        int bad = !number || PyDict_SetItem(t->marks, number, PyTuple_GET_ITEM(t->labels, rank)) < 0;
        Py_XDECREF(number);
        if (bad) return -1;
    }
    /* (adding the label may have run the collector: the slot is looked up again) */
    if (find(t, h, states, n, kept, &slot) >= 0) {
        PyErr_SetString(PyExc_RuntimeError, "expand: a state was interned twice");
        return -1;
    }
    if (remember(t, slot, h, states, n, kept, (long)new_sid) < 0) return -1;
    return (long)new_sid;
}

/* Read a key (Python's (frozenset, ((region, class), ...))) into sorted C arrays. */
static Py_ssize_t parse_key(Tables *t, PyObject *key, int32_t *states, Classes *classes) {
    if (!PyTuple_Check(key) || PyTuple_GET_SIZE(key) != 2 || !PyTuple_Check(PyTuple_GET_ITEM(key, 1))) {
        PyErr_SetString(PyExc_TypeError, "a state key is (frozenset of NFA states, ((region, class), ...))");
        return -1;
    }
    PyObject *iter = PyObject_GetIter(PyTuple_GET_ITEM(key, 0)), *item, *pairs = PyTuple_GET_ITEM(key, 1);
    if (!iter) return -1;
    Py_ssize_t n = 0;
    int bad = 0;
    while ((item = PyIter_Next(iter))) {
        int64_t s = as_i64(item, &bad);
        Py_DECREF(item);
        if (bad || s < 0 || s >= t->n_states || n >= t->n_states) { bad = 1; break; }
        states[n++] = (int32_t)s;
    }
    Py_DECREF(iter);
    if (bad || PyErr_Occurred()) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a state key's NFA state is out of range");
        return -1;
    }
    qsort(states, n, 4, cmp_i32);
    classes->n = 0;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(pairs); j++) {
        PyObject *pair = PyTuple_GET_ITEM(pairs, j);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "a state key's class is not (region, class)");
            return -1;
        }
        int64_t r = as_i64(PyTuple_GET_ITEM(pair, 0), &bad), c = as_i64(PyTuple_GET_ITEM(pair, 1), &bad);
        if (bad || r < 0 || r >= t->n_regions) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a state key's region is out of range");
            return -1;
        }
        if (classes_set(classes, (int32_t)r, c) < 0) return -1;
    }
    return n;
}

/* Read state ``sid``'s key from the pool: its NFA states into ``states`` (sorted), its classes. */
static Py_ssize_t stored_key(const Tables *t, long sid, int32_t *states, Classes *classes) {
    const int64_t *p = t->pool + t->key_at[sid];
    Py_ssize_t n = (Py_ssize_t)*p++;
    for (Py_ssize_t i = 0; i < n; i++) states[i] = (int32_t)*p++;
    Py_ssize_t m = (Py_ssize_t)*p++;
    classes->n = 0;
    for (Py_ssize_t i = 0; i < m; i++, p += 2) if (classes_set(classes, (int32_t)p[0], p[1]) < 0) return -1;
    return n;
}

/* -- the states, seen from Python ---------------------------------------------------------------- */

static Py_ssize_t keys_length(PyObject *self) { return ((Tables *)self)->n_keys; }

/* tables[sid]: state ``sid``'s key (frozenset of NFA states, ((region, class), ...)), made once. */
static PyObject *keys_item(PyObject *self, Py_ssize_t sid) {
    Tables *t = (Tables *)self;
    if (sid < 0 || sid >= t->n_keys) { PyErr_SetString(PyExc_IndexError, "no such state"); return NULL; }
    if (t->key_objs[sid]) { Py_INCREF(t->key_objs[sid]); return t->key_objs[sid]; }
    /* copied out first: making the objects may run Python, and another thread may add states */
    Classes classes = {0};
    int32_t *states = PyMem_Malloc((t->n_states + 1) * 4);
    PyObject *key = NULL;
    if (!states) return PyErr_NoMemory();
    Py_ssize_t n = stored_key(t, (long)sid, states, &classes);
    PyObject *items = n < 0 ? NULL : PyTuple_New(n), *set = NULL, *pairs = NULL;
    for (Py_ssize_t i = 0; items && i < n; i++) {
        PyObject *v = PyLong_FromLong(states[i]);
        if (!v) { Py_CLEAR(items); break; }
        PyTuple_SET_ITEM(items, i, v);
    }
    if (items && (set = PyFrozenSet_New(items)) && (pairs = PyTuple_New(classes.n))) {
        int bad = 0;
        for (Py_ssize_t i = 0; i < classes.n && !bad; i++) {
            PyObject *pair = Py_BuildValue("(iL)", (int)classes.items[i].region, (long long)classes.items[i].cls);
            if (!pair) bad = 1; else PyTuple_SET_ITEM(pairs, i, pair);
        }
        if (!bad) key = PyTuple_Pack(2, set, pairs);
    }
    Py_XDECREF(items); Py_XDECREF(set); Py_XDECREF(pairs);
    PyMem_Free(states);
    PyMem_Free(classes.items);
    if (!key) return NULL;
    if (t->key_objs[sid]) { /* made meanwhile by another thread */
        Py_DECREF(key);
        Py_INCREF(t->key_objs[sid]);
        return t->key_objs[sid];
    }
    Py_INCREF(key);
    t->key_objs[sid] = key;
    return key;
}

/* tables.classes(sid): state ``sid``'s counter classes, ((region, class), ...), without its NFA states. */
static PyObject *keys_classes(PyObject *self, PyObject *arg) {
    Tables *t = (Tables *)self;
    long sid = PyLong_AsLong(arg);
    if (sid == -1 && PyErr_Occurred()) return NULL;
    if (sid < 0 || sid >= t->n_keys) { PyErr_SetString(PyExc_IndexError, "no such state"); return NULL; }
    if (t->key_objs[sid]) {
        PyObject *classes = PyTuple_GET_ITEM(t->key_objs[sid], 1);
        Py_INCREF(classes);
        return classes;
    }
    const int64_t *p = t->pool + t->key_at[sid];
    p += 1 + p[0];
    Py_ssize_t m = (Py_ssize_t)p[0];
    int64_t pairs_[64];
    if (m > 32) { /* (rare: a deep nesting) the whole key, made once */
        PyObject *key = keys_item(self, sid), *classes;
        if (!key) return NULL;
        classes = PyTuple_GET_ITEM(key, 1);
        Py_INCREF(classes);
        Py_DECREF(key);
        return classes;
    }
    memcpy(pairs_, p + 1, 2 * m * 8); /* copied out first: making the objects may run Python */
    PyObject *out = PyTuple_New(m);
    for (Py_ssize_t i = 0; out && i < m; i++) {
        PyObject *pair = Py_BuildValue("(iL)", (int)pairs_[2 * i], (long long)pairs_[2 * i + 1]);
        if (!pair) { Py_CLEAR(out); break; }
        PyTuple_SET_ITEM(out, i, pair);
    }
    return out;
}

/* tables.find(key) -> the state with this key, or -1. */
static PyObject *keys_find(PyObject *self, PyObject *key) {
    Tables *t = (Tables *)self;
    Classes classes = {0};
    int32_t *states = PyMem_Malloc((t->n_states + 1) * 4);
    if (!states) return PyErr_NoMemory();
    Py_ssize_t n = parse_key(t, key, states, &classes), slot;
    long sid = n < 0 ? -2 : n == 0 ? 0 : find(t, key_hash(states, n, &classes), states, n, &classes, &slot);
    PyMem_Free(states);
    PyMem_Free(classes.items);
    return sid == -2 ? NULL : PyLong_FromLong(sid);
}

/* tables.add(key) -> the new state's number: a state interned in Python (its flags and distance
 * are the caller's to write; the caller holds the DFA's lock and checked it is new). */
static PyObject *keys_add(PyObject *self, PyObject *key) {
    Tables *t = (Tables *)self;
    Classes classes = {0};
    int32_t *states = PyMem_Malloc((t->n_states + 1) * 4);
    if (!states) return PyErr_NoMemory();
    PyObject *result = NULL;
    Py_ssize_t n = parse_key(t, key, states, &classes), slot;
    if (n == 0) {
        PyErr_SetString(PyExc_ValueError, "the dead state is there from the start");
    } else if (n > 0) {
        uint64_t h = key_hash(states, n, &classes);
        if (find(t, h, states, n, &classes, &slot) >= 0) {
            PyErr_SetString(PyExc_ValueError, "the state is there already");
        } else {
            long sid = (long)t->n_keys;
            if (remember(t, slot, h, states, n, &classes, sid) == 0) {
                Py_INCREF(key);
                t->key_objs[sid] = key;
                result = PyLong_FromLong(sid);
            }
        }
    }
    PyMem_Free(states);
    PyMem_Free(classes.items);
    return result;
}

/* -- expand --------------------------------------------------------------------------------- */

/* A tuple of ints. */
static PyObject *int_tuple(const int32_t *items, Py_ssize_t n) {
    PyObject *out = PyTuple_New(n);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *v = PyLong_FromLong(items[i]);
        if (!v) { Py_CLEAR(out); break; }
        PyTuple_SET_ITEM(out, i, v);
    }
    return out;
}

/* Room for ``more`` items in a growable int16 / int32 pool. */
static int pool_room(void **data, Py_ssize_t len, Py_ssize_t *cap, Py_ssize_t more, Py_ssize_t size) {
    if (len + more <= *cap) return 0;
    Py_ssize_t grown = *cap ? *cap : 1024;
    while (grown < len + more) grown *= 2;
    void *p = PyMem_Realloc(*data, grown * size);
    if (!p) { PyErr_NoMemory(); return -1; }
    *data = p;
    *cap = grown;
    return 0;
}

/* One step of the state being expanded: its counters stepped and reset, and whether a counter
 * that can still matter changes (dfa.py's _Step), appended to step_data. */
static int add_step(Tables *t, const int32_t *incs, Py_ssize_t n_incs, Py_ssize_t n_resets) {
    if (pool_room((void **)&t->step_data, t->step_data_len, &t->step_data_cap, 3 + n_incs + n_resets, 4) < 0) return -1;
    int32_t *p = t->step_data + t->step_data_len, tracked = 0;
    *p++ = (int32_t)n_incs;
    for (Py_ssize_t i = 0; i < n_incs; i++) {
        *p++ = incs[i];
        tracked |= t->high[incs[i]] != NONE || t->low[incs[i]] > 0;
    }
    *p++ = (int32_t)n_resets;
    for (Py_ssize_t i = 0; i < n_resets; i++) {
        *p++ = t->resets[i];
        tracked |= t->high[t->resets[i]] != NONE || t->low[t->resets[i]] > 0;
    }
    *p++ = tracked;
    t->step_data_len = p - t->step_data;
    return 0;
}

/* tables.steps(sid) -> (step number per byte (256 native int16), [(incs, resets, tracked), ...] for
 * steps 1, 2, ...), or None for a state whose bytes step no counter (LazyDFA.actions makes its _Step objects). */
static PyObject *tables_steps(PyObject *self, PyObject *arg) {
    Tables *t = (Tables *)self;
    long sid = PyLong_AsLong(arg);
    if (sid == -1 && PyErr_Occurred()) return NULL;
    if (sid < 0 || sid >= t->n_keys) { PyErr_SetString(PyExc_IndexError, "no such state"); return NULL; }
    if (t->step_at[sid] < 0) Py_RETURN_NONE;
    /* copied out first: making the objects may run Python */
    int16_t numbers[256];
    memcpy(numbers, t->step_of + t->step_at[sid], sizeof numbers);
    Py_ssize_t at = t->step_data_at[sid], count = t->step_data[at++], len = 0;
    for (Py_ssize_t k = 0, q = at; k < count; k++) {
        Py_ssize_t n_incs = t->step_data[q], n_resets = t->step_data[q + 1 + n_incs];
        q += 3 + n_incs + n_resets;
        len = q - at;
    }
    int32_t *data = PyMem_Malloc((len + 1) * 4);
    if (!data) return PyErr_NoMemory();
    memcpy(data, t->step_data + at, len * 4);
    PyObject *steps = PyList_New(0), *raw = NULL, *result = NULL;
    int bad = !steps;
    for (Py_ssize_t k = 0, q = 0; !bad && k < count; k++) {
        Py_ssize_t n_incs = data[q], n_resets = data[q + 1 + n_incs];
        PyObject *inc_t = int_tuple(data + q + 1, n_incs), *reset_t = int_tuple(data + q + 2 + n_incs, n_resets);
        PyObject *step = inc_t && reset_t ? PyTuple_Pack(3, inc_t, reset_t,
                                                         data[q + 2 + n_incs + n_resets] ? Py_True : Py_False) : NULL;
        bad = !step || PyList_Append(steps, step) < 0;
        Py_XDECREF(inc_t); Py_XDECREF(reset_t); Py_XDECREF(step);
        q += 3 + n_incs + n_resets;
    }
    if (!bad && (raw = PyBytes_FromStringAndSize((const char *)numbers, sizeof numbers)))
        result = PyTuple_Pack(2, raw, steps);
    PyMem_Free(data);
    Py_XDECREF(steps); Py_XDECREF(raw);
    return result;
}

/* What each_move() does with one interval's move: bytes [lo, hi) lead to ``found``, stepping
 * t->incs[0..n_incs) and resetting t->resets[0..n_resets). 0 goes on, 1 stops, -1 is an error. */
typedef int (*Visit)(Tables *t, void *ctx, int32_t lo, int32_t hi, long found, Py_ssize_t n_incs, Py_ssize_t n_resets);

/* dfa.py's _moves_of: the moves of state ``sid`` by byte interval, in byte order, each target
 * closed and interned, handed to ``visit``. 0 when all were visited, 1 when ``visit`` stopped,
 * -1 on error. */
static int each_move(Tables *t, long sid, Visit visit, void *ctx) {
    Py_ssize_t n = stored_key(t, sid, t->out, &t->cls);
    if (n < 0) return -1;
    /* the moves of every NFA state, but the unit starts of regions at their upper bound */
    Py_ssize_t n_moves = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t s = t->out[i], region = t->unit_region[s];
        if (region >= 0) {
            int64_t c;
            if (!classes_get(&t->cls, region, &c)) {
                PyErr_Format(PyExc_KeyError, "expand: a unit of region %d with no counter class", (int)region);
                return -1;
            }
            if (!below_high(t, region, c)) continue;
        }
        for (Py_ssize_t e = t->edge_at[s]; e < t->edge_at[s + 1]; e++) {
            Move mv = {t->edge_lo[e], t->edge_hi[e], t->edge_dst[e], region};
            t->moves[n_moves++] = mv;
        }
    }
    qsort(t->moves, n_moves, sizeof(Move), cmp_move);
    /* the intervals between consecutive cuts (every lo and hi + 1), each with the moves that
     * cover it (a move covers an interval whole or not at all) */
    uint8_t is_cut[258];
    memset(is_cut, 0, sizeof is_cut);
    for (Py_ssize_t j = 0; j < n_moves; j++) is_cut[t->moves[j].lo] = is_cut[t->moves[j].hi + 1] = 1;
    int32_t lo = -1;
    Py_ssize_t first = 0; /* moves before ``first`` end before the interval */
    for (int32_t c = 0; c <= 256; c++) {
        if (!is_cut[c]) continue;
        if (lo < 0) { lo = c; continue; }
        int32_t hi = c;
        Py_ssize_t k = 0, n_incs = 0;
        while (first < n_moves && t->moves[first].hi < lo) first++;
        for (Py_ssize_t j = first; j < n_moves && t->moves[j].lo <= lo; j++) {
            const Move *mv = &t->moves[j];
            if (mv->hi + 1 < hi) continue;
            int dup = 0;
            for (Py_ssize_t q = 0; q < k && !dup; q++) dup = t->targets[q] == mv->dst;
            if (!dup) t->targets[k++] = mv->dst;
            if (mv->region >= 0) {
                dup = 0;
                for (Py_ssize_t q = 0; q < n_incs && !dup; q++) dup = t->incs[q] == mv->region;
                if (!dup) t->incs[n_incs++] = mv->region;
            }
        }
        int32_t here = lo;
        lo = hi;
        if (!k) continue;
        /* LazyDFA._move: the counters stepped, then the targets' closure, interned */
        if (classes_copy(&t->after, &t->cls) < 0) return -1;
        qsort(t->incs, n_incs, 4, cmp_i32);
        for (Py_ssize_t q = 0; q < n_incs; q++) {
            int64_t cls;
            if (!classes_get(&t->after, t->incs[q], &cls)) {
                PyErr_Format(PyExc_KeyError, "expand: a counted move of region %d with no class", (int)t->incs[q]);
                return -1;
            }
            if (classes_set(&t->after, t->incs[q], cls == MID ? MID : class_of(t, t->incs[q], cls + 1)) < 0) return -1;
        }
        qsort(t->targets, k, 4, cmp_i32);
        Py_ssize_t n_resets;
        Py_ssize_t n_viable = closure(t, t->targets, k, &t->after, &t->kept, &n_resets);
        if (n_viable < 0) return -1;
        long found = intern(t, t->out, n_viable, &t->kept);
        if (found < 0) return -1;
        int done = visit(t, ctx, here, hi, found, n_incs, n_resets);
        if (done) return done;
    }
    return 0;
}

/* expand's visitor: the row and the counter steps of the state being expanded. */
typedef struct {
    int32_t row[256];
    int16_t step_of[256];
    Py_ssize_t n_steps, data_at;
} Expansion;

static int fill_row(Tables *t, void *ctx, int32_t lo, int32_t hi, long found, Py_ssize_t n_incs, Py_ssize_t n_resets) {
    Expansion *x = ctx;
    for (int32_t b = lo; b < hi; b++) x->row[b] = (int32_t)found;
    if (!n_incs && !n_resets) return 0;
    if (!x->n_steps) { /* the state's step count goes first */
        if (pool_room((void **)&t->step_data, t->step_data_len, &t->step_data_cap, 1, 4) < 0) return -1;
        x->data_at = t->step_data_len++;
    }
    x->n_steps++;
    for (int32_t b = lo; b < hi; b++) x->step_of[b] = (int16_t)x->n_steps;
    return add_step(t, t->incs, n_incs, n_resets);
}

/* Build the row of ``sid`` (nothing if it is built): 0, or -1 with an exception set (NeedsRoom
 * where the arrays are full). */
static int expand_state(Tables *t, long sid) {
    Expansion x;
    memset(&x, 0, sizeof x);
    x.data_at = t->step_data_len;
    if (have_arrays(t) < 0) return -1;
    if (sid >= 0 && sid < t->view.capacity && ((uint8_t *)t->view.expanded.buf)[sid]) return 0;
    if (sid <= 0 || sid >= t->n_keys || sid >= t->view.capacity) {
        PyErr_SetString(PyExc_ValueError, "expand: no such state");
        return -1;
    }
    if (each_move(t, sid, fill_row, &x) < 0) {
        if (x.n_steps) t->step_data_len = x.data_at; /* drop the half-written steps */
        return -1;
    }
    /* the row (interning new states did not replace the arrays: they are Python's) */
    memcpy((int32_t *)t->view.table.buf + (Py_ssize_t)sid * 256, x.row, sizeof x.row);
    if (x.n_steps) {
        if (pool_room((void **)&t->step_of, t->step_of_len, &t->step_of_cap, 256, 2) < 0) return -1;
        memcpy(t->step_of + t->step_of_len, x.step_of, sizeof x.step_of);
        t->step_data[x.data_at] = (int32_t)x.n_steps;
        t->step_data_at[sid] = x.data_at;
        t->step_at[sid] = t->step_of_len;
        t->step_of_len += 256;
    }
    ((uint8_t *)t->view.expanded.buf)[sid] = 1;
    return 0;
}

/* expand_state for the compiled trie walk, through the capsule ``expand_c`` (called under the
 * DFA's lock, with the arrays the DFA handed over): 0 done, 1 the arrays are full (no exception
 * set: the walk returns to Python, which grows them), -1 an error with an exception set. */
static int expand_c(PyObject *tables, long sid) {
    if (!PyObject_TypeCheck(tables, &TablesType)) {
        PyErr_SetString(PyExc_TypeError, "expand: tables must come from tables()");
        return -1;
    }
    if (expand_state((Tables *)tables, sid) == 0) return 0;
    if (!PyErr_ExceptionMatches(NeedsRoom)) return -1;
    PyErr_Clear();
    return 1;
}

/* short_step's visitor: the first interval whose target keeps to a shortest path. */
typedef struct { int64_t want; int32_t byte; long state; } Shortest;

static int first_shortest(Tables *t, void *ctx, int32_t lo, int32_t hi, long found, Py_ssize_t n_incs,
                          Py_ssize_t n_resets) {
    Shortest *w = ctx;
    if (found == 0 || ((int64_t *)t->view.dist.buf)[found] != w->want) return 0;
    w->byte = lo;
    w->state = found;
    return 1;
}

/* tables.short_step(sid) -> (byte, state): LazyDFA._short_step, the smallest byte whose move
 * keeps to a shortest path and where it leads (moves made in byte order until one is found). */
static PyObject *tables_short_step(PyObject *self, PyObject *arg) {
    Tables *t = (Tables *)self;
    long sid = PyLong_AsLong(arg);
    if (sid == -1 && PyErr_Occurred()) return NULL;
    if (sid <= 0 || sid >= t->n_keys) { PyErr_SetString(PyExc_IndexError, "no such state"); return NULL; }
    if (have_arrays(t) < 0) return NULL;
    Shortest w = {((int64_t *)t->view.dist.buf)[sid] - 1, -1, 0};
    int found = each_move(t, sid, first_shortest, &w);
    if (found < 0) return NULL;
    if (!found) return PyErr_Format(PyExc_RuntimeError, "no shortest step from state %ld", sid);
    return Py_BuildValue("(il)", (int)w.byte, w.state);
}

/* tables.expand(sid): build the row of ``sid`` (see the module comment). */
static PyObject *tables_expand(PyObject *self, PyObject *arg) {
    long sid = PyLong_AsLong(arg);
    if (sid == -1 && PyErr_Occurred()) return NULL;
    if (expand_state((Tables *)self, sid) < 0) return NULL;
    Py_RETURN_NONE;
}

/* tables.use(table, expanded, accepting, exits, dist): the DFA's arrays from now on. */
static PyObject *tables_use(PyObject *self, PyObject *args) {
    PyObject *arrays[5];
    if (!PyArg_ParseTuple(args, "OOOOO", &arrays[0], &arrays[1], &arrays[2], &arrays[3], &arrays[4])) return NULL;
    if (view_take(&((Tables *)self)->view, arrays) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"tables", tables, METH_VARARGS, "An NFA's tables for expand() (see the module source)."},
    {NULL, NULL, 0, NULL},
};

/* -- string and whitespace spots (dfa.py's _string_spot and _blank_spot) ------------------------ */

/* The state asked about: ``sid``'s NFA states (sorted, into t->out; their count returned) and
 * classes (into t->cls). */
static Py_ssize_t spot_state(Tables *t, PyObject *arg, long *sid_out) {
    long sid = PyLong_AsLong(arg);
    if (sid == -1 && PyErr_Occurred()) return -1;
    *sid_out = sid;
    if (sid < 0 || sid >= t->n_keys) { PyErr_SetString(PyExc_IndexError, "no such state"); return -1; }
    if (have_arrays(t) < 0) return -1;
    return stored_key(t, sid, t->out, &t->cls);
}

static int has_state(const int32_t *states, Py_ssize_t n, int32_t s) {
    for (Py_ssize_t i = 0; i < n; i++) if (states[i] == s) return 1;
    return 0;
}

/* The state after closing region ``r`` at NFA state ``from``, the other classes as they are;
 * -1 on error. ``drop``: leave region ``r``'s own class out first. Fills t->kept. */
static long state_after(Tables *t, int32_t from, int32_t r, int drop) {
    if (classes_copy(&t->after, &t->cls) < 0) return -1;
    if (drop) {
        Py_ssize_t k = 0;
        for (Py_ssize_t i = 0; i < t->after.n; i++) if (t->after.items[i].region != r) t->after.items[k++] = t->after.items[i];
        t->after.n = k;
    }
    Py_ssize_t n_resets, n = closure(t, &from, 1, &t->after, &t->kept, &n_resets);
    return n < 0 ? -1 : intern(t, t->out, n, &t->kept);
}

/* The string spot of the state read by spot_state (``n`` NFA states in t->out): None or (region,
 * low, high or None, class, state after the quote). */
static PyObject *string_spot_of(Tables *t, Py_ssize_t n) {
    for (Py_ssize_t c = 0; c < t->cls.n; c++) {
        int32_t r = t->cls.items[c].region, unit = t->unit[r], quote = t->quote[r];
        if (quote < 0) continue;
        int unit_live = 0, other = 0;
        for (Py_ssize_t i = 0; i < n; i++) { /* the states with edges must be the unit and the quote */
            int32_t s = t->out[i];
            if (t->edge_at[s] == t->edge_at[s + 1]) continue;
            if (s == unit) unit_live = 1; else if (s != quote) other = 1;
        }
        if (!unit_live || other) continue;
        if (t->edge_at[quote] == t->edge_at[quote + 1]) {
            PyErr_SetString(PyExc_ValueError, "string_spot: a string's quote state has no edge");
            return NULL;
        }
        int64_t cls = t->cls.items[c].cls, high = t->high[r];
        long after = state_after(t, t->edge_dst[t->edge_at[quote]], r, 1);
        if (after < 0) return NULL;
        if (high == NONE) return Py_BuildValue("(iLOLl)", (int)r, (long long)t->low[r], Py_None, (long long)cls, after);
        return Py_BuildValue("(iLLLl)", (int)r, (long long)t->low[r], (long long)high, (long long)cls, after);
    }
    Py_RETURN_NONE;
}

/* The whitespace spot of the state read by spot_state: None or (region, room or None, state
 * after the run). Its NFA states are read again (a string spot's closure reuses t->out). */
static PyObject *blank_spot_of(Tables *t, long sid) {
    Py_ssize_t n = stored_key(t, sid, t->out, &t->cls);
    if (n < 0) return NULL;
    if (((uint8_t *)t->view.exits.buf)[sid]) Py_RETURN_NONE;
    for (Py_ssize_t c = 0; c < t->cls.n; c++) {
        int32_t r = t->cls.items[c].region, unit = t->unit[r];
        int64_t count = t->cls.items[c].cls, high = t->high[r];
        if (!t->blank[r] || count == MID) continue;
        if (!has_state(t->out, n, unit) || (high != NONE && count >= high)) continue;
        for (Py_ssize_t i = 0; i < n; i++) { /* nothing else may take whitespace here */
            int32_t s = t->out[i];
            if (s == unit) continue;
            for (Py_ssize_t e = t->edge_at[s]; e < t->edge_at[s + 1]; e++) {
                uint8_t lo = t->edge_lo[e], hi = t->edge_hi[e];
                if ((lo <= 0x0A && 0x09 <= hi) || (lo <= 0x0D && 0x0D <= hi) || (lo <= 0x20 && 0x20 <= hi)) Py_RETURN_NONE;
            }
        }
        long after = state_after(t, t->exit[r], r, 0);
        if (after < 0) return NULL;
        for (Py_ssize_t i = 0; i < t->kept.n; i++) if (t->kept.items[i].region == r) Py_RETURN_NONE;
        if (after == 0 || ((uint8_t *)t->view.exits.buf)[after]) Py_RETURN_NONE;
        if (high == NONE) return Py_BuildValue("(iOl)", (int)r, Py_None, after);
        return Py_BuildValue("(iLl)", (int)r, (long long)(high - count), after);
    }
    Py_RETURN_NONE;
}

/* tables.string_spot(sid) -> LazyDFA.string_spot's answer as a tuple, or None. */
static PyObject *tables_string_spot(PyObject *self, PyObject *arg) {
    Tables *t = (Tables *)self;
    long sid;
    Py_ssize_t n = spot_state(t, arg, &sid);
    return n < 0 ? NULL : string_spot_of(t, n);
}

/* tables.blank_spot(sid) -> LazyDFA.blank_spot's answer as a tuple, or None. */
static PyObject *tables_blank_spot(PyObject *self, PyObject *arg) {
    Tables *t = (Tables *)self;
    long sid;
    return spot_state(t, arg, &sid) < 0 ? NULL : blank_spot_of(t, sid);
}

/* tables.spots(sid) -> (string spot, blank spot): the second only where the first is None
 * (LazyDFA.spots: what a mask asks first of a state, in one call). */
static PyObject *tables_spots(PyObject *self, PyObject *arg) {
    Tables *t = (Tables *)self;
    long sid;
    Py_ssize_t n = spot_state(t, arg, &sid);
    if (n < 0) return NULL;
    PyObject *string = string_spot_of(t, n), *blank = NULL, *out = NULL;
    if (!string) return NULL;
    if (string != Py_None) {
        blank = Py_None;
        Py_INCREF(blank);
    } else if (!(blank = blank_spot_of(t, sid))) {
        Py_DECREF(string);
        return NULL;
    }
    out = PyTuple_Pack(2, string, blank);
    Py_DECREF(string);
    Py_DECREF(blank);
    return out;
}

/* Whether the counter step ``index`` (1-based) of expanded state ``sid`` changes a counter that
 * can still matter (_Step.tracked). */
static int step_tracked(const Tables *t, long sid, int index) {
    const int32_t *p = t->step_data + t->step_data_at[sid] + 1;
    for (int k = 1; k < index; k++) p += 3 + p[0] + p[1 + p[0]];
    return p[2 + p[0] + p[1 + p[0]]];
}

/* tables.walk_plain(state, data, i) -> (state, i, status): ``data[i:]`` walked from ``state``
 * while no counter has to be counted exactly (LazyDFA.advance_exact with no counts and no tracked
 * step: the table's next state). status 0: all of it read; 1: stopped on an exit state (after
 * its byte); 2: dead (state 0); 3: the byte at ``i`` steps a tracked counter (``state`` is before
 * it: the caller goes on exactly). States are expanded as needed (call under the DFA's lock). */
static PyObject *tables_walk_plain(PyObject *self, PyObject *args) {
    Tables *t = (Tables *)self;
    long state;
    Py_buffer data;
    Py_ssize_t i;
    if (!PyArg_ParseTuple(args, "ly*n", &state, &data, &i)) return NULL;
    const uint8_t *bytes = data.buf;
    int status = 0;
    PyObject *result = NULL;
    if (have_arrays(t) < 0) goto done;
    if (state <= 0 || state >= t->n_keys || i < 0) { PyErr_SetString(PyExc_ValueError, "walk_plain: no such state"); goto done; }
    while (i < data.len) {
        if (!((uint8_t *)t->view.expanded.buf)[state] && expand_state(t, state) < 0) goto done;
        uint8_t b = bytes[i];
        if (t->step_at[state] >= 0) {
            int index = t->step_of[t->step_at[state] + b];
            if (index && step_tracked(t, state, index)) { status = 3; break; }
        }
        long next = ((int32_t *)t->view.table.buf)[(Py_ssize_t)state * 256 + b];
        i++;
        if (!next) { state = 0; status = 2; break; }
        state = next;
        if (((uint8_t *)t->view.exits.buf)[state]) { status = 1; break; }
    }
    result = Py_BuildValue("(lni)", state, i, status);
done:
    PyBuffer_Release(&data);
    return result;
}

static PyMethodDef tables_methods[] = {
    {"find", keys_find, METH_O, "The state with this key (frozenset, classes), or -1."},
    {"classes", keys_classes, METH_O, "A state's counter classes, ((region, class), ...)."},
    {"add", keys_add, METH_O, "Add a state interned in Python; its number."},
    {"steps", tables_steps, METH_O, "An expanded state's counter steps, or None (see the source)."},
    {"string_spot", tables_string_spot, METH_O, "LazyDFA.string_spot's answer as a tuple, or None."},
    {"blank_spot", tables_blank_spot, METH_O, "LazyDFA.blank_spot's answer as a tuple, or None."},
    {"spots", tables_spots, METH_O, "LazyDFA.spots' answer as tuples (see the source)."},
    {"walk_plain", tables_walk_plain, METH_VARARGS, "Bytes walked while no counter is counted (see the source)."},
    {"short_step", tables_short_step, METH_O, "LazyDFA._short_step's answer: (byte, state)."},
    {"expand", tables_expand, METH_O, "Build one DFA state's row (see the module source)."},
    {"use", tables_use, METH_VARARGS, "The DFA's arrays from now on (see the module source)."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods tables_sequence = {.sq_length = keys_length, .sq_item = keys_item};

static PyTypeObject TablesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tooldec.automata._dfa_expand.Tables",
    .tp_basicsize = sizeof(Tables),
    .tp_dealloc = tables_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An NFA's tables for expand(), and the DFA's states by number (tables[sid] is a state's key).",
    .tp_methods = tables_methods,
    .tp_as_sequence = &tables_sequence,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_dfa_expand", NULL, -1, methods};

PyMODINIT_FUNC PyInit__dfa_expand(void) {
    if (PyType_Ready(&TablesType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    NeedsRoom = PyErr_NewExceptionWithDoc("tooldec.automata._dfa_expand.NeedsRoom",
                                          "The DFA's arrays are full: grow them, hand them over (use) and call again.",
                                          NULL, NULL);
    if (!NeedsRoom || PyModule_AddObjectRef(m, "NeedsRoom", NeedsRoom) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    PyObject *api = PyCapsule_New((void *)expand_c, "tooldec.automata._dfa_expand.expand_c", NULL);
    if (!api || PyModule_AddObject(m, "expand_c", api) < 0) {
        Py_XDECREF(api);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
