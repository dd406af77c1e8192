# cmake --install: the library, its public headers, the vkfuse CLI, a CMake package
# (find_package(vkfuse) -> vkfuse::vkfuse) and vkfuse.pc. The kernels' GLSL is embedded in the
# library, so nothing else is needed at run time.
include(CMakePackageConfigHelpers)

install(TARGETS vkfuse_shared vkfuse_static EXPORT vkfuseTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/host/include/vkfuse DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET vkfuse_cli)
  install(TARGETS vkfuse_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(vkfuse_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/vkfuse)
install(EXPORT vkfuseTargets NAMESPACE vkfuse:: DESTINATION ${vkfuse_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/vkfuseConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/vkfuseConfig.cmake INSTALL_DESTINATION ${vkfuse_cmake_dir})
# 0.x: a minor release may break the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/vkfuseConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/vkfuseConfig.cmake ${PROJECT_BINARY_DIR}/vkfuseConfigVersion.cmake
        DESTINATION ${vkfuse_cmake_dir})

# pkg-config: `pkg-config --libs vkfuse` gives the shared library; --static adds what libvkfuse.a
# was linked against.
# Relocatable: the prefix is found from the .pc file's own folder, so `cmake --install --prefix` works.
string(REGEX REPLACE "[^/]+" ".." VKFUSE_PC_UP "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
configure_file(${PROJECT_SOURCE_DIR}/cmake/vkfuse.pc.in ${PROJECT_BINARY_DIR}/vkfuse.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/vkfuse.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
