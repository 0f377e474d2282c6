# Installs the "runtime" component of a build into a scratch prefix, then
# builds and runs a consumer of the installed library:
#   MODE=cmake:     a CMake project using find_package(ireepkg) and the
#                   targets ireepkg::runtime and ireepkg::runtime_static;
#   MODE=pkgconfig: cc main.c $(pkg-config --cflags --libs ireepkg_runtime).
# Variables: MODE BUILD_DIR WORK CONSUMER LIBDIR GENERATOR C_COMPILER.
foreach(var MODE BUILD_DIR WORK CONSUMER LIBDIR GENERATOR C_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "${var} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)
execute_process(
  COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --component runtime
          --prefix ${prefix}
  COMMAND_ERROR_IS_FATAL ANY)
foreach(f include/ireepkg/runtime.h ${LIBDIR}/libireepkg_runtime.so.0
          ${LIBDIR}/libireepkg_runtime.so ${LIBDIR}/libireepkg_runtime.a
          ${LIBDIR}/pkgconfig/ireepkg_runtime.pc
          ${LIBDIR}/cmake/ireepkg/ireepkgConfig.cmake
          ${LIBDIR}/cmake/ireepkg/ireepkgConfigVersion.cmake)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
# Only the runtime component: not the ireepkg tool.
if(EXISTS ${prefix}/bin/ireepkg)
  message(FATAL_ERROR "the runtime component installed bin/ireepkg")
endif()

if(MODE STREQUAL "cmake")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S ${CONSUMER} -B ${WORK}/build -G ${GENERATOR}
            -DCMAKE_C_COMPILER=${C_COMPILER}
            -DCMAKE_PREFIX_PATH=${prefix}
    COMMAND_ERROR_IS_FATAL ANY)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build
                  COMMAND_ERROR_IS_FATAL ANY)
  set(programs ${WORK}/build/consumer ${WORK}/build/consumer_static)
elseif(MODE STREQUAL "pkgconfig")
  find_program(PKG_CONFIG pkg-config REQUIRED)
  set(ENV{PKG_CONFIG_PATH} ${prefix}/${LIBDIR}/pkgconfig)
  execute_process(
    COMMAND sh -c "${C_COMPILER} -std=c99 -Wall -Werror -pedantic-errors \
${CONSUMER}/main.c -o ${WORK}/consumer_pc \
$(${PKG_CONFIG} --cflags --libs ireepkg_runtime) \
-Wl,-rpath,$(${PKG_CONFIG} --variable=libdir ireepkg_runtime)"
    COMMAND_ERROR_IS_FATAL ANY)
  execute_process(COMMAND ${PKG_CONFIG} --modversion ireepkg_runtime
                  OUTPUT_VARIABLE version OUTPUT_STRIP_TRAILING_WHITESPACE
                  COMMAND_ERROR_IS_FATAL ANY)
  message(STATUS "pkg-config: ireepkg_runtime ${version}")
  set(programs ${WORK}/consumer_pc)
else()
  message(FATAL_ERROR "unknown MODE ${MODE}")
endif()

foreach(program ${programs})
  execute_process(COMMAND ${program} ${WORK}/no-such-prefix
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${program} failed (${rc}):\n${out}${err}")
  endif()
  message(STATUS "${program}: ${out}")
endforeach()
