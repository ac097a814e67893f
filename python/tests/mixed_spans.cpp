// A C++ extension of the kind a user writes (a kernel wrapper, a data loader): it links only
// mainboard::spans and marks its work with MAINBOARD_SPAN. Its spans and the Python spans around
// and inside it are one session's and nest.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>

#include <mainboard/span.hpp>

PYBIND11_MODULE(mixed_spans, m) {
  m.def("work", [](const std::function<void()>& callback) {
    MAINBOARD_SPAN("cpp_outer");
    callback();  // Python again, inside the C++ span
    {
      MAINBOARD_SPAN("cpp_inner");
    }
  });
}
