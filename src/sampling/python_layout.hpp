#pragma once

// CPython's structures as byte offsets, one table row per minor version (python_layouts.inc),
// shared by the frame reader (python_reader.cpp) and the object reader (python_objects.cpp).

#include <cstddef>

namespace mainboard::sampling {

/// Byte offsets into CPython's structures for one minor version (-1: the field does not exist
/// in that version). The table (python_layouts.inc) names each field (designated initialisers).
struct PythonLayout {
  long version;  // 0x030b for 3.11
  long runtime_interpreters_head, runtime_gil;
  long interp_next, interp_threads_head, interp_gil;
  long gil_last_holder, gil_locked;
  long tstate_next, tstate_interp, tstate_frame, tstate_cframe, cframe_current_frame,
      tstate_thread_id, tstate_native_thread_id;
  // 3.11 on: the chunk of the thread's frame stack in use, its top and its end (frames in that
  // chunk at or above the top have returned).
  long tstate_datastack_chunk, tstate_datastack_top, tstate_datastack_limit;
  long pointer_size;
  long frame_kind;  // 0: PyFrameObject (3.9, 3.10); 1: _PyInterpreterFrame
  long frame_previous, frame_code, frame_lasti, frame_instr, frame_is_entry, frame_owner;
  long instr_is_next;  // 3.13's instr_ptr is the instruction running, 3.11's prev_instr the one
                       // before
  // 3.9, 3.10: f_executing / f_state, and its value while the frame runs (or calls); 3.11 on:
  // frame_obj, made on demand (a frame's only field that changes while it waits for a callee).
  long frame_state, frame_state_running, frame_object;
  long code_filename, code_name, code_qualname, code_firstlineno, code_linetable, code_adaptive;
  // Local variables' names: co_varnames, co_cellvars, co_freevars (3.9, 3.10) or
  // co_localsplusnames with co_localspluskinds (3.11 on; the others -1).
  long code_argcount, code_kwonlyargcount, code_flags, code_nlocals, code_varnames, code_cellvars,
      code_freevars, code_localspluskinds, code_nlocalsplus;
  long object_type, varobject_size, bytes_data;
  long unicode_length, ascii_size, compact_size, unicode_state;
  unsigned long kind_mask, ascii_mask, compact_mask;
  // Objects: modules, types, dictionaries (combined and split), sets, weak references, ints.
  long interp_modules, module_dict;
  long type_name, type_basicsize, type_flags, type_dictoffset, type_base;
  long flag_managed_dict, flag_inline_values;  // Py_TPFLAGS_* (0: not in that version)
  long heaptype_cached_keys;
  long dict_keys, dict_values, values_array, values_valid;
  // 3.9, 3.10: keys_size is dk_size (a Py_ssize_t); 3.11 on dk_log2_size (a byte), with the
  // index width and the kind of entries in bytes of their own.
  long keys_size, keys_index_bytes, keys_kind, keys_nentries, keys_indices;
  long set_mask, set_table, set_entry_size;
  long weakref_object;
  long long_tagged, long_size, long_digits;  // 3.12 on: lv_tag, else a signed ob_size
  // Coroutines (3.11 on): the frame inside the object, its state, its value stack.
  long gen_frame, gen_frame_state, frame_stacktop, frame_localsplus;
  long state_awaiting, state_executing;
  long list_items, tuple_items, float_value, cell_ref;
  long task_coro, task_name, task_waiter;  // asyncio's C Task (3.11 on; -1: not known)
};

/// How much of a code object to read to name it: up to the last field used, the one after it.
inline std::size_t code_header_size(const PythonLayout& L) {
  long last = L.object_type;
  for (long f :
       {L.code_filename, L.code_name, L.code_qualname, L.code_firstlineno, L.code_linetable})
    last = f > last ? f : last;
  return static_cast<std::size_t>(last) + 8;
}

/// The row of version 0x030b (3.11) and so on; nullptr for a version not in the table.
const PythonLayout* layout_for(long version);

}  // namespace mainboard::sampling
