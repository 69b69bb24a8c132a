# Every dependency is a Debian 12 package (tools/deps.sh installs them).
find_package(Threads REQUIRED)
find_package(Boost 1.81 REQUIRED)
find_package(OpenSSL 3 REQUIRED)
find_package(spdlog REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(ZLIB REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(zstd REQUIRED)
# pxferd --config: a real TOML parser with line and column in its errors (libtomlplusplus-dev).
find_package(tomlplusplus 3 REQUIRED)
# pxferd under systemd: sd_notify (Type=notify) and the journal (libsystemd-dev, no CMake config).
find_package(PkgConfig REQUIRED)
pkg_check_modules(SYSTEMD REQUIRED IMPORTED_TARGET libsystemd)
# pxferd --x509: the VOMS attribute certificates of grid proxies (voms-dev, libvomsapi).
pkg_check_modules(VOMS REQUIRED IMPORTED_TARGET voms-2.0)
# pxferd --token-issuers: JWT signatures (libjwt-dev); the issuers file is TOML, read with the
# header-only toml++ (libtomlplusplus-dev: only its header, so no compile flags reach other files).
pkg_check_modules(JWT REQUIRED IMPORTED_TARGET libjwt)
find_path(TOMLPP_INCLUDE_DIR toml++/toml.h REQUIRED)

# ISA-L ships no CMake config; it gives a SIMD adler32 several times faster than zlib's.
find_path(ISAL_INCLUDE_DIR isa-l.h REQUIRED)
find_library(ISAL_LIBRARY isal REQUIRED)
add_library(pxfer_isal INTERFACE)
target_include_directories(pxfer_isal INTERFACE ${ISAL_INCLUDE_DIR})
target_link_libraries(pxfer_isal INTERFACE ${ISAL_LIBRARY})

# Asio is compiled once (src/net/asio_impl.cpp) instead of in every translation unit.
add_library(pxfer_asio INTERFACE)
target_compile_definitions(pxfer_asio INTERFACE
  BOOST_ASIO_SEPARATE_COMPILATION BOOST_ASIO_NO_DEPRECATED BOOST_ASIO_DISABLE_BOOST_REGEX)
target_link_libraries(pxfer_asio INTERFACE Boost::boost Threads::Threads OpenSSL::SSL OpenSSL::Crypto)

if(PXFER_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(PXFER_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
