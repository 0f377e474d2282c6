# ireepkg's CMake package as the Python wheel installs it, in the virtual
# environment's lib/cmake/ireepkg/: find_package(ireepkg CONFIG) finds it
# with the environment's bin/ on PATH (CMake searches <dir>/.. of PATH
# entries), or with CMAKE_PREFIX_PATH=$VIRTUAL_ENV. Gives the plugin
# authoring helpers (ireepkgHelpers.cmake) with the environment's ireepkg,
# and the runtime library target ireepkg::runtime.
get_filename_component(_ireepkg_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.."
                       ABSOLUTE)
if(NOT IREEPKG_EXECUTABLE)
  set(IREEPKG_EXECUTABLE "${_ireepkg_prefix}/bin/ireepkg")
endif()
set(IREEPKG_HELPERS_INCLUDE_DIR "${_ireepkg_prefix}/include")
include("${CMAKE_CURRENT_LIST_DIR}/ireepkgHelpers.cmake")
if(NOT TARGET ireepkg::runtime)
  add_library(ireepkg::runtime SHARED IMPORTED)
  set_target_properties(ireepkg::runtime PROPERTIES
    IMPORTED_LOCATION "${_ireepkg_prefix}/lib/libireepkg_runtime.so"
    INTERFACE_INCLUDE_DIRECTORIES "${_ireepkg_prefix}/include")
endif()
set(ireepkg_runtime_FOUND TRUE)
set(ireepkg_helpers_FOUND TRUE)
unset(_ireepkg_prefix)
