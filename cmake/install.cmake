# `cmake --install build --prefix P`: P/bin/kforge and P/share/kforge/{search_spaces,
# kernel_templates} (the specs name their templates by relative path, so the two folders keep
# their places side by side); the binary finds them as ../share/kforge from itself.
# `cpack -G DEB` (in the build folder) packs the same tree into a .deb for /usr.
include(GNUInstallDirs)
if(NOT CMAKE_INSTALL_DATADIR STREQUAL "share")
  message(FATAL_ERROR "kforge looks for its data in ../share/kforge beside its binary; keep CMAKE_INSTALL_DATADIR=share")
endif()
if(KFORGE_PREBUILT)
  install(PROGRAMS "${KFORGE_PREBUILT}" DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME kforge)
else()
  install(TARGETS kforge RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/search_spaces ${PROJECT_SOURCE_DIR}/kernel_templates
        DESTINATION ${CMAKE_INSTALL_DATADIR}/kforge)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        FILES_MATCHING PATTERN "*.md")

set(CPACK_PACKAGE_NAME kforge)
set(CPACK_PACKAGE_VENDOR kforge)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Autotuning and evolutionary search of CUDA kernel families")
set(CPACK_PACKAGE_CONTACT "kforge maintainers <kforge@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# The Debian libraries (SQLite, spdlog, fmt) come from dpkg-shlibdeps; NVRTC belongs to the
# CUDA toolkit, which has no single Debian package name across its installers, so it is
# searched as a private library and stated in the description instead.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CUDAToolkit_LIBRARY_DIR})
# The summary above is the synopsis line; this is the extended description under it.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Needs the CUDA toolkit (NVRTC and its headers) installed; it is not declared as a dependency.")
include(CPack)
