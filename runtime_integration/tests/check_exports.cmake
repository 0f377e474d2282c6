# Checks libireepkg_runtime.so: its SONAME is libireepkg_runtime.so.0, it
# exports the C API and nothing else (no C++ symbols), and it needs neither
# the C++ runtime nor LLVM.
#   cmake -DLIBRARY=<.so> -DNM=<nm> -DREADELF=<readelf> -P check_exports.cmake
foreach(var LIBRARY NM READELF)
  if(NOT ${var})
    message(FATAL_ERROR "${var} is not set")
  endif()
endforeach()

execute_process(COMMAND ${READELF} -d ${LIBRARY}
                OUTPUT_VARIABLE dynamic COMMAND_ERROR_IS_FATAL ANY)
if(NOT dynamic MATCHES "\\(SONAME\\)[^\n]*\\[libireepkg_runtime\\.so\\.0\\]")
  message(FATAL_ERROR "SONAME is not libireepkg_runtime.so.0:\n${dynamic}")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" needed "${dynamic}")
foreach(line ${needed})
  if(line MATCHES "stdc\\+\\+|c\\+\\+|LLVM|MLIR|curl|gcc_s")
    message(FATAL_ERROR "libireepkg_runtime needs ${line}")
  endif()
endforeach()

execute_process(COMMAND ${NM} -D --defined-only ${LIBRARY}
                OUTPUT_VARIABLE symbols COMMAND_ERROR_IS_FATAL ANY)
string(REPLACE "\n" ";" lines "${symbols}")
set(count 0)
foreach(line ${lines})
  if(line STREQUAL "")
    continue()
  endif()
  string(REGEX REPLACE "^.* " "" name "${line}")
  if(NOT name MATCHES "^ireepkg_runtime_[a-z0-9_]+$")
    message(FATAL_ERROR "libireepkg_runtime exports ${name}")
  endif()
  math(EXPR count "${count} + 1")
endforeach()
foreach(required ireepkg_runtime_version ireepkg_runtime_open
                 ireepkg_runtime_list_plugins ireepkg_runtime_locate_prefix
                 ireepkg_runtime_format_flags ireepkg_runtime_free_error)
  if(NOT symbols MATCHES " ${required}\n")
    message(FATAL_ERROR "libireepkg_runtime does not export ${required}")
  endif()
endforeach()
# ireepkg's own writer of its prefixes' runtime.flags is no part of the API
# (src/prefix_flagfile.h).
if(symbols MATCHES " ireepkg_runtime_flagfile_of_index\n")
  message(FATAL_ERROR "libireepkg_runtime exports "
                      "ireepkg_runtime_flagfile_of_index, which is not API")
endif()
message(STATUS "libireepkg_runtime.so.0 exports ${count} ireepkg_runtime_* "
               "functions and nothing else")
