# cpack -G DEB (in the build directory): pxfer_VERSION_ARCH.deb with pxfer, pxferd, the systemd
# unit, the pxferd system user, /etc/pxferd, man pages and completions (cmake/Install.cmake).
# Dependencies come from dpkg-shlibdeps (package dpkg-dev); tests/package/deb_test.sh checks it.
set(CPACK_PACKAGE_NAME pxfer)
set(CPACK_PACKAGE_VENDOR "pxfer developers")
set(CPACK_PACKAGE_CONTACT "pxfer developers <pxfer@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "parallel-stream file transfer: client pxfer and server pxferd")
# Lines of at most 80 characters (lintian: extended-description-line-too-long).
set(CPACK_PACKAGE_DESCRIPTION "pxfer moves files between hosts over N parallel TCP streams with TLS 1.3\n\
control connections, resume and whole-file checksums; pxferd serves an export\n\
directory (systemd unit pxferd.service, configuration in\n\
/etc/pxferd/pxferd.toml).\n\
.\n\
Purging the package removes /etc/pxferd and /var/lib/pxferd, and on purpose\n\
leaves the data alone: the export root /srv/pxfer, the logs in /var/log/pxferd\n\
and the pxferd user (files of the export root may belong to it).")
# The unit names ${CMAKE_INSTALL_PREFIX}/sbin/pxferd, so the package uses the same prefix: /usr
# (cmake/Install.cmake's default for a new build directory).
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  message(WARNING "CMAKE_INSTALL_PREFIX is ${CMAKE_INSTALL_PREFIX}: a Debian package should install under /usr "
                  "(reconfigure with -DCMAKE_INSTALL_PREFIX=/usr before cpack -G DEB)")
endif()
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # pxfer_0.2.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.org/pxfer")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# systemd-sysusers creates the user (adduser when systemd is absent, e.g. in a container): the
# maintainer scripts call adduser, so it is a dependency (dpkg-shlibdeps adds the libraries).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "systemd")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion")
file(WRITE ${PROJECT_BINARY_DIR}/packaging/conffiles "/etc/logrotate.d/pxferd\n/etc/pxferd/pxferd.toml\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_BINARY_DIR}/packaging/conffiles
    ${PROJECT_SOURCE_DIR}/packaging/debian/postinst
    ${PROJECT_SOURCE_DIR}/packaging/debian/prerm
    ${PROJECT_SOURCE_DIR}/packaging/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)  # debug symbols stay in the build tree
set(CPACK_PACKAGE_CHECKSUM SHA256)
include(CPack)
