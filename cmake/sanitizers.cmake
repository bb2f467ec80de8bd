# The sanitizer build (CMakePresets.json "asan", scripts/run_tests.sh): MINFER_SANITIZE
# lists -fsanitize= checks for every target; MINFER_FUZZ adds libFuzzer's coverage
# instrumentation and the harnesses of tests/fuzz (clang only).
set(MINFER_SANITIZE "" CACHE STRING "Sanitizers for every target, e.g. address,undefined")
option(MINFER_FUZZ "Build the libFuzzer harnesses of tests/fuzz (clang)" OFF)
if(MINFER_SANITIZE)
  # Every finding stops the program: a test that triggers one fails.
  add_compile_options(-fsanitize=${MINFER_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${MINFER_SANITIZE})
endif()
if(MINFER_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "MINFER_FUZZ needs clang (libFuzzer)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
