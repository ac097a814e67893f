// mainboard.span, the hot path, in the CPython C API: pybind11's call machinery costs more than
// a dormant span may. With no session active, span("name") returns one shared object whose
// __enter__ and __exit__ do nothing; inside a session it returns a small object that opens and
// closes a span of the C++ library on this thread, so Python spans and MAINBOARD_SPAN in a C++
// extension called from inside them nest in one session.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstring>
#include <deque>
#include <mutex>
#include <string>

#include "mainboard/span.hpp"
#include "python/src/span.hpp"

namespace mainboard::python {

namespace {

/// Python names to C strings that live as long as the process (the C++ hot path keeps the
/// pointer). Few distinct names exist; the dict maps each str object to its copy.
PyObject* g_names = nullptr;  // dict: str -> int (the address)
std::deque<std::string>* g_name_store = nullptr;

const char* interned(PyObject* name) {
  PyObject* known = PyDict_GetItemWithError(g_names, name);  // borrowed
  if (known) return static_cast<const char*>(PyLong_AsVoidPtr(known));
  if (PyErr_Occurred()) return nullptr;
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(name, &size);
  if (!utf8) return nullptr;
  const char* copy = g_name_store->emplace_back(utf8, static_cast<std::size_t>(size)).c_str();
  PyObject* address = PyLong_FromVoidPtr(const_cast<char*>(copy));
  if (!address) return nullptr;
  int failed = PyDict_SetItem(g_names, name, address);
  Py_DECREF(address);
  return failed ? nullptr : copy;
}

// The dormant span: one shared instance per name (kept for the first names seen).
struct Dormant {
  PyObject_HEAD
  PyObject* name;
};
PyObject* g_dormant_by_name = nullptr;  // dict: str -> Dormant
constexpr Py_ssize_t kMaxDormantNames = 4096;

PyObject* dormant_enter(PyObject* self, PyObject*) {
  Py_INCREF(self);
  return self;
}
PyObject* dormant_exit(PyObject*, PyObject* const*, Py_ssize_t) {
  Py_RETURN_FALSE;
}

PyMethodDef dormant_methods[] = {
    {"__enter__", dormant_enter, METH_NOARGS, nullptr},
    {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(dormant_exit)),
     METH_FASTCALL, nullptr},
    {nullptr, nullptr, 0, nullptr}};

PyTypeObject DormantType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// An active span: the name and, once entered, the thread state that holds it.
struct Active {
  PyObject_HEAD
  PyObject* name;
  const char* interned;
  mainboard::detail::ThreadState* state;
};

PyObject* active_enter(PyObject* self, PyObject*) {
  auto* s = reinterpret_cast<Active*>(self);
  if (mainboard::detail::g_profiling.load(std::memory_order_relaxed) != 0)
    s->state = mainboard::detail::span_enter(s->interned);
  Py_INCREF(self);
  return self;
}
PyObject* active_exit(PyObject* self, PyObject* const*, Py_ssize_t) {
  auto* s = reinterpret_cast<Active*>(self);
  if (s->state) {
    mainboard::detail::span_exit(s->state);
    s->state = nullptr;
  }
  Py_RETURN_FALSE;
}

PyMethodDef active_methods[] = {
    {"__enter__", active_enter, METH_NOARGS, nullptr},
    {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(active_exit)),
     METH_FASTCALL, nullptr},
    {nullptr, nullptr, 0, nullptr}};

PyTypeObject ActiveType = {PyVarObject_HEAD_INIT(nullptr, 0)};

/// The Python-level decorator maker, set by the package: decorate(function, name).
PyObject* g_decorate = nullptr;

/// span("name") used as a decorator: the function in a span of that name.
PyObject* decorate_with(PyObject* name, PyObject* args, PyObject* kwargs) {
  PyObject* fn = nullptr;
  if ((kwargs && PyDict_Size(kwargs) > 0) || !PyArg_UnpackTuple(args, "span", 1, 1, &fn)) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_TypeError, "a span decorates one function");
    return nullptr;
  }
  if (!PyCallable_Check(fn) || !g_decorate) {
    PyErr_Format(PyExc_TypeError, "span(%R) decorates a function, not %.100s", name,
                 Py_TYPE(fn)->tp_name);
    return nullptr;
  }
  return PyObject_CallFunctionObjArgs(g_decorate, fn, name, nullptr);
}

PyObject* dormant_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  return decorate_with(reinterpret_cast<Dormant*>(self)->name, args, kwargs);
}
PyObject* active_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  return decorate_with(reinterpret_cast<Active*>(self)->name, args, kwargs);
}
void dormant_dealloc(PyObject* self) {
  Py_XDECREF(reinterpret_cast<Dormant*>(self)->name);
  PyObject_Free(self);
}
void active_dealloc(PyObject* self) {
  Py_XDECREF(reinterpret_cast<Active*>(self)->name);
  PyObject_Free(self);
}

PyObject* dormant(PyObject* name) {
  PyObject* known = PyDict_GetItemWithError(g_dormant_by_name, name);  // borrowed
  if (known) return Py_NewRef(known);
  if (PyErr_Occurred()) return nullptr;
  auto* d = PyObject_New(Dormant, &DormantType);
  if (!d) return nullptr;
  d->name = Py_NewRef(name);
  auto* obj = reinterpret_cast<PyObject*>(d);
  if (PyDict_Size(g_dormant_by_name) < kMaxDormantNames &&
      PyDict_SetItem(g_dormant_by_name, name, obj) < 0) {
    Py_DECREF(obj);
    return nullptr;
  }
  return obj;
}

PyObject* span(PyObject*, PyObject* arg) {
  if (PyUnicode_CheckExact(arg)) {
    if (mainboard::detail::g_profiling.load(std::memory_order_relaxed) == 0) [[likely]]
      return dormant(arg);
    const char* name = interned(arg);
    if (!name) return nullptr;
    auto* s = PyObject_New(Active, &ActiveType);
    if (!s) return nullptr;
    s->name = Py_NewRef(arg);
    s->interned = name;
    s->state = nullptr;
    return reinterpret_cast<PyObject*>(s);
  }
  if (PyUnicode_Check(arg)) {  // a str subclass: its plain value
    PyObject* plain = PyUnicode_FromObject(arg);
    if (!plain) return nullptr;
    PyObject* out = span(nullptr, plain);
    Py_DECREF(plain);
    return out;
  }
  if (PyCallable_Check(arg) && g_decorate)
    return PyObject_CallFunctionObjArgs(g_decorate, arg, Py_None, nullptr);
  PyErr_Format(PyExc_TypeError, "span() takes a name (str) or a function, not %.100s",
               Py_TYPE(arg)->tp_name);
  return nullptr;
}

PyObject* set_decorator(PyObject*, PyObject* fn) {
  if (!PyCallable_Check(fn)) {
    PyErr_SetString(PyExc_TypeError, "the decorator must be callable");
    return nullptr;
  }
  Py_XSETREF(g_decorate, Py_NewRef(fn));
  Py_RETURN_NONE;
}

PyObject* is_profiling(PyObject*, PyObject*) {
  return PyBool_FromLong(mainboard::detail::g_profiling.load(std::memory_order_relaxed) != 0);
}

PyMethodDef functions[] = {
    {"span", span, METH_O,
     "span(name) -> a context manager for a span named `name`, for an active Profiler.\n"
     "span(function) -> the function, wrapped in a span named by its qualified name."},
    {"_set_decorator", set_decorator, METH_O, "The maker of span decorators (internal)."},
    {"_profiling", is_profiling, METH_NOARGS, "Whether a session records spans now (internal)."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

bool add_span_functions(PyObject* module) {
  g_names = PyDict_New();
  g_dormant_by_name = PyDict_New();
  if (!g_dormant_by_name) return false;
  g_name_store = new std::deque<std::string>;  // never freed: spans may point into it until exit
  if (!g_names) return false;
  DormantType.tp_name = "mainboard._DormantSpan";
  DormantType.tp_basicsize = sizeof(Dormant);
  DormantType.tp_flags = Py_TPFLAGS_DEFAULT;
  DormantType.tp_methods = dormant_methods;
  DormantType.tp_doc = "A span with no session active: entering and leaving it does nothing.";
  DormantType.tp_call = dormant_call;
  DormantType.tp_dealloc = dormant_dealloc;
  ActiveType.tp_name = "mainboard._Span";
  ActiveType.tp_basicsize = sizeof(Active);
  ActiveType.tp_flags = Py_TPFLAGS_DEFAULT;
  ActiveType.tp_methods = active_methods;
  ActiveType.tp_doc = "A span of the active session, open between __enter__ and __exit__.";
  ActiveType.tp_call = active_call;
  ActiveType.tp_dealloc = active_dealloc;
  if (PyType_Ready(&DormantType) < 0 || PyType_Ready(&ActiveType) < 0) return false;
  for (PyMethodDef* f = functions; f->ml_name; ++f) {
    PyObject* fn = PyCFunction_NewEx(f, nullptr, nullptr);
    if (!fn || PyModule_AddObject(module, f->ml_name, fn) < 0) {
      Py_XDECREF(fn);
      return false;
    }
  }
  return true;
}

}  // namespace mainboard::python
