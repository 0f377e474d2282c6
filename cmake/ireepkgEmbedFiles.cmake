# ireepkg_embed_files(OUTPUT <file.cpp> DIR <dir> [RECURSE] DELIMITER <d>
#                     PROLOGUE <variable> EPILOGUE <variable>)
#
# Writes <file.cpp>: the text of the PROLOGUE variable (a variable, since
# an argument's ';' would split it), then one `{"<path>", R"<d>(<content>)<d>"},`
# entry per file under DIR (relative path, sorted), then the EPILOGUE variable's. The file
# is rewritten only when its content changes, and CMake reconfigures when a
# file under DIR changes. Used for the `ireepkg new` templates
# (pkg/CMakeLists.txt) and the registry site's assets
# (registry/CMakeLists.txt).
function(ireepkg_embed_files)
  cmake_parse_arguments(E "RECURSE" "OUTPUT;DIR;DELIMITER;PROLOGUE;EPILOGUE"
                        "" ${ARGN})
  if(E_RECURSE)
    file(GLOB_RECURSE _files CONFIGURE_DEPENDS RELATIVE ${E_DIR} ${E_DIR}/*)
  else()
    file(GLOB _files CONFIGURE_DEPENDS RELATIVE ${E_DIR} ${E_DIR}/*)
  endif()
  list(SORT _files)
  set(_text "${${E_PROLOGUE}}")
  foreach(_rel ${_files})
    file(READ ${E_DIR}/${_rel} _content)
    string(APPEND _text "      {\"${_rel}\",\n       R\"${E_DELIMITER}(${_content})${E_DELIMITER}\"},\n")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
                 ${E_DIR}/${_rel})
  endforeach()
  string(APPEND _text "${${E_EPILOGUE}}")
  file(WRITE ${E_OUTPUT}.new "${_text}")
  file(COPY_FILE ${E_OUTPUT}.new ${E_OUTPUT} ONLY_IF_DIFFERENT)
endfunction()
