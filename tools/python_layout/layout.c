/* Prints the layout of one CPython version's interpreter structures, as the compiler sees them in
 * that version's own headers (internal ones included), as one line of the table in
 * src/sampling/python_layouts.inc. Built and run by tools/python_layout/generate.sh for each
 * interpreter whose headers are present; a test compares its output with the checked-in table. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_pystate.h"
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#include "internal/pycore_dict.h"
#include "internal/pycore_moduleobject.h"
#else
#include "frameobject.h"
#include "longintrepr.h"
/* Before 3.11 these two live in .c files, not in any installed header: copied from
 * Objects/dict-common.h and Objects/moduleobject.c of 3.9 and 3.10 (the same in both). */
typedef struct {
  Py_ssize_t dk_refcnt;
  Py_ssize_t dk_size;
  void* dk_lookup;
  Py_ssize_t dk_usable;
  Py_ssize_t dk_nentries;
  char dk_indices[];
} DictKeys39;
typedef struct {
  PyObject_HEAD
  PyObject* md_dict;
} Module39;
#endif

/* asyncio's C Task keeps its fields in Modules/_asynciomodule.c, in no header: the interpreter
 * itself finds them (tools/python_layout/asyncio_layout.py) and generate.sh passes them here. */
#ifndef TASK_CORO
#define TASK_CORO -1
#define TASK_NAME -1
#define TASK_WAITER -1
#endif

/* The byte offset and mask of a bit-field, found by setting it in a zeroed object. */
#define FIELD_BITS(type, setter, out_offset, out_mask)                                   \
  do {                                                                                   \
    type probe_;                                                                         \
    memset(&probe_, 0, sizeof probe_);                                                   \
    setter;                                                                              \
    const unsigned char* b_ = (const unsigned char*)&probe_;                             \
    out_offset = -1;                                                                     \
    out_mask = 0;                                                                        \
    for (size_t i_ = 0; i_ < sizeof probe_; ++i_)                                        \
      if (b_[i_]) {                                                                      \
        if (out_offset < 0) out_offset = (long)i_;                                       \
        if ((long)i_ - out_offset < 8) out_mask |= (unsigned long)b_[i_] << 8 * (i_ - out_offset); \
      }                                                                                  \
  } while (0)

/* The table's lines per CPython structure: "    // NAME", then ".field = value," pairs wrapped
 * at 100 columns. */
static int column;
static void group(const char* name) {
  printf("\n    // %s\n   ", name);
  column = 3;
}
static void put(const char* text) {
  int length = (int)strlen(text);
  if (column + length > 100) {
    printf("\n   ");
    column = 3;
  }
  printf("%s", text);
  column += length;
}
static void field(const char* name, long value) {
  char text[128];
  snprintf(text, sizeof text, " .%s = %ld,", name, value);
  put(text);
}
static void flag(const char* name, long value) {
  char text[128];
  snprintf(text, sizeof text, " .%s = 0x%lx,", name, value);
  put(text);
}

int main(void) {
  long kind_off, ascii_off, compact_off;
  unsigned long kind_mask, ascii_mask, compact_mask;
  FIELD_BITS(PyASCIIObject, probe_.state.kind = 7, kind_off, kind_mask);
  FIELD_BITS(PyASCIIObject, probe_.state.ascii = 1, ascii_off, ascii_mask);
  FIELD_BITS(PyASCIIObject, probe_.state.compact = 1, compact_off, compact_mask);
  if (kind_off != ascii_off || kind_off != compact_off) return 1;

  long runtime_gil = -1, interp_gil = -1, tstate_frame = -1, tstate_cframe = -1,
       cframe_frame = -1, native_tid = -1, frame_lasti = -1, frame_instr = -1,
       frame_is_entry = -1, frame_owner = -1, code_qualname = -1, code_adaptive = -1,
       code_linetable = -1, frame_previous, frame_code, frame_state = -1, frame_state_running = 0,
       frame_object = -1, code_varnames, code_cellvars = -1, code_freevars = -1,
       code_localspluskinds = -1, code_nlocalsplus = -1, datastack_chunk = -1, datastack_top = -1,
       datastack_limit = -1;
  int frame_kind = 0, instr_is_next = 0;
#if PY_VERSION_HEX < 0x030C0000
  runtime_gil = offsetof(_PyRuntimeState, ceval.gil);
#else
  interp_gil = offsetof(PyInterpreterState, ceval.gil);
#endif
#if PY_VERSION_HEX < 0x030B0000
  long threads_head = offsetof(PyInterpreterState, tstate_head);
  tstate_frame = offsetof(PyThreadState, frame);
  frame_previous = offsetof(PyFrameObject, f_back);
  frame_code = offsetof(PyFrameObject, f_code);
  frame_lasti = offsetof(PyFrameObject, f_lasti);
  code_varnames = offsetof(PyCodeObject, co_varnames);
  code_cellvars = offsetof(PyCodeObject, co_cellvars);
  code_freevars = offsetof(PyCodeObject, co_freevars);
#if PY_VERSION_HEX < 0x030A0000
  frame_state = offsetof(PyFrameObject, f_executing);
  frame_state_running = 1;
#else
  frame_state = offsetof(PyFrameObject, f_state);
  frame_state_running = FRAME_EXECUTING;
#endif
#else
  long threads_head = offsetof(PyInterpreterState, threads.head);
  native_tid = offsetof(PyThreadState, native_thread_id);
  frame_kind = 1;
  frame_previous = offsetof(struct _PyInterpreterFrame, previous);
  code_qualname = offsetof(PyCodeObject, co_qualname);
  code_adaptive = offsetof(PyCodeObject, co_code_adaptive);
  frame_object = offsetof(struct _PyInterpreterFrame, frame_obj);
  datastack_chunk = offsetof(PyThreadState, datastack_chunk);
  datastack_top = offsetof(PyThreadState, datastack_top);
  datastack_limit = offsetof(PyThreadState, datastack_limit);
  code_varnames = offsetof(PyCodeObject, co_localsplusnames);
  code_localspluskinds = offsetof(PyCodeObject, co_localspluskinds);
  code_nlocalsplus = offsetof(PyCodeObject, co_nlocalsplus);
#if PY_VERSION_HEX < 0x030D0000
  tstate_cframe = offsetof(PyThreadState, cframe);
  cframe_frame = offsetof(_PyCFrame, current_frame);
  frame_code = offsetof(struct _PyInterpreterFrame, f_code);
  frame_instr = offsetof(struct _PyInterpreterFrame, prev_instr);
#else
  tstate_frame = offsetof(PyThreadState, current_frame);
  frame_code = offsetof(struct _PyInterpreterFrame, f_executable);
  frame_instr = offsetof(struct _PyInterpreterFrame, instr_ptr);
  instr_is_next = 1;
#endif
#if PY_VERSION_HEX < 0x030C0000
  frame_is_entry = offsetof(struct _PyInterpreterFrame, is_entry);
#else
  frame_owner = offsetof(struct _PyInterpreterFrame, owner);
#endif
#endif
#if PY_VERSION_HEX < 0x030A0000
  code_linetable = offsetof(PyCodeObject, co_lnotab);
#else
  code_linetable = offsetof(PyCodeObject, co_linetable);
#endif

  /* Objects: dictionaries (modules, instances), sets, weak references, integers, coroutines. */
  long interp_modules, module_dict, dict_values_array = 0, values_valid = -1, keys_size, keys_index_bytes = -1,
       keys_kind = -1, keys_nentries, keys_indices, long_tagged = 0, long_size, long_digits,
       gen_frame = -1, gen_frame_state = -1, frame_stacktop = -1, frame_localsplus = -1,
       state_awaiting = 0, state_executing = 0, flag_managed_dict = 0, flag_inline_values = 0;
#if PY_VERSION_HEX < 0x030C0000
  interp_modules = offsetof(PyInterpreterState, modules);
#else
  interp_modules = offsetof(PyInterpreterState, imports.modules);
#endif
#if PY_VERSION_HEX < 0x030B0000
  module_dict = offsetof(Module39, md_dict);
  keys_size = offsetof(DictKeys39, dk_size);
  keys_nentries = offsetof(DictKeys39, dk_nentries);
  keys_indices = offsetof(DictKeys39, dk_indices);
  frame_localsplus = offsetof(PyFrameObject, f_localsplus);
#else
  module_dict = offsetof(PyModuleObject, md_dict);
  dict_values_array = offsetof(PyDictValues, values);
#if PY_VERSION_HEX >= 0x030D0000
  values_valid = offsetof(PyDictValues, valid);
#endif
  keys_size = offsetof(PyDictKeysObject, dk_log2_size);
  keys_index_bytes = offsetof(PyDictKeysObject, dk_log2_index_bytes);
  keys_kind = offsetof(PyDictKeysObject, dk_kind);
  keys_nentries = offsetof(PyDictKeysObject, dk_nentries);
  keys_indices = offsetof(PyDictKeysObject, dk_indices);
  gen_frame = offsetof(PyGenObject, gi_iframe);
  gen_frame_state = offsetof(PyGenObject, gi_frame_state);
  frame_stacktop = offsetof(struct _PyInterpreterFrame, stacktop);
  frame_localsplus = offsetof(struct _PyInterpreterFrame, localsplus);
  state_executing = FRAME_EXECUTING;
#if PY_VERSION_HEX < 0x030D0000
  state_awaiting = FRAME_SUSPENDED;
#else
  state_awaiting = FRAME_SUSPENDED_YIELD_FROM;
#endif
#endif
#if PY_VERSION_HEX < 0x030C0000
  long_size = offsetof(PyVarObject, ob_size);
  long_digits = offsetof(PyLongObject, ob_digit);
#else
  long_tagged = 1;
  long_size = offsetof(PyLongObject, long_value.lv_tag);
  long_digits = offsetof(PyLongObject, long_value.ob_digit);
#endif
#ifdef Py_TPFLAGS_MANAGED_DICT
  flag_managed_dict = Py_TPFLAGS_MANAGED_DICT;
#endif
#ifdef Py_TPFLAGS_INLINE_VALUES
  flag_inline_values = Py_TPFLAGS_INLINE_VALUES;
#endif

  /* Designated initialisers in PythonLayout's order, a line per CPython structure, so that a
     diff of the table names the field that moved. */
  printf("{  // %d.%d\n    .version = 0x%02x%02x,", PY_MAJOR_VERSION, PY_MINOR_VERSION,
         PY_MAJOR_VERSION, PY_MINOR_VERSION);
  group("_PyRuntimeState");
  field("runtime_interpreters_head", (long)offsetof(_PyRuntimeState, interpreters.head));
  field("runtime_gil", runtime_gil);
  group("PyInterpreterState");
  field("interp_next", (long)offsetof(PyInterpreterState, next));
  field("interp_threads_head", threads_head);
  field("interp_gil", interp_gil);
  group("struct _gil_runtime_state");
  field("gil_last_holder", (long)offsetof(struct _gil_runtime_state, last_holder));
  field("gil_locked", (long)offsetof(struct _gil_runtime_state, locked));
  group("PyThreadState (and 3.11's _PyCFrame)");
  field("tstate_next", (long)offsetof(PyThreadState, next));
  field("tstate_interp", (long)offsetof(PyThreadState, interp));
  field("tstate_frame", tstate_frame);
  field("tstate_cframe", tstate_cframe);
  field("cframe_current_frame", cframe_frame);
  field("tstate_thread_id", (long)offsetof(PyThreadState, thread_id));
  field("tstate_native_thread_id", native_tid);
  field("tstate_datastack_chunk", datastack_chunk);
  field("tstate_datastack_top", datastack_top);
  field("tstate_datastack_limit", datastack_limit);
  group("the platform");
  field("pointer_size", (long)sizeof(void*));
  group("frames: PyFrameObject (3.9, 3.10) or _PyInterpreterFrame");
  field("frame_kind", frame_kind);
  field("frame_previous", frame_previous);
  field("frame_code", frame_code);
  field("frame_lasti", frame_lasti);
  field("frame_instr", frame_instr);
  field("frame_is_entry", frame_is_entry);
  field("frame_owner", frame_owner);
  field("instr_is_next", instr_is_next);
  field("frame_state", frame_state);
  field("frame_state_running", frame_state_running);
  field("frame_object", frame_object);
  group("PyCodeObject");
  field("code_filename", (long)offsetof(PyCodeObject, co_filename));
  field("code_name", (long)offsetof(PyCodeObject, co_name));
  field("code_qualname", code_qualname);
  field("code_firstlineno", (long)offsetof(PyCodeObject, co_firstlineno));
  field("code_linetable", code_linetable);
  field("code_adaptive", code_adaptive);
  field("code_argcount", (long)offsetof(PyCodeObject, co_argcount));
  field("code_kwonlyargcount", (long)offsetof(PyCodeObject, co_kwonlyargcount));
  field("code_flags", (long)offsetof(PyCodeObject, co_flags));
  field("code_nlocals", (long)offsetof(PyCodeObject, co_nlocals));
  field("code_varnames", code_varnames);
  field("code_cellvars", code_cellvars);
  field("code_freevars", code_freevars);
  field("code_localspluskinds", code_localspluskinds);
  field("code_nlocalsplus", code_nlocalsplus);
  group("PyObject, PyVarObject, PyBytesObject");
  field("object_type", (long)offsetof(PyObject, ob_type));
  field("varobject_size", (long)offsetof(PyVarObject, ob_size));
  field("bytes_data", (long)offsetof(PyBytesObject, ob_sval));
  group("PyASCIIObject, PyCompactUnicodeObject");
  field("unicode_length", (long)offsetof(PyASCIIObject, length));
  field("ascii_size", (long)sizeof(PyASCIIObject));
  field("compact_size", (long)sizeof(PyCompactUnicodeObject));
  field("unicode_state", kind_off);
  flag("kind_mask", kind_mask);
  flag("ascii_mask", ascii_mask);
  flag("compact_mask", compact_mask);
  group("modules");
  field("interp_modules", interp_modules);
  field("module_dict", module_dict);
  group("PyTypeObject, PyHeapTypeObject");
  field("type_name", (long)offsetof(PyTypeObject, tp_name));
  field("type_basicsize", (long)offsetof(PyTypeObject, tp_basicsize));
  field("type_flags", (long)offsetof(PyTypeObject, tp_flags));
  field("type_dictoffset", (long)offsetof(PyTypeObject, tp_dictoffset));
  field("type_base", (long)offsetof(PyTypeObject, tp_base));
  flag("flag_managed_dict", flag_managed_dict);
  flag("flag_inline_values", flag_inline_values);
  field("heaptype_cached_keys", (long)offsetof(PyHeapTypeObject, ht_cached_keys));
  group("PyDictObject, its values and keys");
  field("dict_keys", (long)offsetof(PyDictObject, ma_keys));
  field("dict_values", (long)offsetof(PyDictObject, ma_values));
  field("values_array", dict_values_array);
  field("values_valid", values_valid);
  field("keys_size", keys_size);
  field("keys_index_bytes", keys_index_bytes);
  field("keys_kind", keys_kind);
  field("keys_nentries", keys_nentries);
  field("keys_indices", keys_indices);
  group("PySetObject");
  field("set_mask", (long)offsetof(PySetObject, mask));
  field("set_table", (long)offsetof(PySetObject, table));
  field("set_entry_size", (long)sizeof(setentry));
  group("PyWeakReference");
  field("weakref_object", (long)offsetof(PyWeakReference, wr_object));
  group("PyLongObject");
  field("long_tagged", long_tagged);
  field("long_size", long_size);
  field("long_digits", long_digits);
  group("coroutines (3.11 on)");
  field("gen_frame", gen_frame);
  field("gen_frame_state", gen_frame_state);
  field("frame_stacktop", frame_stacktop);
  field("frame_localsplus", frame_localsplus);
  field("state_awaiting", state_awaiting);
  field("state_executing", state_executing);
  group("PyListObject, PyTupleObject, PyFloatObject, PyCellObject");
  field("list_items", (long)offsetof(PyListObject, ob_item));
  field("tuple_items", (long)offsetof(PyTupleObject, ob_item));
  field("float_value", (long)offsetof(PyFloatObject, ob_fval));
  field("cell_ref", (long)offsetof(PyCellObject, ob_ref));
  group("asyncio's C Task (found by the interpreter itself)");
  field("task_coro", TASK_CORO);
  field("task_name", TASK_NAME);
  field("task_waiter", TASK_WAITER);
  printf("\n},\n");
  return 0;
}
