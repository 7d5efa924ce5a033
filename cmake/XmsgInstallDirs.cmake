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
