#pragma once

#include <Python.h>

namespace mainboard::python {

/// Adds span(), _set_decorator() and _profiling() to the extension module.
bool add_span_functions(PyObject* module);

}  // namespace mainboard::python
