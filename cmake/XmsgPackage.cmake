# The installed package (docs/install.md): included by the top-level CMakeLists.txt after every
# layer, once the targets in the export set xmsgTargets exist.
#   <libdir>/cmake/xmsg/       xmsgConfig.cmake, xmsgConfigVersion.cmake, xmsgTargets*.cmake:
#                              find_package(xmsg) -> xmsg::xmsg, xmsg::mpi, xmsg::xmsgrun
#   <libdir>/pkgconfig/        xmsg.pc, xmsg-mpi.pc
# Every file locates the prefix relative to itself (CMake's _IMPORT_PREFIX, pkg-config's
# ${pcfiledir}), so a moved prefix needs no edits.
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

install(EXPORT xmsgTargets NAMESPACE xmsg:: FILE xmsgTargets.cmake
        DESTINATION ${XMSG_INSTALL_CMAKEDIR} COMPONENT xmsg_devel)

set(XMSG_CONFIG_HAS_MPI OFF)
if(TARGET xmsg_mpi)
  set(XMSG_CONFIG_HAS_MPI ON)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/xmsgConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/xmsgConfig.cmake
  INSTALL_DESTINATION ${XMSG_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR XMSG_INSTALL_LIBEXECDIR)
# 0.x: a minor release may break the API, so 0.1 accepts 0.1.y only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/xmsgConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/xmsgConfig.cmake
              ${PROJECT_BINARY_DIR}/package/xmsgConfigVersion.cmake
        DESTINATION ${XMSG_INSTALL_CMAKEDIR} COMPONENT xmsg_devel)

# pkg-config: prefix=${pcfiledir}/<relative path from the .pc's directory to the prefix>.
xmsg_relative_install_path(XMSG_PC_TO_PREFIX ${XMSG_INSTALL_PKGCONFIGDIR} .)
xmsg_prefixed_install_dir(XMSG_PC_INCLUDEDIR INCLUDEDIR "\${prefix}")
xmsg_prefixed_install_dir(XMSG_PC_LIBDIR LIBDIR "\${prefix}")
set(_pc_files xmsg)
if(TARGET xmsg_mpi)
  list(APPEND _pc_files xmsg-mpi)
endif()
foreach(_pc IN LISTS _pc_files)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${_pc}.pc.in ${PROJECT_BINARY_DIR}/package/${_pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/package/${_pc}.pc
          DESTINATION ${XMSG_INSTALL_PKGCONFIGDIR} COMPONENT xmsg_devel)
endforeach()

install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/install.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT xmsg_devel)
