/* The vocabulary's byte trie walked through a lazy byte DFA, compiled.
 *
 * The pure-Python walk (vector_walk.narrow_rows and walk_rows) splits the sorted vocabulary by
 * bisection while a state is narrow and pushes rows one byte per NumPy pass where it is wide;
 * both pay Python or NumPy overhead per step. Here every prefix of the vocabulary is a trie node,
 * visited once per DFA state it is reached in, in C.
 *
 * The trie (build_trie) numbers its nodes in pre-order over the tokens sorted by bytes, so a
 * node's subtree is the node range [n, end[n]) and its tokens are the sorted range
 * [lo[n], lo[end[n]]) (the tokens equal to the node's prefix come first, nend[n] of them).
 *
 * A node's children are found by following end[] from n + 1: a chain of dependent loads, one
 * cache line each once a forward pass has evicted the trie. The root has a child for nearly every
 * byte (256 in Qwen's vocabulary), and a few first bytes (the space) have a hundred, so the walk
 * reads those nodes' children from tables of 256 entries instead (kids_of): it then looks only
 * at the bytes the DFA state allows, and the loads no longer wait on each other.
 *
 * The DFA is expanded lazily: where walk() needs the row of a state that is not built yet, it has
 * the state expanded by the compiled expansion of tooldec.automata._dfa_expand, called in C
 * through its capsule with the handle the caller passed. Where there is none (not built) or the
 * DFA's arrays are full, the walk returns the state instead: the caller expands it in Python and
 * walks again. Every call takes its inputs explicitly, as tuples of buffers; nothing here reads
 * an attribute or calls back into Python. Outputs are bytes objects, so no NumPy headers are
 * needed to build. The GIL is held throughout: callers hold the DFA's lock, and nothing here is
 * shared or cached.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *data;
    Py_ssize_t len;  /* bytes used */
    Py_ssize_t cap;
} Buf;

static int buf_push(Buf *b, const void *item, Py_ssize_t size) {
    if (b->len + size > b->cap) {
        Py_ssize_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + size) cap *= 2;
        char *data = PyMem_Realloc(b->data, cap);
        if (!data) { PyErr_NoMemory(); return -1; }
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->len, item, size);
    b->len += size;
    return 0;
}

static void buf_free(Buf *b) { PyMem_Free(b->data); b->data = NULL; b->len = b->cap = 0; }

/* A read-only buffer of the given item size (checked), or -1 with an exception set. */
static int get(PyObject *obj, Py_buffer *view, Py_ssize_t itemsize, const char *name) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (view->len % itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes is not a whole number of %zd-byte items", name, view->len, itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

#define WIDE 16 /* a first byte's node with this many children gets a table */

/* build_trie(flat, starts) -> (bytes, ends, los, nends, tables, wide): the trie of the tokens
 * flat[starts[i]:starts[i+1]], which must be sorted by bytes and non-empty. bytes is uint8 per
 * node, the others int32. tables holds blocks of 256 child nodes by byte (0: none), the root's
 * first; wide[b] is the block of the root's child with byte b if it has a table, else 0. */
static PyObject *build_trie(PyObject *self, PyObject *args) {
    PyObject *flat_obj, *starts_obj;
    if (!PyArg_ParseTuple(args, "OO", &flat_obj, &starts_obj)) return NULL;
    Py_buffer flat, starts;
    if (get(flat_obj, &flat, 1, "flat") < 0) return NULL;
    if (get(starts_obj, &starts, 8, "starts") < 0) { PyBuffer_Release(&flat); return NULL; }
    const uint8_t *data = flat.buf;
    const int64_t *st = starts.buf;
    Py_ssize_t n_tokens = starts.len / 8 - 1;
    Py_ssize_t cap = flat.len + 1;
    PyObject *result = NULL;
    uint8_t *nbyte = PyMem_Malloc(cap);
    int32_t *nend = PyMem_Malloc(cap * 4), *nlo = PyMem_Malloc(cap * 4), *ncount = PyMem_Malloc(cap * 4);
    int32_t *path = NULL, *tables = NULL, *wide = NULL;
    if (!nbyte || !nend || !nlo || !ncount) { PyErr_NoMemory(); goto done; }
    Py_ssize_t longest = 0;
    for (Py_ssize_t i = 0; i < n_tokens; i++) {
        Py_ssize_t len = st[i + 1] - st[i];
        if (len <= 0 || st[i] < 0 || st[i + 1] > flat.len) {
            PyErr_SetString(PyExc_ValueError, "starts: tokens must be non-empty and inside flat");
            goto done;
        }
        if (len > longest) longest = len;
    }
    path = PyMem_Malloc((longest + 1) * sizeof(int32_t));
    if (!path) { PyErr_NoMemory(); goto done; }
    int32_t count = 1;
    nbyte[0] = 0; nlo[0] = 0; ncount[0] = 0;
    path[0] = 0;
    Py_ssize_t depth = 0;  /* nodes on the path: path[0..depth] */
    const uint8_t *prev = NULL;
    Py_ssize_t prev_len = 0;
    for (Py_ssize_t i = 0; i < n_tokens; i++) {
        const uint8_t *tok = data + st[i];
        Py_ssize_t len = st[i + 1] - st[i];
        Py_ssize_t common = 0;
        if (prev) {
            Py_ssize_t most = len < prev_len ? len : prev_len;
            while (common < most && tok[common] == prev[common]) common++;
            if (common < most ? tok[common] < prev[common] : len < prev_len) {  /* sorts before the previous one */
                PyErr_SetString(PyExc_ValueError, "flat: tokens are not sorted by bytes");
                goto done;
            }
        }
        for (; depth > common; depth--) nend[path[depth]] = count;  /* close the nodes past the common prefix */
        for (Py_ssize_t d = common; d < len; d++) {
            nbyte[count] = tok[d];
            nlo[count] = (int32_t)i;
            ncount[count] = 0;
            path[++depth] = count++;
        }
        ncount[path[len]]++;
        prev = tok;
        prev_len = len;
    }
    for (; depth >= 0; depth--) nend[path[depth]] = count;
    /* the child tables: block 0 the root's, then one per first byte whose node has WIDE children */
    Py_ssize_t blocks = 1;
    for (int32_t c = 1; c < count; c = nend[c]) {
        Py_ssize_t kids = 0;
        for (int32_t d = c + 1; d < nend[c]; d = nend[d]) kids++;
        if (kids >= WIDE) blocks++;
    }
    if (!(tables = PyMem_Calloc(blocks * 256, 4)) || !(wide = PyMem_Calloc(256, 4))) { PyErr_NoMemory(); goto done; }
    Py_ssize_t block = 0;
    for (int32_t c = 1; c < count; c = nend[c]) {
        tables[nbyte[c]] = c;
        Py_ssize_t kids = 0;
        for (int32_t d = c + 1; d < nend[c]; d = nend[d]) kids++;
        if (kids < WIDE) continue;
        wide[nbyte[c]] = (int32_t)++block;
        for (int32_t d = c + 1; d < nend[c]; d = nend[d]) tables[block * 256 + nbyte[d]] = d;
    }
    result = Py_BuildValue("(y#y#y#y#y#y#)", (char *)nbyte, (Py_ssize_t)count, (char *)nend, (Py_ssize_t)count * 4,
                           (char *)nlo, (Py_ssize_t)count * 4, (char *)ncount, (Py_ssize_t)count * 4,
                           (char *)tables, blocks * 256 * 4, (char *)wide, (Py_ssize_t)256 * 4);
done:
    PyMem_Free(nbyte); PyMem_Free(nend); PyMem_Free(nlo); PyMem_Free(ncount); PyMem_Free(path);
    PyMem_Free(tables); PyMem_Free(wide);
    PyBuffer_Release(&flat);
    PyBuffer_Release(&starts);
    return result;
}

typedef struct { int32_t node, state, depth; } Item;

/* The children of node ``n`` at ``depth`` by byte (0: none), where it has a table; else NULL.
 * ``blocks``: how many tables there are (a wide entry past them is ignored). */
static inline const int32_t *kids_of(const int32_t *tables, const int32_t *wide, Py_ssize_t blocks,
                                     const uint8_t *nbyte, int32_t n, int64_t depth) {
    if (depth == 0) return tables; /* the walks start at the root and nowhere else at depth 0 */
    if (depth == 1) {
        int32_t block = wide[nbyte[n]];
        if (block > 0 && block < blocks) return tables + (Py_ssize_t)block * 256;
    }
    return NULL;
}

/* The trie's arrays (build_trie's answer, one tuple), read and checked once per call. */
typedef struct {
    Py_buffer views[6];
    int held;
    const uint8_t *nbyte;
    const int32_t *nend, *nlo, *ncount, *tables, *wide;
    Py_ssize_t n_nodes, blocks;
} TrieView;

static void trie_release(TrieView *t) {
    for (int k = 0; k < t->held; k++) PyBuffer_Release(&t->views[k]);
    t->held = 0;
}

/* Read ``trie`` (labels, ends, los, nends, tables, wide) into ``t``: 0, or -1 with an exception
 * set (``t`` released either way on error; entries are checked where they are read). */
static int trie_take(PyObject *trie, TrieView *t, const char *who) {
    static const Py_ssize_t sizes[6] = {1, 4, 4, 4, 4, 4};
    static const char *names[6] = {"labels", "ends", "los", "nends", "tables", "wide"};
    if (!PyTuple_Check(trie) || PyTuple_GET_SIZE(trie) != 6) {
        PyErr_Format(PyExc_TypeError, "%s: the trie is a tuple of its 6 arrays", who);
        return -1;
    }
    for (int k = 0; k < 6; k++) {
        if (get(PyTuple_GET_ITEM(trie, k), &t->views[k], sizes[k], names[k]) < 0) { trie_release(t); return -1; }
        t->held = k + 1;
    }
    t->nbyte = t->views[0].buf;
    t->nend = t->views[1].buf; t->nlo = t->views[2].buf; t->ncount = t->views[3].buf;
    t->tables = t->views[4].buf; t->wide = t->views[5].buf;
    t->n_nodes = t->views[0].len;
    t->blocks = t->views[4].len / (256 * 4);
    Py_ssize_t n = t->n_nodes;
    if (n < 1 || t->views[1].len != n * 4 || t->views[2].len != n * 4 || t->views[3].len != n * 4) {
        PyErr_Format(PyExc_ValueError, "%s: trie arrays of mismatched sizes", who);
    } else if (t->views[4].len % (256 * 4) || t->views[4].len < 256 * 4 || t->views[5].len != 256 * 4) {
        PyErr_Format(PyExc_ValueError, "%s: the child tables are not blocks of 256 entries", who);
    } else {
        return 0;
    }
    trie_release(t);
    return -1;
}

/* The DFA as the walk reads it: LazyDFA.compiled_view()'s (table, expanded, exits, dist,
 * expansion), read once per call. Its arrays stay put during the call: the compiled expansion
 * writes into them and never replaces them (where they are full, the walk returns to Python). */
typedef struct {
    Py_buffer views[4];
    int held;
    const int32_t *table;
    const uint8_t *expanded, *exits;
    const int64_t *dist;
    Py_ssize_t n_states;
    PyObject *expansion; /* the DFA's compiled tables, or None (borrowed: the tuple holds it) */
} DfaView;

static void dfa_release(DfaView *d) {
    for (int k = 0; k < d->held; k++) PyBuffer_Release(&d->views[k]);
    d->held = 0;
}

static int dfa_take(PyObject *dfa, DfaView *d) {
    static const Py_ssize_t sizes[4] = {4, 1, 1, 8};
    static const char *names[4] = {"table", "expanded", "exits", "dist"};
    if (!PyTuple_Check(dfa) || PyTuple_GET_SIZE(dfa) != 5) {
        PyErr_SetString(PyExc_TypeError, "walk: the DFA is LazyDFA.compiled_view()'s tuple");
        return -1;
    }
    for (int k = 0; k < 4; k++) {
        if (get(PyTuple_GET_ITEM(dfa, k), &d->views[k], sizes[k], names[k]) < 0) { dfa_release(d); return -1; }
        d->held = k + 1;
    }
    d->table = d->views[0].buf; d->expanded = d->views[1].buf; d->exits = d->views[2].buf; d->dist = d->views[3].buf;
    d->n_states = d->views[1].len;
    d->expansion = PyTuple_GET_ITEM(dfa, 4);
    if (d->views[0].len != d->n_states * 256 * 4 || d->views[2].len != d->n_states || d->views[3].len != d->n_states * 8) {
        PyErr_SetString(PyExc_ValueError, "walk: the DFA's arrays have mismatched sizes");
        dfa_release(d);
        return -1;
    }
    return 0;
}

/* The compiled expansion (tooldec.automata._dfa_expand's capsule ``expand_c``), found once:
 * 0 expanded, 1 the arrays are full, -1 an error. */
typedef int (*ExpandFn)(PyObject *tables, long sid);
static ExpandFn compiled_expand = NULL;

/* Expand state ``s``: 0 done, 1 for the caller to do (no compiled expansion, or the DFA's arrays
 * are full: the walk returns the state), -1 an error with an exception set. */
static int expand_state(const DfaView *d, int32_t s) {
    if (d->expansion == Py_None) return 1;
    if (!compiled_expand) { /* (the module is imported already: the tables come from it) */
        compiled_expand = (ExpandFn)PyCapsule_Import("tooldec.automata._dfa_expand.expand_c", 0);
        if (!compiled_expand) return -1;
    }
    return compiled_expand(d->expansion, (long)s);
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* A growable array of ``size``-byte items, handed out as a bytes object of its length. */
typedef struct {
    char *data;
    Py_ssize_t n, cap, size;
} Out;

static void *out_next(Out *o) {
    if (o->n == o->cap) {
        Py_ssize_t cap = o->cap ? o->cap * 2 : 256;
        char *data = PyMem_Realloc(o->data, cap * o->size);
        if (!data) { PyErr_NoMemory(); return NULL; }
        o->data = data;
        o->cap = cap;
    }
    return o->data + o->size * o->n++;
}

static PyObject *out_bytes(const Out *o) { return PyBytes_FromStringAndSize(o->data ? o->data : "", o->n * o->size); }

/* Push child node ``c`` (byte ``b``) of a node at ``depth`` with the state the DFA's ``row`` goes
 * to on ``b``, unless the state is dead or ``skip`` leaves the byte out at the root. */
static int push_child(Buf *stack, int32_t c, int b, const int32_t *row, int64_t depth, const uint8_t *skip,
                      Py_ssize_t n_states) {
    if (depth == 0 && skip && skip[b]) return 0;
    int32_t t = row[b];
    if (t <= 0) return 0;
    if (t >= n_states) {
        PyErr_SetString(PyExc_ValueError, "walk: a transition to a state past the DFA's arrays");
        return -1;
    }
    Item next = {c, t, (int32_t)depth + 1};
    return buf_push(stack, &next, sizeof next);
}

/* walk(trie, rows, dfa, state, skip[, mask])
 *   -> (ended_rows, ended_states, exit_rows, exit_states, exit_offsets)
 *   or, with mask: (packed or None, ended_ids, end_states, max_dist, exit_rows, exit_states, exit_offsets)
 *   or a state (an int) the walk met unexpanded and could not expand: the caller expands it and
 *   walks again (the walk changed nothing but the DFA's expansion)
 *
 * Every token of ``trie`` (build_trie's tuple; ``rows``: int64 per sorted position, what to report)
 * from ``state`` of the DFA (``dfa``: LazyDFA.compiled_view()'s tuple): a token ends inside (its row
 * and end state) or reaches a state that ``exits`` flags (its row, the state, and the bytes
 * consumed); dead states (0) drop it. A state whose row is not built yet is expanded (see
 * expand_state). ``skip`` (256 flags, or None) leaves out the tokens by their first byte. Rows
 * are int64, states int32, offsets int64.
 *
 * With ``mask`` = (row_ids, words, dense_from), row_ids the int32 token id of each row, the tokens
 * that end inside are given as a mask: listed (int32, sorted) and, when there are more than
 * ``dense_from`` of them, set in ``packed`` (a bytearray of ``words`` little-endian 32-bit words;
 * else None: a sparse mask), with the distinct states they end in (int32, in the order first met)
 * and the largest distance to acceptance among those states (dist; 0 if none). */
static PyObject *walk(PyObject *self, PyObject *args) {
    PyObject *trie_obj, *rows_obj, *dfa_obj, *skip_obj, *mask_obj = Py_None;
    int start;
    if (!PyArg_ParseTuple(args, "OOOiO|O", &trie_obj, &rows_obj, &dfa_obj, &start, &skip_obj, &mask_obj)) return NULL;
    int as_mask = mask_obj != Py_None;
    PyObject *row_ids_obj = NULL;
    Py_ssize_t words = 0, dense_from = 0;
    if (as_mask && !PyArg_ParseTuple(mask_obj, "Onn", &row_ids_obj, &words, &dense_from)) return NULL;
    TrieView tv = {0};
    DfaView dv = {0};
    Py_buffer rows_view = {0}, skip_view = {0}, row_ids_view = {0};
    PyObject *result = NULL, *packed = NULL, *outs[5] = {NULL, NULL, NULL, NULL, NULL};
    /* ended rows (int32 ids in mask mode), ended states (the distinct end states in mask mode),
     * exit rows, exit states, exit offsets: grown as needed (most walks meet a few tokens) */
    Out ended = {NULL, 0, 0, as_mask ? 4 : 8}, ended_states = {NULL, 0, 0, 4}, exit_rows = {NULL, 0, 0, 8},
        exit_states = {NULL, 0, 0, 4}, exit_offsets = {NULL, 0, 0, 8};
    uint8_t *seen = NULL; /* mask mode: per state, whether it is listed among the end states */
    int64_t max_dist = 0;
    Buf stack = {0};
    if (trie_take(trie_obj, &tv, "walk") < 0 || get(rows_obj, &rows_view, 8, "rows") < 0
        || (skip_obj != Py_None && get(skip_obj, &skip_view, 1, "skip") < 0) || dfa_take(dfa_obj, &dv) < 0) goto done;
    const uint8_t *nbyte = tv.nbyte, *skip = skip_view.buf;
    const int32_t *nend = tv.nend, *nlo = tv.nlo, *ncount = tv.ncount;
    const int64_t *sorted_rows = rows_view.buf;
    Py_ssize_t n_nodes = tv.n_nodes, n_tokens = rows_view.len / 8;
    if (skip && skip_view.len != 256) {
        PyErr_SetString(PyExc_ValueError, "walk: skip must be 256 flags");
        goto done;
    }
    const int32_t *row_ids = NULL;
    uint32_t *bits = NULL;
    if (as_mask) {
        if (get(row_ids_obj, &row_ids_view, 4, "row_ids") < 0) goto done;
        if (row_ids_view.len != n_tokens * 4 || words < 0) {
            PyErr_SetString(PyExc_ValueError, "walk: row_ids must give one id per token, and words be >= 0");
            goto done;
        }
        row_ids = row_ids_view.buf;
        if (!(seen = PyMem_Calloc(dv.n_states, 1))) { PyErr_NoMemory(); goto done; }
    }
    if (start < 0 || start >= dv.n_states) {
        PyErr_SetString(PyExc_ValueError, "walk: the start state is out of range");
        goto done;
    }
    Item first = {0, start, 0};
    if (buf_push(&stack, &first, sizeof first) < 0) goto done;
    while (stack.len) {
        stack.len -= sizeof(Item);
        Item item = *(Item *)(stack.data + stack.len);
        int32_t n = item.node, s = item.state;
        int64_t depth = item.depth;
        int32_t end = nend[n];
        if (depth) { /* the tokens that stop here */
            int32_t lo = nlo[n], hi = end < n_nodes ? nlo[end] : (int32_t)n_tokens;
            if (dv.exits[s]) {
                for (int32_t k = lo; k < hi; k++) {
                    int64_t *row = out_next(&exit_rows), *offset = out_next(&exit_offsets);
                    int32_t *at = out_next(&exit_states);
                    if (!row || !offset || !at) goto done;
                    *row = sorted_rows[k];
                    *at = s;
                    *offset = depth;
                }
                continue;
            }
            if (as_mask && ncount[n]) {
                for (int32_t k = lo; k < lo + ncount[n]; k++) {
                    int32_t id = row_ids[sorted_rows[k]], *put = out_next(&ended);
                    if (!put) goto done;
                    if (id < 0 || id >= words * 32) { /* checked as listed: a check of every id cost a pass */
                        PyErr_SetString(PyExc_ValueError, "walk: a token id past the mask's words");
                        goto done;
                    }
                    *put = id;
                }
                if (!seen[s]) {
                    int32_t *put = out_next(&ended_states);
                    if (!put) goto done;
                    seen[s] = 1;
                    *put = s;
                    if (dv.dist[s] > max_dist) max_dist = dv.dist[s];
                }
            } else if (!as_mask) {
                for (int32_t k = lo; k < lo + ncount[n]; k++) {
                    int64_t *row = out_next(&ended);
                    int32_t *at = out_next(&ended_states);
                    if (!row || !at) goto done;
                    *row = sorted_rows[k];
                    *at = s;
                }
            }
        }
        if (end == n + 1) continue; /* a leaf */
        if (!dv.expanded[s]) {
            int later = expand_state(&dv, s);
            if (later < 0) goto done;
            if (later) { result = PyLong_FromLong(s); goto done; }
            if (!dv.expanded[s]) {
                PyErr_SetString(PyExc_RuntimeError, "walk: the DFA's expansion did not build the state's row");
                goto done;
            }
        }
        const int32_t *row = dv.table + (Py_ssize_t)s * 256;
        const int32_t *kids = kids_of(tv.tables, tv.wide, tv.blocks, nbyte, n, depth);
        if (kids) { /* by the table: only the bytes the state allows */
            for (int b = 0; b < 256; b++) {
                int32_t c = kids[b];
                if (!c || row[b] <= 0) continue;
                if (c <= n || c >= end) {
                    PyErr_SetString(PyExc_ValueError, "walk: a child table entry outside its node");
                    goto done;
                }
                if (push_child(&stack, c, b, row, depth, skip, dv.n_states) < 0) goto done;
            }
        } else {
            for (int32_t c = n + 1; c < end; c = nend[c])
                if (push_child(&stack, c, nbyte[c], row, depth, skip, dv.n_states) < 0) goto done;
        }
    }
    if (as_mask) {
        qsort(ended.data, ended.n, 4, cmp_i32);
        if (ended.n > dense_from) { /* the bits (writable: the caller adds the exits it allows) */
            if (!(packed = PyByteArray_FromStringAndSize(NULL, words * 4))) goto done;
            bits = (uint32_t *)PyByteArray_AS_STRING(packed);
            memset(bits, 0, words * 4);
            const int32_t *listed = (const int32_t *)ended.data;
            for (Py_ssize_t i = 0; i < ended.n; i++) bits[listed[i] >> 5] |= (uint32_t)1 << (listed[i] & 31);
        } else {
            packed = Py_None;
            Py_INCREF(packed);
        }
    }
    Out *lists[5] = {&ended, &ended_states, &exit_rows, &exit_states, &exit_offsets};
    for (int k = 0; k < 5; k++) {
        if (!(outs[k] = out_bytes(lists[k]))) goto done;
    }
    if (as_mask) {
        result = Py_BuildValue("(OOOLOOO)", packed, outs[0], outs[1], (long long)max_dist, outs[2], outs[3], outs[4]);
    } else {
        result = Py_BuildValue("(OOOOO)", outs[0], outs[1], outs[2], outs[3], outs[4]);
    }
done:
    trie_release(&tv);
    dfa_release(&dv);
    if (rows_view.obj) PyBuffer_Release(&rows_view);
    if (skip_view.obj) PyBuffer_Release(&skip_view);
    if (row_ids_view.obj) PyBuffer_Release(&row_ids_view);
    Py_XDECREF(packed);
    for (int k = 0; k < 5; k++) Py_XDECREF(outs[k]);
    Out *all[5] = {&ended, &ended_states, &exit_rows, &exit_states, &exit_offsets};
    for (int k = 0; k < 5; k++) PyMem_Free(all[k]->data);
    PyMem_Free(seen);
    buf_free(&stack);
    return result;
}

/* -- tool names ------------------------------------------------------------------------------ */

/* The byte at ``pos`` of a name (-1 past its end). */
static int name_byte(PyObject *name, Py_ssize_t pos) {
    return pos < PyBytes_GET_SIZE(name) ? ((const uint8_t *)PyBytes_AS_STRING(name))[pos] : -1;
}

/* Within names [lo, hi) (sorted, sharing their first ``pos`` bytes), the range whose byte at
 * ``pos`` is ``b``; names that end before ``pos`` sort first. */
static void name_range(PyObject **names, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t pos, int b, Py_ssize_t *a,
                       Py_ssize_t *z) {
    Py_ssize_t l = lo, h = hi;
    while (l < h) { /* first with byte >= b */
        Py_ssize_t mid = (l + h) / 2;
        if (name_byte(names[mid], pos) < b) l = mid + 1; else h = mid;
    }
    *a = l;
    h = hi;
    while (l < h) { /* first with byte > b */
        Py_ssize_t mid = (l + h) / 2;
        if (name_byte(names[mid], pos) <= b) l = mid + 1; else h = mid;
    }
    *z = l;
}

typedef struct { int32_t node, depth; Py_ssize_t lo, hi; } NameItem;

/* names_walk(trie, sorted_ids, names, lo, hi, prefix_len, literal)
 *   -> (ids, pending)
 *
 * The tokens allowed at a name position: ``names[lo:hi]`` (bytes, sorted) are the tool names that
 * start with the name prefix written so far (``prefix_len`` bytes). A token is allowed if it spells
 * more of one of them (ids: int32, sorted). A token that completes a name and goes on is a
 * crossing into that tool's tail: with a ``literal`` (the bytes every tail starts with), one whose
 * rest is a prefix of the literal is allowed here, one whose rest does not start with it is
 * refused, and one that runs past it is pending, as are all of them without a literal: ``pending``
 * lists (sorted position, name index, bytes of the token before its rest) as int32 triples, for
 * the caller to walk into the tail. ``sorted_ids`` gives each sorted position's token id (int32). */
static PyObject *names_walk(PyObject *self, PyObject *args) {
    PyObject *trie_obj, *ids_obj, *names_obj;
    Py_ssize_t lo, hi, prefix_len;
    Py_buffer literal;
    if (!PyArg_ParseTuple(args, "OOOnnny*", &trie_obj, &ids_obj, &names_obj, &lo, &hi, &prefix_len, &literal))
        return NULL;
    TrieView tv = {0};
    Py_buffer ids_view = {0};
    PyObject *names_seq = NULL, *result = NULL, *ids_bytes = NULL, *pending_bytes = NULL;
    Out ids = {NULL, 0, 0, 4}, pending = {NULL, 0, 0, 12};
    Buf stack = {0}, cross = {0};
    if (trie_take(trie_obj, &tv, "names_walk") < 0 || get(ids_obj, &ids_view, 4, "sorted_ids") < 0) goto done;
    const uint8_t *nbyte = tv.nbyte;
    const int32_t *nend = tv.nend, *nlo = tv.nlo, *ncount = tv.ncount, *sorted_ids = ids_view.buf;
    const int32_t *tables = tv.tables, *wide = tv.wide;
    Py_ssize_t n_nodes = tv.n_nodes, n_tokens = ids_view.len / 4, blocks = tv.blocks;
    if (!(names_seq = PySequence_Fast(names_obj, "names_walk: names must be a sequence"))) goto done;
    PyObject **names = PySequence_Fast_ITEMS(names_seq);
    Py_ssize_t n_names = PySequence_Fast_GET_SIZE(names_seq);
    if (lo < 0 || hi > n_names || lo > hi || prefix_len < 0) {
        PyErr_SetString(PyExc_ValueError, "names_walk: the names' range is out of bounds");
        goto done;
    }
    for (Py_ssize_t i = lo; i < hi; i++) {
        if (!PyBytes_Check(names[i]) || PyBytes_GET_SIZE(names[i]) < prefix_len) {
            PyErr_SetString(PyExc_ValueError, "names_walk: names must be bytes that start with the prefix");
            goto done;
        }
    }
    const uint8_t *lit = literal.buf;
    Py_ssize_t lit_len = literal.len;
    NameItem root = {0, 0, lo, hi};
    if (lo < hi && buf_push(&stack, &root, sizeof root) < 0) goto done;
    while (stack.len) {
        stack.len -= sizeof(NameItem);
        NameItem item = *(NameItem *)(stack.data + stack.len);
        int32_t n = item.node, end = nend[n];
        Py_ssize_t at = prefix_len + item.depth, first = item.lo;
        if (item.depth) { /* tokens that stop here spell part of a name */
            for (int32_t k = nlo[n]; k < nlo[n] + ncount[n]; k++) {
                int32_t *put = out_next(&ids);
                if (!put) goto done;
                *put = sorted_ids[k];
            }
        }
        if (PyBytes_GET_SIZE(names[first]) == at) { /* a whole name: the tokens that go on cross into its tail */
            for (int32_t c = n + 1; c < end; c = nend[c]) {
                if (lit_len && nbyte[c] != lit[0]) continue;
                int32_t start[2] = {c, 1};
                if (buf_push(&cross, start, sizeof start) < 0) goto done;
            }
            while (cross.len) {
                cross.len -= sizeof(int32_t[2]);
                int32_t *top = (int32_t *)(cross.data + cross.len), c = top[0], k = top[1];
                int32_t c_end = nend[c], c_hi = c_end < n_nodes ? nlo[c_end] : (int32_t)n_tokens;
                if (!lit_len || k == lit_len) { /* past the literal: every token below is walked by the caller */
                    int32_t from = !lit_len ? nlo[c] : nlo[c] + ncount[c];
                    if (lit_len) { /* those ending exactly at the literal's end are allowed */
                        for (int32_t j = nlo[c]; j < nlo[c] + ncount[c]; j++) {
                            int32_t *put = out_next(&ids);
                            if (!put) goto done;
                            *put = sorted_ids[j];
                        }
                    }
                    for (int32_t j = from; j < c_hi; j++) {
                        int32_t *put = out_next(&pending);
                        if (!put) goto done;
                        put[0] = j; put[1] = (int32_t)first; put[2] = item.depth;
                    }
                    continue;
                }
                for (int32_t j = nlo[c]; j < nlo[c] + ncount[c]; j++) { /* the rest is a prefix of the literal */
                    int32_t *put = out_next(&ids);
                    if (!put) goto done;
                    *put = sorted_ids[j];
                }
                for (int32_t d = c + 1; d < c_end; d = nend[d]) {
                    if (nbyte[d] != lit[k]) continue;
                    int32_t next[2] = {d, k + 1};
                    if (buf_push(&cross, next, sizeof next) < 0) goto done;
                }
            }
            first++;
        }
        if (first >= item.hi) continue;
        const int32_t *kids = kids_of(tables, wide, blocks, nbyte, n, item.depth);
        if (kids) { /* the names' next bytes, each looked up in the table (in increasing order either way) */
            for (Py_ssize_t a = first, z; a < item.hi; a = z) {
                int b = name_byte(names[a], at);
                name_range(names, a, item.hi, at, b, &a, &z);
                int32_t c = b < 0 ? 0 : kids[b];
                if (!c) continue;
                if (c <= n || c >= end) {
                    PyErr_SetString(PyExc_ValueError, "names_walk: a child table entry outside its node");
                    goto done;
                }
                NameItem next = {c, item.depth + 1, a, z};
                if (buf_push(&stack, &next, sizeof next) < 0) goto done;
            }
            continue;
        }
        for (int32_t c = n + 1; c < end; c = nend[c]) { /* the name goes on with the token */
            Py_ssize_t a, z;
            name_range(names, first, item.hi, at, nbyte[c], &a, &z);
            if (a >= z) continue;
            NameItem next = {c, item.depth + 1, a, z};
            if (buf_push(&stack, &next, sizeof next) < 0) goto done;
        }
    }
    qsort(ids.data, ids.n, 4, cmp_i32);
    if ((ids_bytes = out_bytes(&ids)) && (pending_bytes = out_bytes(&pending)))
        result = PyTuple_Pack(2, ids_bytes, pending_bytes);
done:
    trie_release(&tv);
    if (ids_view.obj) PyBuffer_Release(&ids_view);
    PyBuffer_Release(&literal);
    Py_XDECREF(names_seq); Py_XDECREF(ids_bytes); Py_XDECREF(pending_bytes);
    PyMem_Free(ids.data); PyMem_Free(pending.data);
    buf_free(&stack);
    buf_free(&cross);
    return result;
}

/* longest_count(trie, data) -> int: how many tokens the
 * longest-match cut of ``data`` has (the longest token at each step; Vocabulary.longest_match),
 * or -1 where a byte begins no token. Token budgets count the bytes of every shortest completion
 * this way: a bisection of the sorted vocabulary per token was a cache miss per comparison. */
static PyObject *longest_count(PyObject *self, PyObject *args) {
    PyObject *trie_obj;
    Py_buffer data;
    if (!PyArg_ParseTuple(args, "Oy*", &trie_obj, &data)) return NULL;
    TrieView tv = {0};
    PyObject *result = NULL;
    if (trie_take(trie_obj, &tv, "longest_count") < 0) goto done;
    const uint8_t *nbyte = tv.nbyte, *text = data.buf;
    const int32_t *nend = tv.nend, *ncount = tv.ncount, *tables = tv.tables, *wide = tv.wide;
    Py_ssize_t blocks = tv.blocks;
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < data.len; count++) {
        int32_t n = 0;
        Py_ssize_t best = 0; /* the longest token from i so far */
        for (Py_ssize_t d = 0; i + d < data.len; d++) {
            uint8_t b = text[i + d];
            const int32_t *kids = kids_of(tables, wide, blocks, nbyte, n, d);
            int32_t c = 0;
            if (kids) {
                c = kids[b];
            } else {
                for (int32_t k = n + 1; k < nend[n]; k = nend[k]) { /* children in increasing byte order */
                    if (nbyte[k] < b) continue;
                    if (nbyte[k] == b) c = k;
                    break;
                }
            }
            if (!c) break;
            if (c <= n || c >= nend[n]) {
                PyErr_SetString(PyExc_ValueError, "longest_count: a child table entry outside its node");
                goto done;
            }
            n = c;
            if (ncount[n]) best = d + 1;
        }
        if (!best) {
            count = -1;
            break;
        }
        i += best;
    }
    result = PyLong_FromSsize_t(count);
done:
    trie_release(&tv);
    PyBuffer_Release(&data);
    return result;
}

/* pack(ids, words) -> (packed, count, increasing): the bits of the int32 token ids (any order,
 * repeats allowed) in a fresh bytearray of ``words`` little-endian 32-bit words, how many distinct
 * ids were set, and whether the ids were strictly increasing. */
static PyObject *pack(PyObject *self, PyObject *args) {
    Py_buffer ids;
    Py_ssize_t words;
    if (!PyArg_ParseTuple(args, "y*n", &ids, &words)) return NULL;
    PyObject *packed = NULL, *result = NULL;
    if (ids.len % 4 || words < 0) {
        PyErr_SetString(PyExc_ValueError, "pack: ids must be int32 and words >= 0");
        goto done;
    }
    if (!(packed = PyByteArray_FromStringAndSize(NULL, words * 4))) goto done;
    uint32_t *bits = (uint32_t *)PyByteArray_AS_STRING(packed);
    memset(bits, 0, words * 4);
    const int32_t *at = ids.buf;
    Py_ssize_t n = ids.len / 4, count = 0;
    int increasing = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t id = at[i];
        if (i && id <= at[i - 1]) increasing = 0;
        if (id < 0 || id >= words * 32) {
            PyErr_SetString(PyExc_ValueError, "pack: a token id past the mask's words");
            goto done;
        }
        uint32_t bit = (uint32_t)1 << (id & 31);
        count += !(bits[id >> 5] & bit);
        bits[id >> 5] |= bit;
    }
    result = Py_BuildValue("(OnO)", packed, count, increasing ? Py_True : Py_False);
done:
    Py_XDECREF(packed);
    PyBuffer_Release(&ids);
    return result;
}

/* fill(row, ids): the int32 bitmask ``row`` (writable, C-contiguous) set to the bits of the int32
 * token ids: zeros, then a bit for each id (ids past the row are left out: masked). */
static PyObject *fill(PyObject *self, PyObject *args) {
    Py_buffer row, ids;
    if (!PyArg_ParseTuple(args, "w*y*", &row, &ids)) return NULL;
    PyObject *result = NULL;
    if (row.len % 4 || ids.len % 4) {
        PyErr_SetString(PyExc_ValueError, "fill: the row and the ids must be int32");
        goto done;
    }
    uint32_t *bits = row.buf;
    Py_ssize_t words = row.len / 4, n = ids.len / 4;
    const int32_t *at = ids.buf;
    memset(bits, 0, row.len);
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t id = at[i];
        if (id >= 0 && id < words * 32) bits[id >> 5] |= (uint32_t)1 << (id & 31);
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&row);
    PyBuffer_Release(&ids);
    return result;
}

static PyMethodDef methods[] = {
    {"build_trie", build_trie, METH_VARARGS, "The byte trie of tokens sorted by bytes (see the module source)."},
    {"walk", walk, METH_VARARGS, "The trie walked through a DFA from a frontier (see the module source)."},
    {"names_walk", names_walk, METH_VARARGS, "The tokens allowed at a tool name position (see the module source)."},
    {"pack", pack, METH_VARARGS, "A packed mask of token ids (see the module source)."},
    {"fill", fill, METH_VARARGS, "A bitmask row set to token ids (see the module source)."},
    {"longest_count", longest_count, METH_VARARGS, "Tokens in the longest-match cut of bytes (-1: a byte has none)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_trie_walk", NULL, -1, methods};

PyMODINIT_FUNC PyInit__trie_walk(void) { return PyModule_Create(&module); }
