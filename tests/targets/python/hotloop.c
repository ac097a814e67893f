/* A C extension whose hot loop is native: hotloop.spin(n) runs hotloop_kernel n times. Built by
 * the tests to show a mixed stack: the Python caller, then the extension's native frames. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

__attribute__((noinline)) static unsigned long hotloop_kernel(unsigned long n) {
  unsigned long x = 1;
  for (unsigned long i = 0; i < n; ++i) {
    x = x * 6364136223846793005UL + 1442695040888963407UL;
    __asm__ volatile("" : "+r"(x));
  }
  return x;
}

static PyObject* hotloop_spin(PyObject* self, PyObject* args) {
  (void)self;
  unsigned long n = 0;
  if (!PyArg_ParseTuple(args, "k", &n)) return NULL;
  return PyLong_FromUnsignedLong(hotloop_kernel(n));
}

static PyMethodDef methods[] = {
    {"spin", hotloop_spin, METH_VARARGS, "Runs a native loop n times."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "hotloop", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_hotloop(void) { return PyModule_Create(&module); }
