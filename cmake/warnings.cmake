# Our own code builds with these; third-party headers come in as SYSTEM includes.
function(mainboard_warnings target)
  # GCC 12 reports false -Warray-bounds (at -O2) and -Wrestrict (at -O3, a Release build) errors
  # inside libstdc++'s std::string concatenation (GCC bugs 105651, 105329); the warnings stay on
  # for other compilers and versions.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
     AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-array-bounds -Wno-stringop-overflow
                           -Wno-stringop-overread -Wno-restrict)
  endif()
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wshadow -Wnon-virtual-dtor
                         -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wformat=2
                         # Aggregates with default member initializers are meant to be
                         # partially initialised.
                         -Wno-missing-field-initializers)
endfunction()

# Sanitizer instrumentation makes GCC 12 report false "maybe uninitialized" warnings inside
# libstdc++ (<regex>, <functional>); the release build keeps the warning.
if(MAINBOARD_SANITIZE)
  add_compile_options(-Wno-maybe-uninitialized)
endif()
