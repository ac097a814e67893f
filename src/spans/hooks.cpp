// The hooks GCC and Clang call at every function entry and exit of code compiled with
// -finstrument-functions. Link this library (mainboard::instrument) into such a program; the
// functions of the modules named in Profiler::auto_instrument then show up as spans.
#include "spans/instrument.hpp"

extern "C" {

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void* fn,
                                                                      void* /*call_site*/) {
  mainboard::detail::instrumented_enter(fn);
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void* fn,
                                                                     void* /*call_site*/) {
  mainboard::detail::instrumented_exit(fn);
}

}  // extern "C"
