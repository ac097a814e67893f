// mainboard.span, the hot path, in the CPython C API: pybind11's call machinery costs more than
// a dormant span may. span("name") returns one shared object per name. With no session active,
// entering and leaving it does nothing; inside a session, entering it opens a span of the C++
// library on this thread, so Python spans and MAINBOARD_SPAN in a C++ extension called from
// inside them nest in one session. Whether a session records is decided at each entry, not when
// the object is made, so `region = span("x")` at module level records once a session starts.
// Inside an asyncio task, spans nest per task: each task that opens one gets a track of the
// library (a span stack of its own), and a context variable carries the task's open path to the
// tasks it creates.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "mainboard/span.hpp"
#include "python/src/span.hpp"

#if PY_VERSION_HEX < 0x030A0000  // 3.9: Py_NewRef came in 3.10
static inline PyObject* Py_NewRef(PyObject* object) {
  Py_INCREF(object);
  return object;
}
#endif

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

// A span object: its name, and the spans it has open now. One object may be open several times
// at once, nested (a recursive function under @span) or on several threads (a span made once at
// module level and entered by each worker), so each entry records its thread, and an exit
// closes that thread's innermost entry of the object. Objects are shared per name (the first
// names seen): `span("x")` in a loop allocates nothing.
struct Entry {
  unsigned long thread;
  mainboard::detail::ThreadState* state;  // null: entered while no session recorded
  PyObject* track;                        // the task's track while open in a task, else null
  PyObject* token;                        // the context variable's token to restore on exit
  PyObject* node;                         // the task's node this entry set, else null
};

struct Span {
  PyObject_HEAD PyObject* name;
  const char* interned;  // the library's copy of the name, once a session used it
  Py_ssize_t open;       // entries in use
  Entry first;           // the first entry, inline: one open at a time allocates nothing
  std::vector<Entry>* more;
};

PyObject* g_span_by_name = nullptr;  // dict: str -> Span
constexpr Py_ssize_t kMaxSharedNames = 4096;

Entry& entry_at(Span* s, Py_ssize_t i) {
  return i == 0 ? s->first : (*s->more)[static_cast<std::size_t>(i - 1)];
}

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

/// Whether the weak reference `ref` points to `object` (still alive).
bool weakref_is(PyObject* ref, PyObject* object) {
#if PY_VERSION_HEX >= 0x030D0000
  PyObject* target = nullptr;  // PyWeakref_GetObject is deprecated from 3.13
  if (PyWeakref_GetRef(ref, &target) < 0) {
    PyErr_Clear();
    return false;
  }
  bool same = target == object;
  Py_XDECREF(target);
  return same;
#else
  return PyWeakref_GetObject(ref) == object;
#endif
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

/// Opens `e` (a span named `interned`, object `name`) on the running task's track; false when
/// no task runs (the thread's stack then).
bool enter_in_task(Entry* e, PyObject* name, const char* interned) {
  PyObject* task = running_task();
  if (!task) return false;
  PyObject* value = nullptr;
  if (PyContextVar_Get(g_task_spans, nullptr, &value) < 0) {
    PyErr_Clear();
    value = nullptr;
  }
  if (!is_node(value)) Py_CLEAR(value);
  PyObject* at = nullptr;  // the node the span opens under
  if (value && weakref_is(PyTuple_GET_ITEM(value, 0), task)) {
    e->state = enter_on_track(PyTuple_GET_ITEM(value, 1), interned);
    if (e->state) {
      at = Py_NewRef(value);
    } else {
      at = new_base(task, nullptr);  // the task's track is of an ended session: start afresh
    }
  } else {
    at = new_base(task, value);  // the task's first span: under where it began
  }
  if (at && !e->state) e->state = enter_on_track(PyTuple_GET_ITEM(at, 1), interned);
  if (e->state) {
    PyObject* node = PyTuple_Pack(4, PyTuple_GET_ITEM(at, 0), PyTuple_GET_ITEM(at, 1), name, at);
    if (node) {
      e->token = PyContextVar_Set(g_task_spans, node);
      e->node = node;  // the entry keeps it: its exit is found by it
    }
    e->track = Py_NewRef(PyTuple_GET_ITEM(at, 1));  // open while a span is open on it
  }
  bool entered = e->state != nullptr;
  Py_XDECREF(at);
  Py_XDECREF(value);
  Py_DECREF(task);
  PyErr_Clear();
  return entered;
}

PyObject* span_enter(PyObject* self, PyObject*) {
  auto* s = reinterpret_cast<Span*>(self);
  bool recording = mainboard::detail::g_profiling.load(std::memory_order_relaxed) != 0;
  if (!recording && s->open == 0) [[likely]] {  // dormant: nothing to do, nothing to undo
    Py_INCREF(self);
    return self;
  }
  // An entry even when not recording, if the object is open already: its exit must then pop
  // this entry, not close the one opened before the session ended.
  Entry e{PyThread_get_thread_ident(), nullptr, nullptr, nullptr, nullptr};
  if (recording) {
    if (!s->interned) s->interned = interned(s->name);
    if (!s->interned) return nullptr;
    if (!enter_in_task(&e, s->name, s->interned))
      e.state = mainboard::detail::span_enter(s->interned);
    if (!e.state && s->open == 0) {  // the session ended meanwhile: dormant after all
      Py_INCREF(self);
      return self;
    }
  }
  if (s->open == 0) {
    s->first = e;
  } else {
    try {
      if (!s->more) s->more = new std::vector<Entry>();
      s->more->push_back(e);
    } catch (...) {
      if (e.state) mainboard::detail::span_exit(e.state);
      Py_XDECREF(e.track);
      Py_XDECREF(e.token);
      Py_XDECREF(e.node);
      return PyErr_NoMemory();
    }
  }
  ++s->open;
  Py_INCREF(self);
  return self;
}

/// Returns None, never True: a span does not swallow the exception of its body (and a type
/// checker, seeing `-> None`, knows that `with span(...): return x` returns).
PyObject* span_exit(PyObject* self, PyObject* const*, Py_ssize_t) {
  auto* s = reinterpret_cast<Span*>(self);
  if (s->open == 0) Py_RETURN_NONE;
  // This thread's innermost entry of the object; inside an asyncio task, the entry this task
  // opened (tasks of one thread interleave: the innermost entry may be another task's), found
  // by the node its context holds now.
  unsigned long me = PyThread_get_thread_ident();
  Py_ssize_t at = s->open - 1;
  while (at >= 0 && entry_at(s, at).thread != me)
    --at;
  if (at < 0) Py_RETURN_NONE;  // entered here while dormant: nothing was opened
  if (entry_at(s, at).node) {
    PyObject* current = nullptr;
    if (PyContextVar_Get(g_task_spans, nullptr, &current) < 0) {
      PyErr_Clear();
      current = nullptr;
    }
    for (Py_ssize_t i = at; current && i >= 0; --i) {
      const Entry& candidate = entry_at(s, i);
      if (candidate.thread == me && candidate.node == current) {
        at = i;
        break;
      }
    }
    Py_XDECREF(current);
  }
  Entry e = entry_at(s, at);
  for (Py_ssize_t i = at; i + 1 < s->open; ++i)
    entry_at(s, i) = entry_at(s, i + 1);
  --s->open;
  if (s->open > 0) s->more->pop_back();
  if (e.state) mainboard::detail::span_exit(e.state);
  if (e.token) {
    // Another context than the one entered (a span handed between tasks): nothing to restore.
    if (PyContextVar_Reset(g_task_spans, e.token) < 0) PyErr_Clear();
    Py_DECREF(e.token);
  }
  Py_XDECREF(e.track);
  Py_XDECREF(e.node);
  Py_RETURN_NONE;
}

PyMethodDef span_methods[] = {
    {"__enter__", span_enter, METH_NOARGS, nullptr},
    {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(span_exit)),
     METH_FASTCALL, nullptr},
    {nullptr, nullptr, 0, nullptr}};

PyObject* span_repr(PyObject* self) {
  auto* s = reinterpret_cast<Span*>(self);
  return PyUnicode_FromFormat("span(%R)", s->name);
}

PyTypeObject SpanType = {PyVarObject_HEAD_INIT(nullptr, 0)};

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

PyObject* span_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  return decorate_with(reinterpret_cast<Span*>(self)->name, args, kwargs);
}
void span_dealloc(PyObject* self) {
  auto* s = reinterpret_cast<Span*>(self);
  for (Py_ssize_t i = 0; i < s->open; ++i) {  // left open (never exited): let the track go
    Py_XDECREF(entry_at(s, i).track);
    Py_XDECREF(entry_at(s, i).token);
    Py_XDECREF(entry_at(s, i).node);
  }
  delete s->more;
  Py_XDECREF(s->name);
  PyObject_Free(self);
}

/// The span object for `name`: the shared one for a name seen before (a new reference).
PyObject* span_object(PyObject* name) {
  PyObject* known = PyDict_GetItemWithError(g_span_by_name, name);  // borrowed
  if (known) return Py_NewRef(known);
  if (PyErr_Occurred()) return nullptr;
  auto* s = PyObject_New(Span, &SpanType);
  if (!s) return nullptr;
  s->name = Py_NewRef(name);
  s->interned = nullptr;
  s->open = 0;
  s->first = Entry{0, nullptr, nullptr, nullptr, nullptr};
  s->more = nullptr;
  auto* obj = reinterpret_cast<PyObject*>(s);
  if (PyDict_Size(g_span_by_name) < kMaxSharedNames &&
      PyDict_SetItem(g_span_by_name, name, obj) < 0) {
    Py_DECREF(obj);
    return nullptr;
  }
  return obj;
}

PyObject* span(PyObject*, PyObject* arg) {
  if (PyUnicode_CheckExact(arg)) return span_object(arg);
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
     "span(name, /)\n--\n\n"
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
  g_span_by_name = PyDict_New();
  if (!g_span_by_name) return false;
  g_task_spans = PyContextVar_New("mainboard_task_spans", nullptr);
  if (!g_task_spans) return false;
  if (!g_names) return false;
  SpanType.tp_name = "mainboard._mainboard._Span";
  SpanType.tp_basicsize = sizeof(Span);
  SpanType.tp_flags = Py_TPFLAGS_DEFAULT;
  SpanType.tp_methods = span_methods;
  SpanType.tp_doc =
      "A named span: open between __enter__ and __exit__ while a Profiler is active (entering it\n"
      "with none active does nothing); called on a function, that function in the span.";
  SpanType.tp_call = span_call;
  SpanType.tp_dealloc = span_dealloc;
  SpanType.tp_repr = span_repr;
  if (PyType_Ready(&SpanType) < 0) return false;
  Py_INCREF(&SpanType);
  if (PyModule_AddObject(module, "_Span", reinterpret_cast<PyObject*>(&SpanType)) < 0) {
    Py_DECREF(&SpanType);
    return false;
  }
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
