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
 * never depends on whether this extension was built. The GIL is held throughout, but for
 * list_key's call of its `filed` argument (Python code: other threads may run meanwhile).
 *
 * list_key walks a long list on two threads: the caller and one helper thread, started on first
 * use. The helper reads the dicts while the caller holds the GIL and runs no Python code, so no
 * object can change under it; it only reads (dict entries, ASCII strings' bytes, ints, floats,
 * through calls that touch no thread state) and writes into plain malloc'd memory. Whatever needs
 * more (a non-ASCII string's codec, memory it could not get) it leaves to the caller, which writes
 * those items once the helper is done. A fresh request's dicts lie scattered in memory, and the
 * walk is mostly waiting for them: two cores wait side by side.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The helper needs POSIX threads, C11 atomics and the GIL (a free-threaded build has none to rely on). */
#if !defined(Py_GIL_DISABLED) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L \
    && !defined(__STDC_NO_ATOMICS__) && defined(__has_include)
#if __has_include(<pthread.h>)
#define HELPER 1
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#endif
#endif
#ifndef HELPER
#define HELPER 0
#endif

#define MAX_DEPTH 1000 /* below marshal's MAX_MARSHAL_STACK_DEPTH (2000): deeper is marshal's to judge */

#if PY_VERSION_HEX < 0x030B0000
#define PyFloat_Pack8 _PyFloat_Pack8
#endif

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
} Buf;

/* Room for `more` bytes; -1 (no Python error set: the helper thread may not) if there is none.
 * Plain realloc, not PyMem's: the helper thread grows its buffer without the GIL. */
static int reserve(Buf *b, Py_ssize_t more) {
    if (b->len + more <= b->cap) return 0;
    Py_ssize_t cap = b->cap * 2;
    while (cap < b->len + more) cap *= 2;
    char *data = realloc(b->data, cap);
    if (!data) return -1;
    b->data = data;
    b->cap = cap;
    return 0;
}

/* What put_value did. */
#define WRITTEN 1
#define LEFT 0       /* a value this writer leaves to marshal */
#define FAILED (-1)  /* a Python error is set */
#define DEFERRED (-2) /* reads only: a value that needs more (a codec call, memory), for the caller */

/* Out of memory: the caller's error, the helper's deferral. */
static int no_room(int reads_only) {
    if (reads_only) return DEFERRED;
    PyErr_NoMemory();
    return FAILED;
}

static void put_u32(Buf *b, uint32_t x) {  /* little-endian, as marshal's w_long */
    unsigned char *p = (unsigned char *)b->data + b->len;
    p[0] = (unsigned char)x; p[1] = (unsigned char)(x >> 8);
    p[2] = (unsigned char)(x >> 16); p[3] = (unsigned char)(x >> 24);
    b->len += 4;
}

/* WRITTEN, LEFT, FAILED, or (reads_only: on a thread without the GIL, Python's API only read
 * through) DEFERRED. */
static int put_value(Buf *b, PyObject *v, int depth, int reads_only);

static int write_str(Buf *b, PyObject *v, int reads_only) {
#if PY_VERSION_HEX < 0x030C0000
    if (!PyUnicode_IS_READY(v)) {
        if (reads_only) return DEFERRED;
        if (PyUnicode_READY(v) < 0) return FAILED;
    }
#endif
    const char *data;
    Py_ssize_t n;
    PyObject *utf8 = NULL;
    if (PyUnicode_IS_ASCII(v)) {
        data = (const char *)PyUnicode_DATA(v);
        n = PyUnicode_GET_LENGTH(v);
    } else if (reads_only) {
        return DEFERRED;
    } else {
        utf8 = PyUnicode_AsEncodedString(v, "utf8", "surrogatepass");  /* what marshal calls */
        if (!utf8) return FAILED;
        data = PyBytes_AS_STRING(utf8);
        n = PyBytes_GET_SIZE(utf8);
    }
    int ok = WRITTEN;
    if (n > INT32_MAX) ok = LEFT;
    else if (reserve(b, 5 + n) < 0) ok = no_room(reads_only);
    else {
        b->data[b->len++] = 'u';
        put_u32(b, (uint32_t)n);
        memcpy(b->data + b->len, data, n);
        b->len += n;
    }
    Py_XDECREF(utf8);
    return ok;
}

static int put_value(Buf *b, PyObject *v, int depth, int reads_only) {
    if (depth >= MAX_DEPTH) return LEFT;
    if (reserve(b, 9) < 0) return no_room(reads_only);
    if (v == Py_None) { b->data[b->len++] = 'N'; return WRITTEN; }
    if (v == Py_False) { b->data[b->len++] = 'F'; return WRITTEN; }
    if (v == Py_True) { b->data[b->len++] = 'T'; return WRITTEN; }
    if (PyUnicode_CheckExact(v)) return write_str(b, v, reads_only);
    if (PyLong_CheckExact(v)) {
        int overflow;
        /* an exact int: read, never an error (so no thread state is asked for) */
        long x = PyLong_AsLongAndOverflow(v, &overflow);
        if (overflow || x < INT32_MIN || x > INT32_MAX) return LEFT;  /* marshal's TYPE_LONG */
        b->data[b->len++] = 'i';
        put_u32(b, (uint32_t)(int32_t)x);
        return WRITTEN;
    }
    if (PyFloat_CheckExact(v)) {
        b->data[b->len++] = 'g';
        /* IEEE doubles are copied; only a platform of another format could fail */
        if (PyFloat_Pack8(PyFloat_AS_DOUBLE(v), b->data + b->len, 1) < 0) return reads_only ? DEFERRED : FAILED;
        b->len += 8;
        return WRITTEN;
    }
    if (PyList_CheckExact(v)) {
        Py_ssize_t n = PyList_GET_SIZE(v);
        if (n > INT32_MAX) return LEFT;
        b->data[b->len++] = '[';
        put_u32(b, (uint32_t)n);
        for (Py_ssize_t i = 0; i < n; i++) {
            if (i + 1 < n) __builtin_prefetch(PyList_GET_ITEM(v, i + 1));
            int r = put_value(b, PyList_GET_ITEM(v, i), depth + 1, reads_only);
            if (r != WRITTEN) return r;
        }
        return WRITTEN;
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
            int r = put_value(b, key, depth + 1, reads_only);
            if (r != WRITTEN) return r;
            r = put_value(b, value, depth + 1, reads_only);
            if (r != WRITTEN) return r;
        }
        if (reserve(b, 1) < 0) return no_room(reads_only);
        b->data[b->len++] = '0';  /* TYPE_NULL ends a dict */
        return WRITTEN;
    }
    return LEFT;
}

static PyObject *dumps(PyObject *Py_UNUSED(self), PyObject *value) {
    Buf b = {malloc(1024), 0, 1024};
    if (!b.data) return PyErr_NoMemory();
    int r = put_value(&b, value, 0, 0);
    PyObject *out = r == WRITTEN ? PyBytes_FromStringAndSize(b.data, b.len) : NULL;
    free(b.data);
    if (r == LEFT) Py_RETURN_NONE;
    return out;
}

/* Where a list's item was written: [start, end) of the caller's buffer (by 0) or the helper's
 * (by 1); by -1 until written. */
typedef struct {
    Py_ssize_t start, end;
    int by;
} Spot;

#define CHUNK 16             /* items a thread takes at a time */
#define TWO_THREADS_FROM 128 /* items; a shorter list is walked by the caller alone */

/* One list's walk, shared by the caller and the helper: items are taken CHUNK at a time. */
typedef struct {
    PyObject **items;
    Py_ssize_t n;
    Spot *spots;
    Buf *helper_buf;
#if HELPER
    atomic_size_t next_chunk;
    atomic_int closed;  /* the caller has taken its last chunk: the helper starts none */
    atomic_int active;  /* the helper is in the walk (only the helper writes this) */
#else
    size_t next_chunk;
#endif
} Walk;

#if HELPER
static atomic_ulong helper_chunks;  /* chunks the helper has walked (helped() reads it) */
#endif

/* Writes the items of the chunks this thread takes into b, reading only; what it cannot write
 * stays by -1. */
static void walk_chunks(Walk *w, Buf *b, int by) {
    size_t chunks = (size_t)(w->n + CHUNK - 1) / CHUNK;
    for (;;) {
#if HELPER
        size_t c = atomic_fetch_add(&w->next_chunk, 1);
#else
        size_t c = w->next_chunk++;
#endif
        if (c >= chunks) return;
#if HELPER
        if (by) atomic_fetch_add_explicit(&helper_chunks, 1, memory_order_relaxed);
#endif
        Py_ssize_t end = (Py_ssize_t)(c + 1) * CHUNK < w->n ? (Py_ssize_t)(c + 1) * CHUNK : w->n;
        for (Py_ssize_t i = (Py_ssize_t)c * CHUNK; i < end; i++) {
            PyObject *item = w->items[i];
            if (i + 1 < end) __builtin_prefetch(w->items[i + 1]);
            Py_ssize_t start = b->len;
            if (PyDict_CheckExact(item) && put_value(b, item, 0, 1) == WRITTEN)
                w->spots[i] = (Spot){start, b->len, by};
            else
                b->len = start;  /* spots[i].by stays -1: the caller writes it */
        }
    }
}

#if HELPER
/* The helper thread: one per process, started by the first long list, parked between walks.
 * helper_lock guards helper_walk and helper_calls; a walk's progress is in its atomics. */
static pthread_mutex_t helper_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t helper_wake = PTHREAD_COND_INITIALIZER;
static Walk *helper_walk;
static unsigned long helper_calls;
static int helper_state;  /* 0: not started; 1: running; -1: could not start */
static int helper_wanted = 1;  /* two_threads()'s switch (tests walk both ways) */
static Walk the_walk;     /* only ever the walk of the list_key call that holds the GIL */

static void *helper_main(void *unused) {
    (void)unused;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);  /* signals are for Python's threads to take */
    unsigned long seen = 0;
    for (;;) {
        pthread_mutex_lock(&helper_lock);
        while (helper_calls == seen) pthread_cond_wait(&helper_wake, &helper_lock);
        seen = helper_calls;
        Walk *w = helper_walk;
        pthread_mutex_unlock(&helper_lock);
        /* active before closed is read, and the caller sets closed before it reads active:
         * either this thread sees the walk closed, or the caller waits for it to leave. A late
         * wake-up finds a later walk (the_walk is reused), which it may as well help with. */
        atomic_store(&w->active, 1);
        if (!atomic_load(&w->closed)) walk_chunks(w, w->helper_buf, 1);
        atomic_store(&w->active, 0);
    }
    return NULL;
}

/* A forked child has no helper thread: it starts its own when it needs one (and does not wait
 * for the parent's to leave a walk it may have been woken for late). */
static void helper_after_fork(void) {
    pthread_mutex_init(&helper_lock, NULL);
    pthread_cond_init(&helper_wake, NULL);
    atomic_store(&the_walk.active, 0);
    if (helper_state == 1) helper_state = 0;
}

/* Whether the helper is running (started here if it was not). */
static int helper_ready(void) {
    if (helper_state == 0) {
        static int fork_handled;
        pthread_t thread;
        pthread_attr_t attr;
        helper_state = -1;
        if (!fork_handled && pthread_atfork(NULL, NULL, helper_after_fork) != 0) return 0;
        fork_handled = 1;
        if (pthread_attr_init(&attr) != 0) return 0;
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&thread, &attr, helper_main, NULL) == 0) helper_state = 1;
        pthread_attr_destroy(&attr);
    }
    return helper_state == 1;
}
#endif

/* Walks the list into b (and helper_buf, if the helper takes part): the items read-only first,
 * on two threads for a long list, then on this thread whatever that left. WRITTEN, LEFT or
 * FAILED, as put_value. */
static int walk_list(PyObject *values, Buf *b, Buf *helper_buf, Spot *spots) {
    Py_ssize_t n = PyList_GET_SIZE(values);
    for (Py_ssize_t i = 0; i < n; i++) spots[i].by = -1;
#if HELPER
    Walk *w = &the_walk;
#else
    Walk local, *w = &local;
#endif
    w->items = ((PyListObject *)values)->ob_item;
    w->n = n;
    w->spots = spots;
    w->helper_buf = helper_buf;
#if HELPER
    atomic_store(&w->next_chunk, 0);
    atomic_store(&w->closed, 0);
    int helped = helper_wanted && n >= TWO_THREADS_FROM && helper_buf->data && helper_ready();
    if (helped) {
        pthread_mutex_lock(&helper_lock);
        helper_walk = w;
        helper_calls++;
        pthread_cond_signal(&helper_wake);
        pthread_mutex_unlock(&helper_lock);
    }
    walk_chunks(w, b, 0);
    atomic_store(&w->closed, 1);
    for (int spins = 0; atomic_load(&w->active); spins++)  /* the helper is finishing a chunk */
        if (spins > 1000) sched_yield();
#else
    w->next_chunk = 0;
    walk_chunks(w, b, 0);
#endif
    for (Py_ssize_t i = 0; i < n; i++) {
        if (spots[i].by >= 0) continue;
        PyObject *item = PyList_GET_ITEM(values, i);
        Py_ssize_t start = b->len;
        int r = PyDict_CheckExact(item) ? put_value(b, item, 0, 0) : LEFT;
        if (r != WRITTEN) return r;
        spots[i] = (Spot){start, b->len, 0};
    }
    return WRITTEN;
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

/* The buffers list_key writes into (the caller's and the helper's), kept between calls (up to
 * KEPT_MAX bytes each): a fresh megabyte for every request is a realloc chain and a page fault per
 * 4 kB. Safe without a lock: they are read and written only with the GIL held, and a call takes
 * its buffers out for as long as it runs, so a call made meanwhile (another thread's, while
 * `filed` runs Python code) allocates its own; whichever ends first with a slot empty puts its
 * buffer back. */
static Buf kept[2];
#define KEPT_MAX (2 << 20)  /* a list of ~2,000 tool dicts; larger lists allocate their own */

static Buf take_kept(int which) {
    Buf b = kept[which];
    kept[which].data = NULL;
    if (!b.data) {
        b.cap = 1 << 16;
        b.data = malloc(b.cap);
    }
    b.len = 0;
    return b;
}

static void put_back(int which, Buf b) {
    if (b.data && b.cap <= KEPT_MAX && !kept[which].data) kept[which] = b;
    else free(b.data);
}

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

/* (the items' keys sorted and joined, the item of each sorted key, the end of each in the join,
 * both as native int64 bytes, the join's sample), or None if an item is not a dict this writer
 * writes: one pass and one sort, no Python object per item.
 *
 * With `filed` (a callable of the join's length and sample giving the keys filed under them), a
 * key longer than SAMPLE_WHOLE that equals one of those is returned as that very bytes object: a
 * list seen before is compared where its pieces lie, with no new half megabyte written. */
static PyObject *list_key(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *values, *filed = Py_None;
    if (!PyArg_ParseTuple(args, "O|O:list_key", &values, &filed)) return NULL;
    if (!PyList_CheckExact(values)) Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(values);
    Buf b = take_kept(0), helper_buf = take_kept(1);
    Spot *spots = PyMem_Malloc((n ? n : 1) * sizeof *spots);
    Piece *pieces = PyMem_Malloc((n ? 2 * n : 1) * sizeof *pieces), *sorted = pieces;
    PyObject *out = NULL, *data = NULL, *order = NULL, *ends = NULL, *sample = NULL, *found = NULL;
    if (!b.data || !spots || !pieces) { PyErr_NoMemory(); goto done; }
    int r = walk_list(values, &b, &helper_buf, spots);
    if (r == FAILED) goto done;
    if (r == LEFT) { out = Py_None; Py_INCREF(out); goto done; }
    Py_ssize_t total = 0, shared = n ? spots[0].end - spots[0].start : 0;  /* the prefix every piece shares */
    for (Py_ssize_t i = 0; i < n; i++) {
        pieces[i].data = (spots[i].by ? helper_buf.data : b.data) + spots[i].start;
        pieces[i].len = spots[i].end - spots[i].start;
        pieces[i].index = i;
        total += pieces[i].len;
        Py_ssize_t k = 0, most = pieces[i].len < shared ? pieces[i].len : shared;
        while (k < most && pieces[i].data[k] == pieces[0].data[k]) k++;
        shared = k;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        pieces[i].hi = word_at(&pieces[i], shared);
        pieces[i].lo = word_at(&pieces[i], shared + 8);
    }
    sorted = sort_pieces(pieces, pieces + n, n);
    order = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    ends = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    int whole = total <= SAMPLE_WHOLE;
    if (whole) {
        data = PyBytes_FromStringAndSize(NULL, total);
        if (data) join(PyBytes_AS_STRING(data), sorted, n);
        sample = data;
        Py_XINCREF(sample);
    } else {
        sample = PyBytes_FromStringAndSize(NULL, (total + SAMPLE_STEP - 1) / SAMPLE_STEP);
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
    if (!whole && filed != Py_None) {
        found = PyObject_CallFunction(filed, "nO", total, sample);  /* the GIL may change hands here */
        if (!found) goto done;
        PyObject *each = PySequence_Fast(found, "list_key: filed() must give a sequence of bytes");
        if (!each) goto done;
        for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(each) && !data; k++) {
            PyObject *known = PySequence_Fast_GET_ITEM(each, k);
            if (joins_to(sorted, n, total, known)) { data = known; Py_INCREF(data); }
        }
        Py_DECREF(each);
    }
    if (!data) {
        data = PyBytes_FromStringAndSize(NULL, total);
        if (!data) goto done;
        join(PyBytes_AS_STRING(data), sorted, n);
    }
    out = PyTuple_Pack(4, data, order, ends, sample);
done:
    Py_XDECREF(found);
    Py_XDECREF(sample);
    Py_XDECREF(data);
    Py_XDECREF(order);
    Py_XDECREF(ends);
    put_back(0, b);
    put_back(1, helper_buf);
    PyMem_Free(spots);
    PyMem_Free(pieces);
    return out;
}

static PyObject *two_threads(PyObject *Py_UNUSED(self), PyObject *args) {
    int enabled;
    if (!PyArg_ParseTuple(args, "p:two_threads", &enabled)) return NULL;
#if HELPER
    int was = helper_wanted;
    helper_wanted = enabled;
    return PyBool_FromLong(was);
#else
    (void)enabled;
    Py_RETURN_FALSE;
#endif
}

static PyObject *helped(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(unused)) {
#if HELPER
    return PyLong_FromUnsignedLong(atomic_load_explicit(&helper_chunks, memory_order_relaxed));
#else
    return PyLong_FromLong(0);
#endif
}

static PyMethodDef methods[] = {
    {"dumps", dumps, METH_O,
     "dumps(value) -> bytes | None: marshal.dumps(value, 2) for JSON values, None for anything else."},
    {"list_key", list_key, METH_VARARGS,
     "list_key(values, filed=None) -> (bytes, bytes, bytes, bytes) | None: the dicts' dumps sorted and"
     " joined (filed(length, sample)'s equal bytes object where one is), the item of each and the end"
     " of each in the join (native int64s), the join's sample; None if an item is not written."},
    {"two_threads", two_threads, METH_VARARGS,
     "two_threads(enabled) -> bool: whether list_key may walk a long list on two threads (it does"
     " where the platform has threads); gives the previous setting."},
    {"helped", helped, METH_NOARGS,
     "helped() -> int: how many chunks of list items the helper thread has walked in this process."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_value_key", NULL, -1, methods};

PyMODINIT_FUNC PyInit__value_key(void) { return PyModule_Create(&module); }
