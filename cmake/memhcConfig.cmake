# CMake package configuration of memhc's C ABI: in a C or C++ project,
#
#   find_package(memhc REQUIRED)                    # with -Dmemhc_DIR=<memhc>/cmake
#   target_link_libraries(app PRIVATE memhc::memhc)
#
# gives the header <memhc.h> and libmemhc_capi (shared by default; set MEMHC_STATIC=ON before
# find_package for the static library). Works from a source tree (this file in <repo>/cmake,
# the header in <repo>/include, the library built by `cargo build -p memhc-capi [--release]`
# in $CARGO_TARGET_DIR or <repo>/target) and from an installed tree (this file in
# <prefix>/lib/cmake/memhc, the header in <prefix>/include, the library in <prefix>/lib).
# MEMHC_LIBRARY_DIR overrides where the library is looked for.

if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/../include/memhc.h")
  get_filename_component(_memhc_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
else()
  get_filename_component(_memhc_root "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
endif()

set(_memhc_hints)
if(MEMHC_LIBRARY_DIR)
  list(APPEND _memhc_hints "${MEMHC_LIBRARY_DIR}")
endif()
if(DEFINED ENV{CARGO_TARGET_DIR})
  list(APPEND _memhc_hints "$ENV{CARGO_TARGET_DIR}/release" "$ENV{CARGO_TARGET_DIR}/debug")
endif()
list(APPEND _memhc_hints "${_memhc_root}/lib" "${_memhc_root}/target/release"
     "${_memhc_root}/target/debug")

if(MEMHC_STATIC)
  set(_memhc_name "${CMAKE_STATIC_LIBRARY_PREFIX}memhc_capi${CMAKE_STATIC_LIBRARY_SUFFIX}")
else()
  set(_memhc_name "${CMAKE_SHARED_LIBRARY_PREFIX}memhc_capi${CMAKE_SHARED_LIBRARY_SUFFIX}")
endif()
find_library(MEMHC_LIBRARY NAMES "${_memhc_name}" HINTS ${_memhc_hints} NO_DEFAULT_PATH)
find_path(MEMHC_INCLUDE_DIR memhc.h HINTS "${_memhc_root}/include" NO_DEFAULT_PATH)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(memhc
  REQUIRED_VARS MEMHC_LIBRARY MEMHC_INCLUDE_DIR
  VERSION_VAR memhc_VERSION
  REASON_FAILURE_MESSAGE "build the library first: cargo build -p memhc-capi (or set MEMHC_LIBRARY_DIR)")

if(memhc_FOUND AND NOT TARGET memhc::memhc)
  if(MEMHC_STATIC)
    add_library(memhc::memhc STATIC IMPORTED)
    find_package(Threads REQUIRED)
    set_property(TARGET memhc::memhc PROPERTY INTERFACE_LINK_LIBRARIES
                 Threads::Threads ${CMAKE_DL_LIBS} m)
  else()
    add_library(memhc::memhc SHARED IMPORTED)
  endif()
  set_target_properties(memhc::memhc PROPERTIES
    IMPORTED_LOCATION "${MEMHC_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${MEMHC_INCLUDE_DIR}")
endif()
unset(_memhc_root)
unset(_memhc_hints)
unset(_memhc_name)
