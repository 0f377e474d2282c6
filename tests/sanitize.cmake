# The tests of a sanitizer build (-DIREEPKG_SANITIZE=..., docs/reliability.md),
# included by tests/CMakeLists.txt.
#
# `ctest -L sanitize` runs the unit tests, the C tests of libireepkg_runtime
# and the pytest files of tests/cli/ and tests/e2e/ below (each once, as the
# user running ctest) against
# the instrumented ireepkg, ireepkg-inspect, ireepkg-mlir-check,
# ireepkg-plugin-probe and HTTP module. Left out, and why:
#  - the *_unprivileged repetitions: the same code paths as another user;
#  - files that load instrumented code into an uninstrumented process
#    (Python's ctypes, IREE's tools), which the sanitizer runtime refuses, or
#    that test other programs than ireepkg's (IREE, MLIR, the examples):
#    see IREEPKG_SANITIZE_SKIP below.
#
# A sanitizer report in any process, including the children that tests only
# check the exit status of, is written to ${IREEPKG_SANITIZER_LOGS}/ (the
# runtime's log_path); the test sanitizer_logs_check runs after all the
# others and fails, printing them, if there is any.

set(IREEPKG_SANITIZER_LOGS ${CMAKE_BINARY_DIR}/sanitizer-logs)
set(IREEPKG_SANITIZE_SKIP
  # iree-run-module / iree-compile run the example plugins; the examples
  # are built without sanitizers (they are IREE's and MLIR's plugins).
  cli_example_plugins cli_hermetic_dispatch cli_runtime_e2e cli_compiler_e2e
  cli_mlir_plugins
  # load libIREECompiler.so / the IREE Python runtime in-process, or the
  # instrumented libireepkg_runtime.so into Python (ctypes); relocation
  # does the latter and runs iree-run-module with the example plugins.
  cli_compiler_embedding cli_environment cli_runtime_library cli_relocation
  # a wheel of this build and the IREE Python packages in a new virtual
  # environment (the runtime library through ctypes); plugin projects
  # built with CMake and run by IREE's and MLIR's tools.
  cli_python_package cli_authoring
  # a program linking the instrumented libireepkg_runtime run under
  # qemu-x86_64 with older CPU models: the sanitizers' shadow memory does
  # not map under qemu-user, which kills it.
  cli_cpu_level)

set(_sanitize_env
  "ASAN_OPTIONS=log_path=${IREEPKG_SANITIZER_LOGS}/asan:detect_leaks=1:abort_on_error=0"
  "UBSAN_OPTIONS=log_path=${IREEPKG_SANITIZER_LOGS}/ubsan:print_stacktrace=1:halt_on_error=1")

add_test(NAME sanitizer_logs_clear
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${IREEPKG_SANITIZER_LOGS})
add_test(NAME sanitizer_logs_check
  COMMAND ${CMAKE_COMMAND} -DLOGS=${IREEPKG_SANITIZER_LOGS}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/check_sanitizer_logs.cmake)
set_tests_properties(sanitizer_logs_clear PROPERTIES
  LABELS sanitize FIXTURES_SETUP sanitizer_logs)
set_tests_properties(sanitizer_logs_check PROPERTIES
  LABELS sanitize FIXTURES_CLEANUP sanitizer_logs)

set(_sanitize_tests unit)
foreach(test_file ${IREEPKG_PYTEST_FILES})
  get_filename_component(test_name ${test_file} NAME_WE)
  string(REGEX REPLACE "^test_" "cli_" test_name ${test_name})
  if(NOT test_name IN_LIST IREEPKG_SANITIZE_SKIP)
    list(APPEND _sanitize_tests ${test_name})
  endif()
endforeach()
foreach(test_name ${_sanitize_tests})
  set_property(TEST ${test_name} APPEND PROPERTY ENVIRONMENT ${_sanitize_env})
  set_property(TEST ${test_name} APPEND PROPERTY LABELS sanitize)
  set_property(TEST ${test_name} APPEND PROPERTY FIXTURES_REQUIRED
               sanitizer_logs)
endforeach()

# The canaries: a heap overflow and a signed overflow, each of which the
# build's instrumentation must stop with a report.
add_executable(ireepkg_sanitize_canary sanitize_canary.cpp)
if(IREEPKG_SANITIZE MATCHES "address")
  add_test(NAME sanitizer_canary_address
    COMMAND ireepkg_sanitize_canary address)
  set_tests_properties(sanitizer_canary_address PROPERTIES LABELS sanitize
    PASS_REGULAR_EXPRESSION "ERROR: AddressSanitizer: heap-buffer-overflow")
endif()
if(IREEPKG_SANITIZE MATCHES "undefined")
  add_test(NAME sanitizer_canary_undefined
    COMMAND ireepkg_sanitize_canary undefined)
  set_tests_properties(sanitizer_canary_undefined PROPERTIES LABELS sanitize
    PASS_REGULAR_EXPRESSION "runtime error: signed integer overflow")
endif()
