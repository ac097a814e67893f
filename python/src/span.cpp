// mainboard.span, the hot path, in the CPython C API: pybind11's call machinery costs more than
// a dormant span may. With no session active, span("name") returns one shared object whose
// __enter__ and __exit__ do nothing; inside a session it returns a small object that opens and
// closes a span of the C++ library on this thread, so Python spans and MAINBOARD_SPAN in a C++
// extension called from inside them nest in one session. Inside an asyncio task, spans nest per
// task: each task that opens one gets a track of the library (a span stack of its own), and a
// context variable carries the task's open path to the tasks it creates.
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

const char* interned(PyObject* name) {
  PyObject* known = PyDict_GetItemWithError(g_names, name);  // borrowed
  if (known) return static_cast<const char*>(PyLong_AsVoidPtr(known));
  if (PyErr_Occurred()) return nullptr;
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(name, &size);
  if (!utf8) return nullptr;
  // The library keeps the copy, and bounds how many distinct names it keeps: a refused name
  // (its span kept under "[other names]") is not remembered here either.
  const char* copy = mainboard::detail::span_name(utf8, static_cast<std::size_t>(size));
  if (!copy) {
    PyErr_NoMemory();
    return nullptr;
  }
  if (std::strcmp(copy, "[other names]") == 0 && std::strcmp(utf8, "[other names]") != 0)
    return copy;
  PyObject* address = PyLong_FromVoidPtr(const_cast<char*>(copy));
  if (!address) return nullptr;
  int failed = PyDict_SetItem(g_names, name, address);
  Py_DECREF(address);
  return failed ? nullptr : copy;
}

// The dormant span: one shared instance per name (kept for the first names seen).
struct Dormant {
  PyObject_HEAD PyObject* name;
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

// An active span: the name and, once entered, the thread state or track that holds it.
struct Active {
  PyObject_HEAD PyObject* name;
  const char* interned;
  mainboard::detail::ThreadState* state;
  PyObject* track;  // the task's track (a capsule) while open in a task, else null
  PyObject* token;  // the context variable's token to restore on exit
};

// asyncio, looked up once the program has imported it (no task can run before).
PyObject* g_get_running_loop = nullptr;
PyObject* g_current_task = nullptr;
// The running task's spans, as a chain of nodes (task weakref, track capsule, name, up): the
// innermost open span, up to the task's base node (name None) whose `up` is where the task began:
// the node current in its creator when it was created, a list of the thread's open names, or
// None. A task sets its base once, at its first span, and each span sets its node until it closes;
// a task created meanwhile copies the context and so starts under that span.
PyObject* g_task_spans = nullptr;
constexpr const char* kTrackCapsule = "mainboard.track";

PyObject* g_current_tasks = nullptr;  // asyncio's dict: running loop -> its current task

/// The asyncio task running on this thread (a new reference), or null for none. Errors of the
/// look-up are cleared: a span never fails the code it measures.
///
/// asyncio keeps the task each loop runs now in one dict: empty, no task runs anywhere (nothing
/// to look up); else the entry whose loop runs on this thread. asyncio's own
/// _get_running_loop() makes a getpid() system call each time, more than the whole span costs,
/// so it is the fallback only, for loops that do not say their thread.
PyObject* running_task() {
  if (!g_current_task) {
    static PyObject* module_name = PyUnicode_InternFromString("asyncio");
    PyObject* asyncio = module_name ? PyImport_GetModule(module_name) : nullptr;
    if (!asyncio) {
      PyErr_Clear();
      return nullptr;  // not imported: no loop runs
    }
    g_get_running_loop = PyObject_GetAttrString(asyncio, "_get_running_loop");
    g_current_task = g_get_running_loop ? PyObject_GetAttrString(asyncio, "current_task") : nullptr;
    if (PyObject* tasks = PyObject_GetAttrString(asyncio, "tasks")) {
      PyObject* current = PyObject_GetAttrString(tasks, "_current_tasks");
      if (current && PyDict_CheckExact(current))
        g_current_tasks = current;
      else
        Py_XDECREF(current);
      Py_DECREF(tasks);
    }
    Py_DECREF(asyncio);
    PyErr_Clear();
    if (!g_current_task) {
      Py_CLEAR(g_get_running_loop);
      Py_CLEAR(g_current_tasks);
      return nullptr;
    }
  }
  if (g_current_tasks) {
    if (PyDict_Size(g_current_tasks) == 0) return nullptr;
    static PyObject* thread_id = PyUnicode_InternFromString("_thread_id");
    unsigned long me = PyThread_get_thread_ident();
    Py_ssize_t at = 0;
    PyObject* loop = nullptr;
    PyObject* task = nullptr;
    bool unknown = false;  // a loop that does not say its thread
    while (PyDict_Next(g_current_tasks, &at, &loop, &task)) {
      PyObject* id = thread_id ? PyObject_GetAttr(loop, thread_id) : nullptr;
      if (!id || !PyLong_Check(id)) {
        Py_XDECREF(id);
        PyErr_Clear();
        unknown = true;
        continue;
      }
      unsigned long owner = PyLong_AsUnsignedLong(id);
      Py_DECREF(id);
      if (owner == me && !PyErr_Occurred()) return Py_NewRef(task);
      PyErr_Clear();
    }
    if (!unknown) return nullptr;
  }
  PyObject* loop = PyObject_CallNoArgs(g_get_running_loop);
  if (!loop || loop == Py_None) {
    Py_XDECREF(loop);
    PyErr_Clear();
    return nullptr;
  }
  PyObject* task = PyObject_CallOneArg(g_current_task, loop);
  Py_DECREF(loop);
  if (!task || task == Py_None) {
    Py_XDECREF(task);
    PyErr_Clear();
    return nullptr;
  }
  return task;
}

void close_track(PyObject* capsule) {
  mainboard::detail::track_close(
      static_cast<mainboard::detail::Track*>(PyCapsule_GetPointer(capsule, kTrackCapsule)));
}

/// A new track whose spans are children of `path` (a tuple of str): a capsule, or null.
PyObject* open_track(PyObject* path) {
  constexpr Py_ssize_t kMaxDepth = 64;
  const char* names[kMaxDepth];
  std::size_t depth = 0;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(path) && i < kMaxDepth; ++i) {
    const char* name = interned(PyTuple_GET_ITEM(path, i));
    if (!name) return nullptr;
    names[depth++] = name;
  }
  auto* track = mainboard::detail::track_open("asyncio tasks", names, depth);
  if (!track) return nullptr;
  PyObject* capsule = PyCapsule_New(track, kTrackCapsule, close_track);
  if (!capsule) mainboard::detail::track_close(track);
  return capsule;
}

/// The names of the spans open on this thread outside any task (a new list).
PyObject* thread_path() {
  constexpr std::size_t kMaxDepth = 64;
  const char* names[kMaxDepth];
  std::size_t n = mainboard::detail::open_path(names, kMaxDepth);
  PyObject* path = PyList_New(static_cast<Py_ssize_t>(n));
  if (!path) return nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    PyObject* name = PyUnicode_FromString(names[i]);
    if (!name) {
      Py_DECREF(path);
      return nullptr;
    }
    PyList_SET_ITEM(path, static_cast<Py_ssize_t>(i), name);
  }
  return path;
}

bool is_node(PyObject* value) {
  return value && PyTuple_CheckExact(value) && PyTuple_GET_SIZE(value) == 4;
}

/// The names open at `where` (a node, a list of names or None), outermost first: a new tuple.
PyObject* path_of(PyObject* where) {
  PyObject* names = PyList_New(0);
  if (!names) return nullptr;
  for (int hops = 0; where && where != Py_None && hops < 4096; ++hops) {
    if (PyList_CheckExact(where)) {
      for (Py_ssize_t i = PyList_GET_SIZE(where); i-- > 0;)
        if (PyList_Append(names, PyList_GET_ITEM(where, i)) < 0) goto failed;
      break;
    }
    if (!is_node(where)) break;
    if (PyTuple_GET_ITEM(where, 2) != Py_None &&
        PyList_Append(names, PyTuple_GET_ITEM(where, 2)) < 0)
      goto failed;
    where = PyTuple_GET_ITEM(where, 3);
  }
  if (PyList_Reverse(names) < 0) goto failed;
  {
    PyObject* path = PyList_AsTuple(names);
    Py_DECREF(names);
    return path;
  }
failed:
  Py_DECREF(names);
  return nullptr;
}

mainboard::detail::ThreadState* enter_on_track(PyObject* track, const char* name) {
  auto* t = static_cast<mainboard::detail::Track*>(PyCapsule_GetPointer(track, kTrackCapsule));
  return t ? mainboard::detail::span_enter_on(mainboard::detail::track_state(t), name) : nullptr;
}

/// The task's base node: a new track under where the task began (a new reference), set in the
/// task's context for the rest of its life; null on failure.
PyObject* new_base(PyObject* task, PyObject* inherited) {
  PyObject* up = inherited ? Py_NewRef(inherited) : thread_path();
  if (!up) return nullptr;
  PyObject* path = path_of(up);
  PyObject* track = path ? open_track(path) : nullptr;
  Py_XDECREF(path);
  PyObject* ref = track ? PyWeakref_NewRef(task, nullptr) : nullptr;
  PyObject* base = ref ? PyTuple_Pack(4, ref, track, Py_None, up) : nullptr;
  Py_XDECREF(ref);
  Py_XDECREF(track);
  Py_DECREF(up);
  if (base) {
    PyObject* token = PyContextVar_Set(g_task_spans, base);
    if (!token) Py_CLEAR(base);
    Py_XDECREF(token);
  }
  return base;
}

/// Opens `s` on the running task's track; false when no task runs (the thread's stack then).
bool enter_in_task(Active* s) {
  PyObject* task = running_task();
  if (!task) return false;
  PyObject* value = nullptr;
  if (PyContextVar_Get(g_task_spans, nullptr, &value) < 0) {
    PyErr_Clear();
    value = nullptr;
  }
  if (!is_node(value)) Py_CLEAR(value);
  PyObject* at = nullptr;  // the node the span opens under
  if (value && PyWeakref_GetObject(PyTuple_GET_ITEM(value, 0)) == task) {
    s->state = enter_on_track(PyTuple_GET_ITEM(value, 1), s->interned);
    if (s->state) {
      at = Py_NewRef(value);
    } else {
      at = new_base(task, nullptr);  // the task's track is of an ended session: start afresh
    }
  } else {
    at = new_base(task, value);  // the task's first span: under where it began
  }
  if (at && !s->state) s->state = enter_on_track(PyTuple_GET_ITEM(at, 1), s->interned);
  if (s->state) {
    PyObject* node = PyTuple_Pack(4, PyTuple_GET_ITEM(at, 0), PyTuple_GET_ITEM(at, 1), s->name, at);
    if (node) {
      s->token = PyContextVar_Set(g_task_spans, node);
      Py_DECREF(node);
    }
    s->track = Py_NewRef(PyTuple_GET_ITEM(at, 1));  // open while a span is open on it
  }
  bool entered = s->state != nullptr;
  Py_XDECREF(at);
  Py_XDECREF(value);
  Py_DECREF(task);
  PyErr_Clear();
  return entered;
}

PyObject* active_enter(PyObject* self, PyObject*) {
  auto* s = reinterpret_cast<Active*>(self);
  if (mainboard::detail::g_profiling.load(std::memory_order_relaxed) != 0) {
    if (!enter_in_task(s)) s->state = mainboard::detail::span_enter(s->interned);
  }
  Py_INCREF(self);
  return self;
}
PyObject* active_exit(PyObject* self, PyObject* const*, Py_ssize_t) {
  auto* s = reinterpret_cast<Active*>(self);
  if (s->state) {
    mainboard::detail::span_exit(s->state);
    s->state = nullptr;
  }
  if (s->token) {
    // Another context than the one entered (a span handed between tasks): nothing to restore.
    if (PyContextVar_Reset(g_task_spans, s->token) < 0) PyErr_Clear();
    Py_CLEAR(s->token);
  }
  Py_CLEAR(s->track);
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
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a span decorates one function");
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
  auto* s = reinterpret_cast<Active*>(self);
  Py_XDECREF(s->name);
  Py_XDECREF(s->token);
  Py_XDECREF(s->track);
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
    s->track = nullptr;
    s->token = nullptr;
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
     "span(function) -> the function, wrapped in a span named by its qualified name.\n"
     "Spans nest per thread, and inside an asyncio task per task: a task's spans are children\n"
     "of the spans open where it was created."},
    {"_set_decorator", set_decorator, METH_O, "The maker of span decorators (internal)."},
    {"_profiling", is_profiling, METH_NOARGS, "Whether a session records spans now (internal)."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

bool add_span_functions(PyObject* module) {
  g_names = PyDict_New();
  g_dormant_by_name = PyDict_New();
  if (!g_dormant_by_name) return false;
  g_task_spans = PyContextVar_New("mainboard_task_spans", nullptr);
  if (!g_task_spans) return false;
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
