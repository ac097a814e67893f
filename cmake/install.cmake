include(CMakePackageConfigHelpers)

# mainboard::spans: what an instrumented program links (C and C++ runtime only).
# mainboard::mainboard: everything, over mainboard::spans.
# mainboard::instrument: the -finstrument-functions hooks; link it next to either.
install(TARGETS mainboard_spans mainboard_library mainboard mainboard_instrument
        EXPORT mainboardTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/mainboard
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(MAINBOARD_BUILD_CLI)
  install(TARGETS mainboard_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(TARGETS mainboard_inject LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()

set(MAINBOARD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/mainboard)
install(EXPORT mainboardTargets NAMESPACE mainboard:: DESTINATION ${MAINBOARD_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mainboardConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/mainboardConfig.cmake
                              INSTALL_DESTINATION ${MAINBOARD_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mainboardConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mainboardConfig.cmake
              ${PROJECT_BINARY_DIR}/mainboardConfigVersion.cmake
        DESTINATION ${MAINBOARD_CMAKE_DIR})
