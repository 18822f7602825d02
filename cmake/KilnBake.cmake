# KilnBake.cmake - bake source files into Kiln blobs as part of a CMake build.
#
# Installed with the package; find_package(kiln) includes it when the `kiln` tool (kiln::cli)
# was installed. Needs CMake 3.20 (DEPFILE with the Ninja and Makefile generators).
#
#   kiln_bake(<target> OUTPUT <out.kiln> INPUTS <file>... [OPTIONS <kiln bake option>...]
#             [CACHE <dir>] [ALL])
#
#     One blob from all INPUTS (`kiln bake INPUTS -o OUTPUT`), by a custom command with a
#     depfile: the bake is rerun when an input or the tool changes, and only then. Relative
#     INPUTS are taken from the current source directory, a relative OUTPUT from the current
#     binary directory. <target> is a custom target that builds the blob (ALL: with the default
#     build). OPTIONS are passed to `kiln bake` as written (--lossy-anim, --scene-root DIR, ...).
#
#   kiln_bake_directory(<target> DIR <dir> GLOB <pattern>... [OUTPUT_DIR <dir>]
#                       [OPTIONS ...] [CACHE <dir>] [ALL])
#
#     One blob per source file under DIR matching a GLOB pattern (file(GLOB_RECURSE), relative
#     to DIR, re-globbed when files are added): DIR/a/b.cast -> OUTPUT_DIR/a/b.kiln.
#     OUTPUT_DIR defaults to the current binary directory. Touching one source rebakes its blob
#     alone. Two sources whose names differ only by extension are an error (one blob name).
#
#   Both set <target>'s KILN_OUTPUTS property to the blobs' paths.
#
# CACHE (or, when it is not given, the variable KILN_BAKE_CACHE) passes `--cache <dir>`: a
# content-addressed store of blobs shared by build trees and machines (docs/pipeline.md). The
# blobs are identical for identical inputs wherever they are baked, so a build farm or a remote
# build cache can run these commands anywhere.

if(CMAKE_VERSION VERSION_LESS 3.20)
  message(FATAL_ERROR "kiln_bake() needs CMake 3.20 or newer (DEPFILE with Ninja and Makefiles)")
endif()

# The custom command behind both functions: one blob, its depfile next to it.
function(_kiln_bake_command out_var output)
  cmake_parse_arguments(PARSE_ARGV 2 _kb "" "CACHE" "INPUTS;OPTIONS")
  if(NOT _kb_INPUTS)
    message(FATAL_ERROR "kiln_bake: no INPUTS for ${output}")
  endif()
  set(_inputs "")
  foreach(_in IN LISTS _kb_INPUTS)
    get_filename_component(_abs "${_in}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND _inputs "${_abs}")
  endforeach()
  get_filename_component(_out "${output}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  get_filename_component(_out_dir "${_out}" DIRECTORY)
  file(MAKE_DIRECTORY "${_out_dir}")
  set(_cache "${_kb_CACHE}")
  if(NOT _cache AND DEFINED KILN_BAKE_CACHE)
    set(_cache "${KILN_BAKE_CACHE}")
  endif()
  set(_cache_args "")
  if(_cache)
    get_filename_component(_cache "${_cache}" ABSOLUTE BASE_DIR "${CMAKE_BINARY_DIR}")
    set(_cache_args --cache "${_cache}")
  endif()
  file(RELATIVE_PATH _shown "${CMAKE_BINARY_DIR}" "${_out}")
  add_custom_command(
    OUTPUT "${_out}"
    COMMAND kiln::cli bake ${_kb_OPTIONS} ${_cache_args} --depfile "${_out}.d" ${_inputs} -o "${_out}"
    DEPENDS ${_inputs} "$<TARGET_FILE:kiln::cli>"
    DEPFILE "${_out}.d"
    COMMENT "Baking ${_shown}"
    VERBATIM)
  set(${out_var} "${_out}" PARENT_SCOPE)
endfunction()

function(kiln_bake target)
  cmake_parse_arguments(PARSE_ARGV 1 _kb "ALL" "OUTPUT;CACHE" "INPUTS;OPTIONS")
  if(NOT _kb_OUTPUT)
    message(FATAL_ERROR "kiln_bake(${target}): OUTPUT <file.kiln> is required")
  endif()
  if(_kb_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_bake(${target}): unknown arguments ${_kb_UNPARSED_ARGUMENTS}")
  endif()
  _kiln_bake_command(_out "${_kb_OUTPUT}" INPUTS ${_kb_INPUTS} OPTIONS ${_kb_OPTIONS} CACHE "${_kb_CACHE}")
  set(_all "")
  if(_kb_ALL)
    set(_all ALL)
  endif()
  add_custom_target(${target} ${_all} DEPENDS "${_out}")
  set_property(TARGET ${target} PROPERTY KILN_OUTPUTS "${_out}")
endfunction()

function(kiln_bake_directory target)
  cmake_parse_arguments(PARSE_ARGV 1 _kb "ALL" "DIR;OUTPUT_DIR;CACHE" "GLOB;OPTIONS")
  if(NOT _kb_DIR OR NOT _kb_GLOB)
    message(FATAL_ERROR "kiln_bake_directory(${target}): DIR <dir> and GLOB <pattern>... are required")
  endif()
  if(_kb_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_bake_directory(${target}): unknown arguments ${_kb_UNPARSED_ARGUMENTS}")
  endif()
  get_filename_component(_dir "${_kb_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(_out_dir "${CMAKE_CURRENT_BINARY_DIR}")
  if(_kb_OUTPUT_DIR)
    get_filename_component(_out_dir "${_kb_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  endif()
  set(_patterns "")
  foreach(_g IN LISTS _kb_GLOB)
    list(APPEND _patterns "${_dir}/${_g}")
  endforeach()
  file(GLOB_RECURSE _sources CONFIGURE_DEPENDS ${_patterns})
  list(SORT _sources)
  if(NOT _sources)
    message(WARNING "kiln_bake_directory(${target}): nothing in ${_dir} matches ${_kb_GLOB}")
  endif()
  set(_outputs "")
  foreach(_src IN LISTS _sources)
    file(RELATIVE_PATH _rel "${_dir}" "${_src}")
    string(REGEX REPLACE "\\.[^./]*$" "" _stem "${_rel}")
    if("${_out_dir}/${_stem}.kiln" IN_LIST _outputs)
      message(FATAL_ERROR "kiln_bake_directory(${target}): two sources bake to ${_stem}.kiln "
                          "(names that differ only by extension); narrow GLOB or split the call")
    endif()
    _kiln_bake_command(_out "${_out_dir}/${_stem}.kiln" INPUTS "${_src}" OPTIONS ${_kb_OPTIONS} CACHE "${_kb_CACHE}")
    list(APPEND _outputs "${_out}")
  endforeach()
  set(_all "")
  if(_kb_ALL)
    set(_all ALL)
  endif()
  add_custom_target(${target} ${_all} DEPENDS ${_outputs})
  set_property(TARGET ${target} PROPERTY KILN_OUTPUTS "${_outputs}")
endfunction()
