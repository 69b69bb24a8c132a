# Build time, not run time: tools/test.sh builds everything twice (Release, then ASan+UBSan) on a
# CI machine of 2 cores within a 30-minute budget. Measured with a clean `ninja -j2` of every
# target (docs/security.md, "Build time in CI"):
# - Precompiled headers. The Asio, spdlog and GoogleTest headers cost about 2.5 s of parsing in
#   each translation unit that includes them: every test file and most of src/ and tools/.
# - The test programs' own code at -O1 in Release: their translation units are test bodies and
#   gtest's macros, which -O3 spends 40-50 % more time on (tests/e2e/auto_test.cpp 9.6 s against 6.8) without making any test meaningfully
#   faster. What the tests exercise (libpxfer, pxfer, pxferd) stays at -O3.
option(PXFER_PCH "Precompile the heavy third-party headers" ON)

set(PXFER_PCH_NET
  <boost/asio/as_tuple.hpp> <boost/asio/co_spawn.hpp> <boost/asio/detached.hpp>
  <boost/asio/io_context.hpp> <boost/asio/ip/tcp.hpp> <boost/asio/steady_timer.hpp>
  <boost/asio/strand.hpp> <boost/asio/use_awaitable.hpp> <spdlog/spdlog.h>
  <functional> <map> <memory> <optional> <string> <variant> <vector>)

function(pxfer_precompile target)
  if(PXFER_PCH)
    target_precompile_headers(${target} PRIVATE ${PXFER_PCH_NET} ${ARGN})
  endif()
endfunction()

function(pxfer_test_program target)
  pxfer_precompile(${target} <gtest/gtest.h> ${ARGN})
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-O1>)
endfunction()
