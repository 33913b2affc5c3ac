# What `cmake --install` puts where, and the Debian package `cpack -G DEB` makes of it
# (scripts/make-deb.sh builds it from the `package` preset and checks it in a minimal Debian 12
# root). The scenarios and the GPU table are compiled into the binary; the scenario files are also
# installed as examples for writing your own (`paralens render --scenario FILE.json`).
include(GNUInstallDirs)

install(TARGETS paralens RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/packaging/paralens.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/paralens.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/assets/scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/paralens/scenarios
        FILES_MATCHING PATTERN "*.json")
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The man page, made from the binary's own --help and each command's (scripts/make-manpage.sh), so
# it says what this build does.
set(PARALENS_MANPAGE ${CMAKE_BINARY_DIR}/paralens.1.gz)
add_custom_command(OUTPUT ${PARALENS_MANPAGE}
                   COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/make-manpage.sh $<TARGET_FILE:paralens> ${PROJECT_VERSION} ${PARALENS_MANPAGE}
                   DEPENDS paralens ${PROJECT_SOURCE_DIR}/scripts/make-manpage.sh
                   COMMENT "Making the man page from paralens --help")
add_custom_target(paralens_manpage ALL DEPENDS ${PARALENS_MANPAGE})
install(FILES ${PARALENS_MANPAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

set(CPACK_PACKAGE_NAME paralens)
set(CPACK_PACKAGE_VENDOR "paralens")
set(CPACK_PACKAGE_CONTACT "paralens developers <paralens@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
    "paralens runs collective-communication workloads and pipeline schedules on a modelled cluster or on local processes, captures their timelines and shows per-device Gantt charts with bubbles, ring and tree flows and MFU beside the alpha-beta cost model's prediction. It opens saved traces (its own, Chrome/Perfetto JSON, PyTorch profiler traces, nccl-tests logs, Nsight Systems exports) and plans training runs. This package is built without CUDA, NCCL and CUPTI; the GPU backend needs a build from source with the CUDA toolkit.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/paralens/paralens")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON) # the libraries the binary links, as Debian names their packages
set(CPACK_DEBIAN_PACKAGE_DEPENDS "fonts-dejavu-core")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libegl-mesa0, openmpi-bin") # libegl-mesa0: render without a display (EGL)
set(CPACK_GENERATOR DEB)
include(CPack)
