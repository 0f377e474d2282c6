# macos-x86_64 (Intel Macs), macOS 13 and later, through zig cc: see
# macos-common.cmake for why. Compile-and-link checked only.
#   cmake -S runtime_integration -B build-mac \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/macos-x86_64.cmake
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(IREEPKG_ZIG_TARGET x86_64-macos.13.0)
include(${CMAKE_CURRENT_LIST_DIR}/macos-common.cmake)
