# linux-aarch64: clang-22 and lld-22 with Debian's libc6-dev-arm64-cross
# (the aarch64 glibc in /usr/aarch64-linux-gnu). Debian has no GCC for
# aarch64 installed beside it, so there is no crtbegin.o or libgcc: link
# with glibc's own start files and libc alone, and keep atomics inline
# (-mno-outline-atomics; the outlined ones live in libgcc). Enough for C
# code that needs only the C library, as libireepkg_runtime does.
#   cmake -S runtime_integration -B build-a64 \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/linux-aarch64.cmake
# Run the results with `qemu-aarch64 -L /usr/aarch64-linux-gnu`.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER clang-22)
set(CMAKE_C_COMPILER_TARGET aarch64-linux-gnu)
set(_libc /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH ${_libc})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_C_FLAGS_INIT "-isystem ${_libc}/include -mno-outline-atomics")
set(_link "-fuse-ld=lld -nostartfiles -nodefaultlibs -L${_libc}/lib")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${_link} ${_libc}/lib/Scrt1.o ${_libc}/lib/crti.o")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${_link} ${_libc}/lib/crti.o")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "${_link} ${_libc}/lib/crti.o")
set(CMAKE_C_STANDARD_LIBRARIES "-lc ${_libc}/lib/crtn.o")
set(CMAKE_AR llvm-ar-22)
set(CMAKE_RANLIB llvm-ranlib-22)
set(CMAKE_NM llvm-nm-22)
set(CMAKE_READELF llvm-readelf-22)
