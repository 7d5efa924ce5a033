# Where `cmake --install` puts things (GNUInstallDirs, relative to the prefix) and the RUNPATH
# that keeps an installed prefix relocatable. Included by the top-level CMakeLists.txt before
# the layers, whose CMakeLists.txt call xmsg_install_rpath() on what they install.
#
#   bin/             xmsgrun xmsgcc xmsgcxx xmsg_plan xmsg_info
#   lib/             libxmsg.so* libxmsg_mpi.so*, pkgconfig/xmsg{,-mpi}.pc, cmake/xmsg/
#   include/xmsg/    xmsg.h xmsg.hpp mpi/mpi.h
#   libexec/xmsg/    xmsg_osu_* (XMSG_BUILD_BENCHMARKS)
#   share/doc/xmsg/  README.md, docs/install.md
include_guard(GLOBAL)

set(XMSG_INSTALL_LIBEXECDIR "${CMAKE_INSTALL_LIBEXECDIR}/xmsg")
set(XMSG_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/xmsg")
set(XMSG_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")

# XMSG_RELATIVE_<DIR>: from an install directory to another, "" when they are the same. An
# absolute GNUInstallDirs directory (-DCMAKE_INSTALL_LIBDIR=/usr/lib64) cannot move with the
# prefix; the path is then the absolute one and that part of the install is not relocatable.
function(xmsg_relative_install_path out from to)
  if(IS_ABSOLUTE "${to}")
    set(${out} "${to}" PARENT_SCOPE)
    return()
  endif()
  if(IS_ABSOLUTE "${from}")
    message(FATAL_ERROR "xmsg: install directory '${from}' is absolute; keep the GNUInstallDirs "
                        "directories relative to CMAKE_INSTALL_PREFIX for a relocatable install")
  endif()
  file(RELATIVE_PATH rel "/xmsg-prefix/${from}" "/xmsg-prefix/${to}")
  string(REGEX REPLACE "/$" "" rel "${rel}")
  set(${out} "${rel}" PARENT_SCOPE)
endfunction()

# The installed copy of TARGET (installed into DESTINATION, relative to the prefix) finds
# xmsg's libraries through RUNPATH $ORIGIN/<relative path to libdir>: $ORIGIN/../lib from bin/,
# $ORIGIN/../../lib from libexec/xmsg/, $ORIGIN in lib/. The build tree's RUNPATH (build/lib,
# the dependencies' -L directories) is what it always was; `cmake --install` rewrites it.
# The dependencies (PMIx, hwloc, rdma-core) are found by the dynamic linker's default search.
function(xmsg_install_rpath target destination)
  xmsg_relative_install_path(rel "${destination}" "${CMAKE_INSTALL_LIBDIR}")
  if(rel STREQUAL "")
    set(rpath "$ORIGIN")
  elseif(IS_ABSOLUTE "${rel}")
    set(rpath "${rel}")
  else()
    set(rpath "$ORIGIN/${rel}")
  endif()
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "${rpath}")
endfunction()

# CMAKE_INSTALL_<dir> as an installed file that knows its prefix as `prefix_ref` (a shell or
# pkg-config variable) must name it: absolute install directories stay as they are.
function(xmsg_prefixed_install_dir out dir prefix_ref)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(${out} "${CMAKE_INSTALL_${dir}}" PARENT_SCOPE)
  else()
    set(${out} "${prefix_ref}/${CMAKE_INSTALL_${dir}}" PARENT_SCOPE)
  endif()
endfunction()

# The MPI compiler wrappers from runtime/mpi/wrapper.sh.in, written to `out_dir`: the ones named
# after the arguments (xmsgcc, xmsgcxx, xmsgfort), xmsgcc and xmsgcxx when none are. The build
# tree's copies and the installed ones differ only in the arguments: `locate` (shell lines that
# set $prefix, empty in the build tree), the -I flags and the library directory.
function(xmsg_configure_wrappers out_dir locate include_dirs lib_dir)
  set(XMSG_WRAPPER_LOCATE "${locate}")
  set(XMSG_WRAPPER_INCLUDE_DIRS "${include_dirs}")
  set(XMSG_WRAPPER_LIB_DIR "${lib_dir}")
  # A sanitizer build's libraries need the sanitizer runtime in the programs linked against them.
  set(XMSG_WRAPPER_EXTRA_FLAGS "")
  if(XMSG_SANITIZE STREQUAL "address")
    set(XMSG_WRAPPER_EXTRA_FLAGS "-fsanitize=address,undefined")
  elseif(XMSG_SANITIZE STREQUAL "thread")
    set(XMSG_WRAPPER_EXTRA_FLAGS "-fsanitize=thread")
  endif()
  set(wrappers ${ARGN})
  if(NOT wrappers)
    set(wrappers xmsgcc xmsgcxx)
  endif()
  foreach(wrapper IN LISTS wrappers)
    if(wrapper STREQUAL "xmsgcc")
      set(XMSG_WRAPPER_COMPILER "${CMAKE_C_COMPILER}")
      set(XMSG_WRAPPER_ENV "XMSG_CC")
    elseif(wrapper STREQUAL "xmsgcxx")
      set(XMSG_WRAPPER_COMPILER "${CMAKE_CXX_COMPILER}")
      set(XMSG_WRAPPER_ENV "XMSG_CXX")
    elseif(wrapper STREQUAL "xmsgfort")
      set(XMSG_WRAPPER_COMPILER "${CMAKE_Fortran_COMPILER}")
      set(XMSG_WRAPPER_ENV "XMSG_FC")
    else()
      message(FATAL_ERROR "xmsg_configure_wrappers: unknown wrapper '${wrapper}'")
    endif()
    configure_file(${PROJECT_SOURCE_DIR}/runtime/mpi/wrapper.sh.in ${out_dir}/${wrapper}
                   @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                   WORLD_READ WORLD_EXECUTE)
  endforeach()
endfunction()
