# Debian's hardening flags (dpkg-buildflags with hardening=+all, as a Debian package is built):
# fortified libc calls, stack protector, read-only relocations bound at start, position-independent
# executables. On by default; tests/package/deb_test.sh checks the packaged binaries with
# hardening-check. The sanitizer build turns it off (ASan and _FORTIFY_SOURCE do not mix).
option(PXFER_HARDENING "Build with Debian's hardening flags (FORTIFY_SOURCE, stack protector, relro/now, PIE)" ON)
if(PXFER_HARDENING AND NOT PXFER_SANITIZE)
  include(CheckPIESupported)
  check_pie_supported(LANGUAGES CXX)
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  # -U first: a compiler or a CXXFLAGS that already defines it would make -D a redefinition.
  add_compile_options(-U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fstack-clash-protection)
  add_link_options(-Wl,-z,relro -Wl,-z,now)
endif()
