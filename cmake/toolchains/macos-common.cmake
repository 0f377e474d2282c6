# Shared by macos-arm64.cmake and macos-x86_64.cmake (which set
# IREEPKG_ZIG_TARGET first).
#
# Why zig: macOS builds need Darwin's C headers and a libSystem to link
# against, which no Debian package has (clang-22 and ld64.lld-22 compile
# and link Mach-O, but hand-written stubs of <stdio.h>, <sys/stat.h> and
# libSystem would have to match Apple's struct layouts exactly and would
# check nothing real). `zig cc` (the `ziglang` wheel from PyPI, pinned in
# scripts/cross-requirements.txt) is clang with Darwin's libc headers and
# .tbd stubs of libSystem, and links Mach-O itself. Here the results are
# compiled and linked only: there is no macOS machine to run them on.
set(CMAKE_SYSTEM_NAME Darwin)
set(_zig ${CMAKE_CURRENT_LIST_DIR}/zig)
set(CMAKE_C_COMPILER ${_zig}/cc)
set(CMAKE_AR ${_zig}/ar)
set(CMAKE_RANLIB ${_zig}/ranlib)
set(CMAKE_C_FLAGS_INIT "-target ${IREEPKG_ZIG_TARGET}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-target ${IREEPKG_ZIG_TARGET}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-target ${IREEPKG_ZIG_TARGET}")
# No Xcode: no SDK to look for, no deployment target flag from CMake.
set(CMAKE_OSX_SYSROOT "" CACHE PATH "" FORCE)
set(CMAKE_OSX_DEPLOYMENT_TARGET "" CACHE STRING "" FORCE)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
