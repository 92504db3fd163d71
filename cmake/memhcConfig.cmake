# CMake package configuration of memhc's C ABI and its C++ layer: in a C or C++ project,
#
#   find_package(memhc REQUIRED)                    # with -Dmemhc_DIR=<memhc>/cmake
#   target_link_libraries(app PRIVATE memhc::memhc)
#
# gives the headers <memhc.h> (C) and <memhc.hpp> (C++17) and libmemhc_capi, with every link
# dependency of the build the library came from (the system libraries of the static library,
# and libhdf5 when it was built with the hdf5 feature).
#
# WHICH LIBRARY. Exactly one, chosen by the first of these that is set, and named in a status
# line ("memhc: using ..."); if it is not there, configuration stops with an error that names
# every path looked at and the command that builds it. Nothing else is searched, so a stale
# build elsewhere is never picked up silently.
#
#   MEMHC_LIBRARY=<file>       that file (libmemhc_capi.so or .a).
#   MEMHC_LIBRARY_DIR=<dir>    libmemhc_capi.so (or .a with MEMHC_STATIC) in that folder.
#   otherwise, in a source tree: <target>/<profile>/, where <target> is $CARGO_TARGET_DIR
#   when it is set (at configure time) and <repo>/target otherwise, and <profile> is
#   MEMHC_PROFILE: release (the default; `cargo build --release -p memhc-capi`) or debug
#   (`cargo build -p memhc-capi`); in an installed tree (this file in
#   <prefix>/lib/cmake/memhc): <prefix>/lib.
#
# MEMHC_STATIC=ON takes the static library (libmemhc_capi.a) instead of the shared one.
# MEMHC_HDF5=AUTO (default) links libhdf5 (pkg-config's hdf5, else find_package(HDF5)) when the library
# refers to HDF5 (it was built with the hdf5 feature: cargo build --release -p memhc-capi
# --features memhc-embed/hdf5); ON or OFF decides without looking.
#
# Results (cache): MEMHC_LIBRARY_FOUND, the file chosen; MEMHC_INCLUDE_DIR; MEMHC_WITH_HDF5.

if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/../include/memhc.h")
  get_filename_component(_memhc_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
  set(_memhc_tree source)
else()
  get_filename_component(_memhc_root "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
  set(_memhc_tree installed)
endif()

if(MEMHC_STATIC)
  set(_memhc_name "${CMAKE_STATIC_LIBRARY_PREFIX}memhc_capi${CMAKE_STATIC_LIBRARY_SUFFIX}")
else()
  set(_memhc_name "${CMAKE_SHARED_LIBRARY_PREFIX}memhc_capi${CMAKE_SHARED_LIBRARY_SUFFIX}")
endif()
if(NOT DEFINED MEMHC_PROFILE OR MEMHC_PROFILE STREQUAL "")
  set(MEMHC_PROFILE release)
endif()
if(NOT MEMHC_PROFILE MATCHES "^(release|debug)$")
  message(FATAL_ERROR "memhc: MEMHC_PROFILE is '${MEMHC_PROFILE}'; give release or debug")
endif()
set(_memhc_build_cmd "cargo build -p memhc-capi")
if(MEMHC_PROFILE STREQUAL "release")
  set(_memhc_build_cmd "cargo build --release -p memhc-capi")
endif()

# The one file to use, and why.
if(MEMHC_LIBRARY)
  set(_memhc_lib "${MEMHC_LIBRARY}")
  set(_memhc_why "MEMHC_LIBRARY")
elseif(MEMHC_LIBRARY_DIR)
  set(_memhc_lib "${MEMHC_LIBRARY_DIR}/${_memhc_name}")
  set(_memhc_why "MEMHC_LIBRARY_DIR")
elseif(_memhc_tree STREQUAL "installed")
  set(_memhc_lib "${_memhc_root}/lib/${_memhc_name}")
  set(_memhc_why "the installed tree ${_memhc_root}")
elseif(DEFINED ENV{CARGO_TARGET_DIR} AND NOT "$ENV{CARGO_TARGET_DIR}" STREQUAL "")
  set(_memhc_lib "$ENV{CARGO_TARGET_DIR}/${MEMHC_PROFILE}/${_memhc_name}")
  set(_memhc_why "CARGO_TARGET_DIR, profile ${MEMHC_PROFILE}")
else()
  set(_memhc_lib "${_memhc_root}/target/${MEMHC_PROFILE}/${_memhc_name}")
  set(_memhc_why "the source tree's target/, profile ${MEMHC_PROFILE}")
endif()
get_filename_component(_memhc_lib "${_memhc_lib}" ABSOLUTE)

set(_memhc_fail "")
if(NOT EXISTS "${_memhc_lib}" OR IS_DIRECTORY "${_memhc_lib}")
  string(CONCAT _memhc_fail "memhc: no library at ${_memhc_lib} (chosen by ${_memhc_why}).\n"
      "  Build it: ${_memhc_build_cmd}"
      " (the same CARGO_TARGET_DIR, if any, as here);\n"
      "  or point to one: -DMEMHC_LIBRARY=/path/to/${_memhc_name},"
      " -DMEMHC_LIBRARY_DIR=/path/to/dir, -DMEMHC_PROFILE=debug for a debug build.")
endif()
if(NOT EXISTS "${_memhc_root}/include/memhc.h" OR NOT EXISTS "${_memhc_root}/include/memhc.hpp")
  string(APPEND _memhc_fail
         "memhc: no headers memhc.h and memhc.hpp in ${_memhc_root}/include.\n")
endif()

if(_memhc_fail)
  set(memhc_FOUND FALSE)
  set(memhc_NOT_FOUND_MESSAGE "${_memhc_fail}")
  if(memhc_FIND_REQUIRED)
    message(FATAL_ERROR "${_memhc_fail}")
  elseif(NOT memhc_FIND_QUIETLY)
    message(WARNING "${_memhc_fail}")
  endif()
else()
  set(memhc_FOUND TRUE)
  set(MEMHC_LIBRARY_FOUND "${_memhc_lib}" CACHE FILEPATH "The memhc library in use" FORCE)
  set(MEMHC_INCLUDE_DIR "${_memhc_root}/include" CACHE PATH "memhc's headers" FORCE)

  # HDF5: a library built with the hdf5 feature refers to HDF5's C API (H5open). The symbol's
  # name is in the library's string tables, whether it is shared (an undefined dynamic
  # symbol) or static (an undefined symbol of an archive member).
  if(NOT DEFINED MEMHC_HDF5 OR MEMHC_HDF5 STREQUAL "")
    set(MEMHC_HDF5 AUTO)
  endif()
  if(MEMHC_HDF5 STREQUAL "AUTO")
    file(STRINGS "${_memhc_lib}" _memhc_h5 REGEX "^H5open$" LIMIT_COUNT 1)
    if(_memhc_h5)
      set(_memhc_with_hdf5 ON)
    else()
      set(_memhc_with_hdf5 OFF)
    endif()
  elseif(MEMHC_HDF5)
    set(_memhc_with_hdf5 ON)
  else()
    set(_memhc_with_hdf5 OFF)
  endif()
  set(MEMHC_WITH_HDF5 ${_memhc_with_hdf5} CACHE BOOL "memhc's library needs libhdf5" FORCE)

  if(NOT TARGET memhc::memhc)
    set(_memhc_deps)
    if(MEMHC_STATIC)
      add_library(memhc::memhc STATIC IMPORTED)
      # What a Rust static library needs from the system (rustc --print native-static-libs).
      find_package(Threads REQUIRED)
      list(APPEND _memhc_deps Threads::Threads ${CMAKE_DL_LIBS} m gcc_s util rt)
    else()
      add_library(memhc::memhc SHARED IMPORTED)
    endif()
    if(_memhc_with_hdf5)
      # pkg-config first (what the Rust build itself used, and no C compiler needed), then
      # CMake's FindHDF5 (which needs the C language enabled in the project).
      find_package(PkgConfig QUIET)
      if(PKG_CONFIG_FOUND)
        pkg_check_modules(MEMHC_PC_HDF5 QUIET IMPORTED_TARGET hdf5)
      endif()
      get_property(_memhc_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
      if(TARGET PkgConfig::MEMHC_PC_HDF5)
        list(APPEND _memhc_deps PkgConfig::MEMHC_PC_HDF5)
      elseif("C" IN_LIST _memhc_langs)
        find_package(HDF5 COMPONENTS C)
        if(TARGET HDF5::HDF5)
          list(APPEND _memhc_deps HDF5::HDF5)
        elseif(HDF5_FOUND)
          list(APPEND _memhc_deps ${HDF5_C_LIBRARIES})
        endif()
      endif()
      if(NOT _memhc_deps MATCHES "HDF5")
        message(FATAL_ERROR "memhc: ${_memhc_lib} was built with the hdf5 feature and needs "
                "libhdf5, which neither pkg-config (hdf5.pc) nor CMake's FindHDF5 (with the C "
                "language enabled) found: install it (Debian: libhdf5-dev), or set "
                "PKG_CONFIG_PATH or HDF5_ROOT; or build memhc without the feature.")
      endif()
      unset(_memhc_langs)
    endif()
    set_target_properties(memhc::memhc PROPERTIES
      IMPORTED_LOCATION "${_memhc_lib}"
      INTERFACE_INCLUDE_DIRECTORIES "${_memhc_root}/include"
      INTERFACE_LINK_LIBRARIES "${_memhc_deps}")
    unset(_memhc_deps)
  endif()
  if(NOT memhc_FIND_QUIETLY)
    message(STATUS "memhc: using ${_memhc_lib} (${_memhc_why}; hdf5 ${_memhc_with_hdf5})")
  endif()
endif()

unset(_memhc_root)
unset(_memhc_tree)
unset(_memhc_name)
unset(_memhc_lib)
unset(_memhc_why)
unset(_memhc_fail)
unset(_memhc_h5)
unset(_memhc_with_hdf5)
unset(_memhc_build_cmd)
