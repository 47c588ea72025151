# parity_embed_files(<target> NAMESPACE <ns> BASE <dir> FILES <relative paths...>)
# Compiles text files into a static library <target> so the binary needs no data files at
# run time. C++ API (header support/embedded_files.h):
#   std::span<const parity::EmbeddedFile> <ns>::Files();   // {path relative to BASE, content}
# The generated source is rebuilt when any listed file changes.
set(PARITY_EMBED_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/EmbedFilesGenerate.cmake")

function(parity_embed_files target)
  cmake_parse_arguments(ARG "" "NAMESPACE;BASE" "FILES" ${ARGN})
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}_embedded.cpp")
  set(abs_files "")
  foreach(f IN LISTS ARG_FILES)
    list(APPEND abs_files "${ARG_BASE}/${f}")
  endforeach()
  string(REPLACE ";" "|" files_arg "${ARG_FILES}")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND "${CMAKE_COMMAND}" "-DBASE=${ARG_BASE}" "-DFILES=${files_arg}"
            "-DNAMESPACE=${ARG_NAMESPACE}" "-DOUT=${out}" -P "${PARITY_EMBED_SCRIPT}"
    DEPENDS ${abs_files} "${PARITY_EMBED_SCRIPT}"
    COMMENT "Embedding ${target} files"
    VERBATIM)
  add_library(${target} STATIC "${out}")
  target_include_directories(${target} PUBLIC "${PROJECT_SOURCE_DIR}")
endfunction()
