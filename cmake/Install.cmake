# What `cmake --install build` and the Debian package (cmake/Packaging.cmake) put where. The
# prefix defaults to /usr, as for a distribution package; -DCMAKE_INSTALL_PREFIX=/usr/local for a
# hand install (the unit file then points at /usr/local/sbin/pxferd).
if(CMAKE_INSTALL_PREFIX_INITIALIZED_TO_DEFAULT)
  set(CMAKE_INSTALL_PREFIX /usr CACHE PATH "Install prefix" FORCE)
endif()
include(GNUInstallDirs)
set(PXFER_SBINDIR ${CMAKE_INSTALL_FULL_SBINDIR})

install(TARGETS pxfer-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})   # /usr/bin/pxfer: every user
install(TARGETS pxferd RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR})     # /usr/sbin/pxferd: a daemon

# systemd: the unit, the system user, and nothing started by installing (systemctl enable --now pxferd).
configure_file(${PROJECT_SOURCE_DIR}/packaging/pxferd.service.in ${PROJECT_BINARY_DIR}/packaging/pxferd.service @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/packaging/pxferd.service DESTINATION lib/systemd/system)
install(FILES packaging/pxferd.sysusers DESTINATION lib/sysusers.d RENAME pxferd.conf)

# /etc/pxferd: 0750 (postinst makes it root:pxferd: the group does not exist when files unpack).
install(DIRECTORY DESTINATION /etc/pxferd
        DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE)
install(FILES packaging/pxferd.toml DESTINATION /etc/pxferd PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ)

install(FILES packaging/completion/pxfer.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME pxfer)
install(FILES packaging/completion/pxfer.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME pxferd)
install(FILES packaging/completion/_pxfer DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES README.md docs/guide.md docs/security.md docs/operations.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

# What Debian policy asks of every package (lintian): the copyright file, the changelog (gzip -9n,
# so the package is reproducible), the overrides of the two permissions that are meant, and a
# logrotate snippet for --log-file.
configure_file(${PROJECT_SOURCE_DIR}/packaging/debian/changelog.in ${PROJECT_BINARY_DIR}/packaging/changelog @ONLY)
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/packaging/changelog.gz
  COMMAND gzip -9nc ${PROJECT_BINARY_DIR}/packaging/changelog > ${PROJECT_BINARY_DIR}/packaging/changelog.gz
  DEPENDS ${PROJECT_BINARY_DIR}/packaging/changelog VERBATIM)
add_custom_target(pxfer-changelog ALL DEPENDS ${PROJECT_BINARY_DIR}/packaging/changelog.gz)
install(FILES ${PROJECT_BINARY_DIR}/packaging/changelog.gz packaging/debian/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES packaging/debian/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME pxfer)
install(FILES packaging/pxferd.logrotate DESTINATION /etc/logrotate.d RENAME pxferd)

# Man pages from the binaries' own --help and --version (help2man), so they cannot drift.
find_program(HELP2MAN help2man)
if(HELP2MAN)
  set(man_dir ${PROJECT_BINARY_DIR}/man)
  # One page per subcommand too (pxfer-cp.1 ...): man.sh takes their list from `pxfer --help`,
  # so the stamp stands for them all and the install takes whatever pages it made.
  add_custom_command(OUTPUT ${man_dir}/man.stamp
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${man_dir}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${man_dir}
    COMMAND sh ${PROJECT_SOURCE_DIR}/packaging/man.sh ${HELP2MAN} $<TARGET_FILE:pxfer-cli> $<TARGET_FILE:pxferd> ${man_dir}
    COMMAND ${CMAKE_COMMAND} -E touch ${man_dir}/man.stamp
    DEPENDS pxfer-cli pxferd ${PROJECT_SOURCE_DIR}/packaging/man.sh
    COMMENT "man pages pxfer(1), pxfer-COMMAND(1) and pxferd(8) from --help" VERBATIM)
  add_custom_target(pxfer-man ALL DEPENDS ${man_dir}/man.stamp)
  install(DIRECTORY ${man_dir}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 FILES_MATCHING PATTERN "pxfer*.1.gz"
          PATTERN wrap EXCLUDE)
  install(FILES ${man_dir}/pxferd.8.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)
else()
  message(WARNING "help2man not found (apt-get install help2man, or tools/deps.sh): no man pages are built or installed")
endif()
