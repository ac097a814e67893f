/* A C extension whose hot loop is native: hotloop.spin(n) runs hotloop_kernel n times. Built by
 * the tests to show a mixed stack: the Python caller, then the extension's native frames. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <unistd.h>

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

/* hotloop.vfork_wait(ms): the calling thread waits in vfork while the child sleeps `ms`
 * milliseconds, in the kernel's uninterruptible ('D') state, which ptrace cannot stop. */
static PyObject* hotloop_vfork_wait(PyObject* self, PyObject* args) {
  (void)self;
  unsigned int ms = 0;
  if (!PyArg_ParseTuple(args, "I", &ms)) return NULL;
  pid_t child = vfork();
  if (child == 0) {
    usleep(ms * 1000u);
    _exit(0);
  }
  if (child < 0) return PyErr_SetFromErrno(PyExc_OSError);
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"spin", hotloop_spin, METH_VARARGS, "Runs a native loop n times."},
    {"vfork_wait", hotloop_vfork_wait, METH_VARARGS, "Waits in vfork for ms milliseconds."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "hotloop", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_hotloop(void) { return PyModule_Create(&module); }
