# Our own code builds with these; third-party headers come in as SYSTEM includes.
function(mainboard_warnings target)
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
