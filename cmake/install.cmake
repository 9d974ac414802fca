# `cmake --install`: the library, the public headers (include/convgrid/ only; src/ stays private)
# and a CMake package, so that another project can
#   find_package(convgrid REQUIRED)
#   target_link_libraries(app PRIVATE convgrid::convgrid)
# (examples/plan_and_run, docs/library.md). The package finds what the library links, its
# private dependencies included: a static library's users link those too.
include(CMakePackageConfigHelpers)
set(CONVGRID_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/convgrid)

install(TARGETS convgrid EXPORT convgridTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/convgrid DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp")
install(EXPORT convgridTargets NAMESPACE convgrid:: DESTINATION ${CONVGRID_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/convgridConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/convgridConfig.cmake
                              INSTALL_DESTINATION ${CONVGRID_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/convgridConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/convgridConfig.cmake ${PROJECT_BINARY_DIR}/convgridConfigVersion.cmake
        DESTINATION ${CONVGRID_INSTALL_CMAKEDIR})
