# ireepkgHelpers.cmake: CMake functions for IREE plugin authors.
#
# Loaded by find_package(ireepkg CONFIG) (installed, or a build tree of
# ireepkg given with -Direepkg_DIR=<build>), and by ireepkg's own examples.
#
#   ireepkg_add_executable_plugin(<name> SOURCES <src>...
#       [ARCHES <arch>...] [FATELF] [SYSTEM_LIBRARY | SYSTEM_LIBRARY_ONLY]
#       [INCLUDE_DIRECTORIES <dir>...] [DEFINES <def>...])
#     An IREE runtime executable plugin. For each of ARCHES (x86_64, aarch64,
#     riscv64, or an x86-64 level x86_64_v2/v3/v4 built with
#     -march=x86-64-vN; default x86_64 aarch64) a platform-independent embedded ELF,
#     <name>.<arch>.so, compiled freestanding for <arch>-none-elf and linked
#     by lld the way IREE's loader needs (docs/guide-plugin-authors.md lists
#     the flags). The embedded builds see IREEPKG_EMBEDDED_ELF=1. FATELF also
#     joins them into one FatELF <name>.sos (`ireepkg fatelf join`).
#     SYSTEM_LIBRARY also builds lib<name>.so for the host from the same
#     sources (target <name>_system); SYSTEM_LIBRARY_ONLY builds that alone
#     (no embedded ELF: the sources may use libc and link other libraries
#     through <name>_system). <ireepkg/iree_executable_plugin.h> is on the
#     include path, and so, always, is IREE's own header name
#     <iree/hal/local/executable_plugin.h> (IREE's names for the same ABI,
#     from ireepkg's include/ireepkg/iree-compat, so IREE's sample plugins
#     build unchanged), after INCLUDE_DIRECTORIES: a real IREE runtime/src
#     given there is found first. Plain targets use
#     ${IREEPKG_IREE_NAMES_INCLUDE_DIR} for the same.
#
#   ireepkg_add_mlir_plugin(<name> KIND pass|dialect SOURCES <src>...
#       [TABLEGEN <file.td> DIALECT <dialect-name>])
#     An MLIR pass or dialect plugin, lib<name>.so, linked against the shared
#     libMLIR and libLLVM of the MLIR found (Debian's MLIR 22 by default, the
#     one mlir-opt-22 uses), with LLVM's -fno-rtti -fno-exceptions, hidden
#     symbols and -z defs. TABLEGEN runs mlir-tblgen on an ODS file for the
#     dialect declarations and operations (<stem>Dialect.h.inc,
#     <stem>Dialect.cpp.inc, <stem>.h.inc, <stem>.cpp.inc in the include
#     path).
#
#   ireepkg_add_package(<target> [MANIFEST <ireeplugin.json>]
#       [PLUGINS <plugin>...] [FILES <file>...] [DIRECTORY <dir>]
#       [OUTPUT_DIRECTORY <dir>] [NO_TEST] [FATELF_ONLY])
#     Lays out the package directory DIRECTORY (default
#     ${CMAKE_CURRENT_BINARY_DIR}/package) and packs it with `ireepkg pack`
#     into OUTPUT_DIRECTORY (default ${CMAKE_CURRENT_BINARY_DIR}/dist) as
#     <name>-<version>.ireepkg, as part of the build. The manifest goes to
#     the top; FILES (relative to the current source directory) keep their
#     relative paths; PLUGINS go where their manifests name them:
#       runtime/<name>.<arch>.so            embedded ELF
#       runtime/<name>.sos                  FatELF
#       runtime/<platform>/lib<name>.so     system library
#       lib/<platform>/lib<name>.so         MLIR plugin
#     and any other shared or module library target to the path the
#     manifest names for its file (a "library" path ending in its file
#     name, the host platform's when there are several, or the platform in
#     the target's IREEPKG_PLATFORM property: an IMPORTED library built by
#     another toolchain, such as a DLL for windows-x86_64). FATELF_ONLY ships
#     the FatELF of each executable plugin without its per-architecture
#     files (every executable plugin must then be built with FATELF).
#     `ireepkg pack` then checks every path the manifest names against the
#     directory, and runs the package's tests (unless NO_TEST: the archive
#     then records that its tests were skipped). When the manifest has tests,
#     ctest gets a test <target>_tests that runs `ireepkg test <dir>`.
#
# IREEPKG_EXECUTABLE is the ireepkg used (the config sets it; a build of
# ireepkg itself uses its own target).

include_guard(GLOBAL)

# The directory of <ireepkg/iree_executable_plugin.h>.
if(NOT IREEPKG_HELPERS_INCLUDE_DIR)
  get_filename_component(IREEPKG_HELPERS_INCLUDE_DIR
                         "${CMAKE_CURRENT_LIST_DIR}/../include" ABSOLUTE)
endif()
# The directory of <iree/hal/local/executable_plugin.h>, IREE's names.
set(IREEPKG_IREE_NAMES_INCLUDE_DIR
    "${IREEPKG_HELPERS_INCLUDE_DIR}/ireepkg/iree-compat")

function(_ireepkg_tool out_var)
  if(TARGET ireepkg)
    set(${out_var} $<TARGET_FILE:ireepkg> PARENT_SCOPE)
  elseif(IREEPKG_EXECUTABLE)
    set(${out_var} ${IREEPKG_EXECUTABLE} PARENT_SCOPE)
  else()
    find_program(IREEPKG_EXECUTABLE ireepkg REQUIRED)
    set(${out_var} ${IREEPKG_EXECUTABLE} PARENT_SCOPE)
  endif()
endfunction()

# The host platform in ireepkg's spelling, e.g. linux-x86_64.
function(_ireepkg_host_platform out_var)
  string(TOLOWER "${CMAKE_SYSTEM_NAME}" os)
  if(os STREQUAL "darwin")
    set(os macos)
  endif()
  string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" arch)
  if(arch MATCHES "^(amd64|x64)$")
    set(arch x86_64)
  elseif(arch STREQUAL "arm64")
    set(arch aarch64)
  endif()
  set(${out_var} ${os}-${arch} PARENT_SCOPE)
endfunction()

#===------------------------------------------------------------------------===#
# Runtime executable plugins
#===------------------------------------------------------------------------===#

function(ireepkg_add_executable_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG
                        "FATELF;SYSTEM_LIBRARY;SYSTEM_LIBRARY_ONLY" ""
                        "SOURCES;ARCHES;INCLUDE_DIRECTORIES;DEFINES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ireepkg_add_executable_plugin(${name}): unknown "
                        "arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "ireepkg_add_executable_plugin(${name}): no SOURCES")
  endif()
  set(sources)
  foreach(src ${ARG_SOURCES})
    get_filename_component(src ${src} ABSOLUTE)
    list(APPEND sources ${src})
  endforeach()
  set(outdir ${CMAKE_CURRENT_BINARY_DIR}/${name}.plugin)
  set(outputs)
  if(ARG_SYSTEM_LIBRARY_ONLY)
    if(ARG_ARCHES OR ARG_FATELF)
      message(FATAL_ERROR "ireepkg_add_executable_plugin(${name}): "
                          "SYSTEM_LIBRARY_ONLY builds no embedded ELF; drop "
                          "ARCHES and FATELF, or SYSTEM_LIBRARY_ONLY")
    endif()
    set(ARG_SYSTEM_LIBRARY TRUE)
  else()
    _ireepkg_embedded_elfs()
  endif()

  add_custom_target(${name} ALL DEPENDS ${outputs})
  set_target_properties(${name} PROPERTIES
    IREEPKG_PLUGIN_KIND executable
    IREEPKG_ARCHES "${ARG_ARCHES}"
    IREEPKG_OUTPUT_DIR ${outdir}
    IREEPKG_FATELF "${ARG_FATELF}"
    IREEPKG_SYSTEM_LIBRARY "")

  if(ARG_SYSTEM_LIBRARY)
    add_library(${name}_system SHARED ${sources})
    target_include_directories(${name}_system PRIVATE
      ${IREEPKG_HELPERS_INCLUDE_DIR} ${ARG_INCLUDE_DIRECTORIES}
      ${IREEPKG_IREE_NAMES_INCLUDE_DIR})
    target_compile_definitions(${name}_system PRIVATE ${ARG_DEFINES})
    set_target_properties(${name}_system PROPERTIES
      OUTPUT_NAME ${name}
      PREFIX lib
      C_STANDARD 17
      C_STANDARD_REQUIRED ON
      C_EXTENSIONS OFF
      C_VISIBILITY_PRESET hidden
      LIBRARY_OUTPUT_DIRECTORY ${outdir}/system)
    target_link_options(${name}_system PRIVATE LINKER:--no-undefined)
    add_dependencies(${name} ${name}_system)
    set_target_properties(${name} PROPERTIES
      IREEPKG_SYSTEM_LIBRARY ${name}_system)
  endif()
endfunction()

# The embedded ELF files (and the FatELF) of ireepkg_add_executable_plugin:
# a macro run in its scope (name, sources, outdir, ARG_*), that appends the
# files to its `outputs`.
macro(_ireepkg_embedded_elfs)
  if(NOT ARG_ARCHES)
    set(ARG_ARCHES x86_64 aarch64)
  endif()

  # Embedded ELF needs clang (any target) and lld.
  if(CMAKE_C_COMPILER_ID MATCHES "Clang")
    set(cc ${CMAKE_C_COMPILER})
  else()
    find_program(IREEPKG_ELF_CC NAMES clang-22 clang REQUIRED)
    set(cc ${IREEPKG_ELF_CC})
  endif()
  find_program(IREEPKG_LLD NAMES ld.lld-22 ld.lld REQUIRED)

  # What IREE's embedded-ELF loader needs (see IREE's
  # samples/custom_dispatch/cpu/embedded and iree-facts).
  set(cflags -std=c17 -O2 -fPIC -ffreestanding -fvisibility=hidden -fno-plt
      -fno-rtti -fno-exceptions -fdata-sections -ffunction-sections
      -funique-section-names -DIREEPKG_EMBEDDED_ELF=1
      -I${IREEPKG_HELPERS_INCLUDE_DIR})
  foreach(dir ${ARG_INCLUDE_DIRECTORIES})
    get_filename_component(dir ${dir} ABSOLUTE)
    list(APPEND cflags -I${dir})
  endforeach()
  list(APPEND cflags -I${IREEPKG_IREE_NAMES_INCLUDE_DIR})
  foreach(def ${ARG_DEFINES})
    list(APPEND cflags -D${def})
  endforeach()
  set(ldflags -flavor gnu --build-id=none -nostdlib -static -shared
      --no-undefined --no-allow-shlib-undefined --allow-multiple-definition
      --gc-sections -z now -z relro --discard-all --icf=all
      --ignore-data-address-equality --ignore-function-address-equality
      --hash-style=sysv --strip-debug)

  set(elf_files)
  foreach(arch ${ARG_ARCHES})
    set(triple ${arch})
    if(arch STREQUAL "riscv64")
      set(archflags -march=rv64gc -mabi=lp64d)
    elseif(arch MATCHES "^(x86_64|aarch64)$")
      set(archflags)
    elseif(arch MATCHES "^x86_64_v([234])$")
      # A build for an x86-64 level, beside the x86_64 baseline; the
      # manifest keys it as the level ("x86_64_v3").
      set(triple x86_64)
      set(archflags -march=x86-64-v${CMAKE_MATCH_1})
    else()
      message(FATAL_ERROR "ireepkg_add_executable_plugin(${name}): unknown "
                          "architecture ${arch} (x86_64, aarch64, riscv64, "
                          "or x86_64_v2/v3/v4)")
    endif()
    set(objects)
    foreach(src ${sources})
      get_filename_component(stem ${src} NAME_WE)
      set(obj ${outdir}/${arch}/${stem}.o)
      add_custom_command(
        OUTPUT ${obj}
        COMMAND ${CMAKE_COMMAND} -E make_directory ${outdir}/${arch}
        COMMAND ${cc} -target ${triple}-none-elf ${archflags} ${cflags}
                -c ${src} -o ${obj}
        DEPENDS ${src}
        IMPLICIT_DEPENDS C ${src}
        COMMENT "Compiling ${stem} for ${name} (embedded ELF, ${arch})"
        VERBATIM)
      list(APPEND objects ${obj})
    endforeach()
    set(lib ${outdir}/${name}.${arch}.so)
    add_custom_command(
      OUTPUT ${lib}
      COMMAND ${IREEPKG_LLD} ${ldflags} ${objects} -o ${lib}
      DEPENDS ${objects}
      COMMENT "Linking ${name}.${arch}.so (embedded ELF)"
      VERBATIM)
    list(APPEND outputs ${lib})
    if(triple STREQUAL arch) # a FatELF holds one image per architecture
      list(APPEND elf_files ${lib})
    endif()
  endforeach()

  if(ARG_FATELF)
    _ireepkg_tool(ireepkg)
    set(sos ${outdir}/${name}.sos)
    add_custom_command(
      OUTPUT ${sos}
      COMMAND ${ireepkg} fatelf join ${elf_files} -o ${sos}
      DEPENDS ${elf_files}
      COMMENT "Joining ${name}.sos (FatELF)"
      VERBATIM)
    list(APPEND outputs ${sos})
  endif()
endmacro()

#===------------------------------------------------------------------------===#
# MLIR plugins
#===------------------------------------------------------------------------===#

function(ireepkg_add_mlir_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "KIND;TABLEGEN;DIALECT" "SOURCES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ireepkg_add_mlir_plugin(${name}): unknown arguments "
                        "${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_KIND MATCHES "^(pass|dialect)$")
    message(FATAL_ERROR "ireepkg_add_mlir_plugin(${name}): KIND is pass or "
                        "dialect")
  endif()
  if(NOT TARGET MLIR OR NOT DEFINED MLIR_INCLUDE_DIRS)
    find_package(MLIR REQUIRED CONFIG HINTS /usr/lib/llvm-22/lib/cmake/mlir)
  endif()

  set(generated)
  set(gendir ${CMAKE_CURRENT_BINARY_DIR}/${name}.gen)
  if(ARG_TABLEGEN)
    if(NOT ARG_DIALECT)
      message(FATAL_ERROR "ireepkg_add_mlir_plugin(${name}): TABLEGEN needs "
                          "DIALECT <name>")
    endif()
    get_filename_component(td ${ARG_TABLEGEN} ABSOLUTE)
    get_filename_component(tddir ${td} DIRECTORY)
    get_filename_component(stem ${td} NAME_WE)
    foreach(gen "Dialect.h.inc;-gen-dialect-decls;-dialect=${ARG_DIALECT}"
                "Dialect.cpp.inc;-gen-dialect-defs;-dialect=${ARG_DIALECT}"
                ".h.inc;-gen-op-decls" ".cpp.inc;-gen-op-defs")
      list(POP_FRONT gen suffix)
      set(out ${gendir}/${stem}${suffix})
      add_custom_command(
        OUTPUT ${out}
        COMMAND ${CMAKE_COMMAND} -E make_directory ${gendir}
        COMMAND $<TARGET_FILE:mlir-tblgen> ${gen} -I ${MLIR_INCLUDE_DIRS}
                -I ${tddir} ${td} -o ${out}
        DEPENDS ${td}
        COMMENT "Generating ${stem}${suffix} for ${name}"
        VERBATIM)
      list(APPEND generated ${out})
    endforeach()
  endif()

  add_library(${name} MODULE ${ARG_SOURCES} ${generated})
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                             ${gendir})
  target_include_directories(${name} SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS}
                             ${MLIR_INCLUDE_DIRS})
  separate_arguments(defs UNIX_COMMAND "${LLVM_DEFINITIONS}")
  target_compile_definitions(${name} PRIVATE ${defs})
  target_compile_options(${name} PRIVATE -fno-rtti -fno-exceptions)
  # Every symbol resolves against libMLIR/libLLVM at link time, not when a
  # tool happens to load the plugin.
  target_link_options(${name} PRIVATE LINKER:-z,defs)
  target_link_libraries(${name} PRIVATE MLIR LLVM)
  # C++17, the language LLVM 22 is built in.
  set_target_properties(${name} PROPERTIES
    CXX_STANDARD 17
    CXX_STANDARD_REQUIRED ON
    CXX_EXTENSIONS OFF
    PREFIX lib
    OUTPUT_NAME ${name}
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    IREEPKG_PLUGIN_KIND mlir-${ARG_KIND})
endfunction()

#===------------------------------------------------------------------------===#
# Packages
#===------------------------------------------------------------------------===#

# The file name a shared or module library target builds (lib<name>.so), in
# `file_var`.
function(_ireepkg_library_file plugin type file_var)
  if(type STREQUAL "MODULE_LIBRARY")
    set(kind MODULE)
  else()
    set(kind LIBRARY)
  endif()
  get_target_property(base ${plugin} OUTPUT_NAME)
  if(NOT base)
    set(base ${plugin})
  endif()
  get_target_property(prefix ${plugin} PREFIX)
  if(prefix STREQUAL "prefix-NOTFOUND")
    set(prefix ${CMAKE_SHARED_${kind}_PREFIX})
  endif()
  get_target_property(suffix ${plugin} SUFFIX)
  if(suffix STREQUAL "suffix-NOTFOUND")
    set(suffix ${CMAKE_SHARED_${kind}_SUFFIX})
  endif()
  set(${file_var} ${prefix}${base}${suffix} PARENT_SCOPE)
endfunction()

# The file name of a shared or module library target (an IMPORTED one's
# file) in `file_var`, and the package paths `manifest_text` names for it in
# `paths_var`: every quoted path ending in /<file>, only those under
# `platform` when some are.
function(_ireepkg_library_paths plugin type manifest_text platform file_var
         paths_var)
  get_target_property(imported ${plugin} IMPORTED)
  if(imported)
    get_target_property(location ${plugin} IMPORTED_LOCATION)
    get_filename_component(file ${location} NAME)
  else()
    _ireepkg_library_file(${plugin} ${type} file)
  endif()
  string(REGEX REPLACE "([][.+*?^$()|\\])" "\\\\\\1" pattern "${file}")
  string(REGEX MATCHALL "\"[^\"]*/${pattern}\"" quoted "${manifest_text}")
  set(all)
  set(host)
  foreach(q ${quoted})
    string(REGEX REPLACE "^\"(.*)\"$" "\\1" rel "${q}")
    list(APPEND all ${rel})
    if(rel MATCHES "(^|/)${platform}/")
      list(APPEND host ${rel})
    endif()
  endforeach()
  if(host)
    set(all ${host})
  endif()
  list(REMOVE_DUPLICATES all)
  set(${file_var} ${file} PARENT_SCOPE)
  set(${paths_var} ${all} PARENT_SCOPE)
endfunction()

function(ireepkg_add_package target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "NO_TEST;FATELF_ONLY"
                        "MANIFEST;DIRECTORY;OUTPUT_DIRECTORY" "PLUGINS;FILES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ireepkg_add_package(${target}): unknown arguments "
                        "${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_MANIFEST)
    set(ARG_MANIFEST ireeplugin.json)
  endif()
  get_filename_component(manifest ${ARG_MANIFEST} ABSOLUTE)
  if(NOT ARG_DIRECTORY)
    set(ARG_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/package)
  endif()
  if(NOT ARG_OUTPUT_DIRECTORY)
    set(ARG_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/dist)
  endif()
  set(dir ${ARG_DIRECTORY})
  _ireepkg_tool(ireepkg)
  _ireepkg_host_platform(platform)

  # The archive's name comes from the manifest; reconfigure when it changes.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${manifest})
  file(READ ${manifest} text)
  string(JSON pkg_name ERROR_VARIABLE err GET "${text}" name)
  string(JSON pkg_version ERROR_VARIABLE err2 GET "${text}" version)
  if(err OR err2)
    message(FATAL_ERROR "ireepkg_add_package(${target}): ${manifest} has no "
                        "name or version: ${err}${err2}")
  endif()
  set(archive ${ARG_OUTPUT_DIRECTORY}/${pkg_name}-${pkg_version}.ireepkg)
  string(JSON test_count ERROR_VARIABLE no_tests LENGTH "${text}" tests)
  if(no_tests)
    set(test_count 0)
  endif()

  # The layout: one list of commands that rebuilds the directory.
  set(commands
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${dir}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${CMAKE_COMMAND} -E copy ${manifest} ${dir}/ireeplugin.json)
  set(depends ${manifest})
  set(laid_out) # package paths of the plugin files, checked below
  if(TARGET ireepkg)
    list(APPEND depends ireepkg) # ireepkg's own build: pack with this build
  endif()
  foreach(file ${ARG_FILES})
    get_filename_component(src ${file} ABSOLUTE)
    file(RELATIVE_PATH rel ${CMAKE_CURRENT_SOURCE_DIR} ${src})
    if(rel MATCHES "^\\.\\./" OR IS_ABSOLUTE "${rel}")
      message(FATAL_ERROR "ireepkg_add_package(${target}): ${file} is not "
                          "under ${CMAKE_CURRENT_SOURCE_DIR}; FILES keep their "
                          "path relative to it in the package")
    endif()
    get_filename_component(reldir ${rel} DIRECTORY)
    list(APPEND commands
      COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}/${reldir}
      COMMAND ${CMAKE_COMMAND} -E copy ${src} ${dir}/${rel})
    list(APPEND depends ${src})
  endforeach()
  foreach(plugin ${ARG_PLUGINS})
    if(NOT TARGET ${plugin})
      message(FATAL_ERROR "ireepkg_add_package(${target}): ${plugin} is not "
                          "a target (PLUGINS names targets: of "
                          "ireepkg_add_executable_plugin, "
                          "ireepkg_add_mlir_plugin, or shared libraries)")
    endif()
    get_target_property(kind ${plugin} IREEPKG_PLUGIN_KIND)
    get_target_property(type ${plugin} TYPE)
    if(kind STREQUAL "executable")
      get_target_property(arches ${plugin} IREEPKG_ARCHES)
      get_target_property(outdir ${plugin} IREEPKG_OUTPUT_DIR)
      get_target_property(fat ${plugin} IREEPKG_FATELF)
      get_target_property(system ${plugin} IREEPKG_SYSTEM_LIBRARY)
      if(ARG_FATELF_ONLY AND arches AND NOT fat)
        message(FATAL_ERROR "ireepkg_add_package(${target}): FATELF_ONLY "
                            "ships only FatELF files, and ${plugin} is not "
                            "built with FATELF; add FATELF to its "
                            "ireepkg_add_executable_plugin")
      endif()
      if(ARG_FATELF_ONLY) # the .sos holds them, but not x86-64 levels
        list(FILTER arches INCLUDE REGEX "^x86_64_v[234]$")
      endif()
      list(APPEND commands
        COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}/runtime)
      foreach(arch ${arches})
        list(APPEND commands COMMAND ${CMAKE_COMMAND} -E copy
             ${outdir}/${plugin}.${arch}.so ${dir}/runtime/${plugin}.${arch}.so)
        list(APPEND depends ${outdir}/${plugin}.${arch}.so)
        list(APPEND laid_out runtime/${plugin}.${arch}.so)
      endforeach()
      if(fat)
        list(APPEND commands COMMAND ${CMAKE_COMMAND} -E copy
             ${outdir}/${plugin}.sos ${dir}/runtime/${plugin}.sos)
        list(APPEND depends ${outdir}/${plugin}.sos)
        list(APPEND laid_out runtime/${plugin}.sos)
      endif()
      if(system)
        list(APPEND commands
          COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}/runtime/${platform}
          COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:${system}>
                  ${dir}/runtime/${platform}/lib${plugin}.so)
        list(APPEND depends ${system})
        list(APPEND laid_out runtime/${platform}/lib${plugin}.so)
      endif()
    elseif(kind MATCHES "^mlir-")
      list(APPEND commands
        COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}/lib/${platform}
        COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:${plugin}>
                ${dir}/lib/${platform}/lib${plugin}.so)
      list(APPEND laid_out lib/${platform}/lib${plugin}.so)
    elseif(type MATCHES "^(SHARED|MODULE)_LIBRARY$")
      # Any other shared library: where the manifest names its file.
      get_target_property(library_platform ${plugin} IREEPKG_PLATFORM)
      if(NOT library_platform)
        set(library_platform ${platform})
      endif()
      _ireepkg_library_paths(${plugin} "${type}" "${text}"
                             "${library_platform}" file paths)
      if(NOT paths)
        message(FATAL_ERROR "ireepkg_add_package(${target}): ${plugin} "
                            "builds ${file}, which ${ARG_MANIFEST} does not "
                            "name; name its path in the package (e.g. "
                            "runtime/${library_platform}/${file}) in a "
                            "plugin's "
                            "\"library\"")
      endif()
      foreach(rel ${paths})
        get_filename_component(reldir ${rel} DIRECTORY)
        list(APPEND commands
          COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}/${reldir}
          COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:${plugin}>
                  ${dir}/${rel})
      endforeach()
    else()
      message(FATAL_ERROR "ireepkg_add_package(${target}): ${plugin} is not "
                          "a target of ireepkg_add_executable_plugin or "
                          "ireepkg_add_mlir_plugin, nor a shared library")
    endif()
    list(APPEND depends ${plugin})
  endforeach()

  # Every plugin file should be one the manifest names (`ireepkg pack`
  # checks the other way: every path the manifest names exists).
  foreach(rel ${laid_out})
    string(FIND "${text}" "\"${rel}\"" at)
    if(at EQUAL -1)
      message(WARNING "ireepkg_add_package(${target}): the package gets "
                      "${rel}, which ${ARG_MANIFEST} does not name; name it "
                      "in a plugin's \"library\" (or drop it from the build)")
    endif()
  endforeach()

  set(pack_flags)
  if(ARG_NO_TEST)
    set(pack_flags --no-test)
  endif()
  add_custom_command(
    OUTPUT ${archive}
    ${commands}
    COMMAND ${ireepkg} pack ${dir} -o ${ARG_OUTPUT_DIRECTORY} ${pack_flags}
    DEPENDS ${depends}
    COMMENT "Packing ${pkg_name} ${pkg_version}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${archive})
  set_target_properties(${target} PROPERTIES
    IREEPKG_PACKAGE_DIRECTORY ${dir}
    IREEPKG_ARCHIVE ${archive})
  if(NOT ARG_NO_TEST AND test_count GREATER 0)
    add_test(NAME ${target}_tests COMMAND ${ireepkg} test ${dir})
  endif()
endfunction()
