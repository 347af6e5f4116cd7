/* A prototype of chunklab's recursive walk in C (benchmarks/compiled_floor.py builds and measures it).
 *
 * spans(text, size, overlap, levels) gives what chunklab.chunkers.recursive._char_spans gives:
 * a list of (start, end, level, shared) in characters. ``levels`` is a tuple of tuples of
 * str, strongest first, the last being ("",); every non-empty separator must end with a
 * one-character separator (true of the defaults), the case where the overlap starts at the
 * first non-space after the earliest such character. Not part of the package.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *spans(PyObject *self, PyObject *args) {
    PyObject *text, *levels;
    Py_ssize_t size, overlap;
    if (!PyArg_ParseTuple(args, "UnnO!", &text, &size, &overlap, &PyTuple_Type, &levels)) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t nlev = PyTuple_GET_SIZE(levels);
    Py_ssize_t last = nlev - 1;
    /* the one-character separators: where an overlap may start after */
    Py_UCS4 singles[64];
    int nsingles = 0;
    for (Py_ssize_t li = 0; li < last; li++) {
        PyObject *g = PyTuple_GET_ITEM(levels, li);
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(g); k++) {
            PyObject *sep = PyTuple_GET_ITEM(g, k);
            if (PyUnicode_GET_LENGTH(sep) == 1 && nsingles < 64)
                singles[nsingles++] = PyUnicode_READ_CHAR(sep, 0);
        }
    }
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    Py_ssize_t s = 0;
    while (s < n && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, s))) s++;
    if (s >= n) return out;
    Py_ssize_t lo = s, shared = 0;
    for (;;) {
        Py_ssize_t limit = s + size, end, level;
        if (limit >= n) {
            end = n;
            level = 0;
        } else {
            end = limit;
            level = last;
            for (Py_ssize_t li = 0; li < last; li++) {
                PyObject *g = PyTuple_GET_ITEM(levels, li);
                Py_ssize_t best = -1;
                for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(g); k++) {
                    PyObject *sep = PyTuple_GET_ITEM(g, k);
                    Py_ssize_t w = PyUnicode_GET_LENGTH(sep);
                    Py_ssize_t p = PyUnicode_Find(text, sep, lo, limit, -1);
                    if (p == -2) goto fail;
                    if (p != -1 && p + w > best) best = p + w;
                }
                if (best > lo) {
                    end = best;
                    level = li;
                    break;
                }
            }
        }
        Py_ssize_t e = end;
        while (e > s && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, e - 1))) e--;
        PyObject *t = Py_BuildValue("(nnnn)", s, e, level, shared);
        if (!t || PyList_Append(out, t) < 0) { Py_XDECREF(t); goto fail; }
        Py_DECREF(t);
        Py_ssize_t ns = end;
        while (ns < n && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, ns))) ns++;
        if (ns >= n) break;
        Py_ssize_t nxt = ns;
        shared = 0;
        if (overlap) {
            Py_ssize_t b = e - overlap;
            if (b <= s) b = s + 1;
            Py_ssize_t cand = b, q;
            for (q = b - 1; q < e - 1; q++) {  /* the earliest one-character separator */
                Py_UCS4 c = PyUnicode_READ(kind, data, q);
                int hit = 0;
                for (int k = 0; k < nsingles; k++) if (singles[k] == c) { hit = 1; break; }
                if (hit) { cand = q + 1; break; }
            }
            while (cand < e && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, cand))) cand++;
            if (cand < e && cand + size > ns) {
                nxt = cand;
                shared = e - cand;
            }
        }
        s = nxt;
        lo = ns;
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyMethodDef methods[] = {
    {"spans", spans, METH_VARARGS, "chunklab's recursive spans in characters (a prototype)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "rspans", NULL, -1, methods};

PyMODINIT_FUNC PyInit_rspans(void) { return PyModule_Create(&module); }
