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
#else
#include "frameobject.h"
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
       code_linetable = -1, frame_previous, frame_code;
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
#else
  long threads_head = offsetof(PyInterpreterState, threads.head);
  native_tid = offsetof(PyThreadState, native_thread_id);
  frame_kind = 1;
  frame_previous = offsetof(struct _PyInterpreterFrame, previous);
  code_qualname = offsetof(PyCodeObject, co_qualname);
  code_adaptive = offsetof(PyCodeObject, co_code_adaptive);
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

  printf("{0x%02x%02x, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld,"
         " %d, %ld, %ld, %ld, %ld, %ld, %ld, %d, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld,"
         " %ld, %ld, %ld, 0x%lx, 0x%lx, 0x%lx},\n",
         PY_MAJOR_VERSION, PY_MINOR_VERSION,
         (long)offsetof(_PyRuntimeState, interpreters.head), runtime_gil,
         (long)offsetof(PyInterpreterState, next), threads_head, interp_gil,
         (long)offsetof(struct _gil_runtime_state, last_holder),
         (long)offsetof(struct _gil_runtime_state, locked),
         (long)offsetof(PyThreadState, next), (long)offsetof(PyThreadState, interp), tstate_frame,
         tstate_cframe, cframe_frame, (long)offsetof(PyThreadState, thread_id), native_tid,
         (long)sizeof(void*),
         frame_kind, frame_previous, frame_code, frame_lasti, frame_instr, frame_is_entry,
         frame_owner, instr_is_next,
         (long)offsetof(PyCodeObject, co_filename), (long)offsetof(PyCodeObject, co_name),
         code_qualname, (long)offsetof(PyCodeObject, co_firstlineno), code_linetable,
         code_adaptive,
         (long)offsetof(PyObject, ob_type), (long)offsetof(PyVarObject, ob_size),
         (long)offsetof(PyBytesObject, ob_sval),
         (long)offsetof(PyASCIIObject, length), (long)sizeof(PyASCIIObject),
         (long)sizeof(PyCompactUnicodeObject), kind_off, kind_mask, ascii_mask, compact_mask);
  return 0;
}
