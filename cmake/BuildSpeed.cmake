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

# A unity build of the libraries (CMake's UNITY_BUILD: their sources compiled in batches of
# `PXFER_UNITY_BATCH`), for builds from scratch: tools/test.sh's sanitizer build, CI's largest
# step (docs/security.md, "Build time in CI"). Each translation unit that includes Asio costs
# 15-40 s, mostly the same coroutine and handler templates instantiated and instrumented again in
# each; a batch does that once. Off by default: an incremental build recompiles a whole batch for
# one changed file. The test programs stay one file at a time (their helpers share names).
option(PXFER_UNITY "Compile the libraries' sources in batches (for builds from scratch)" OFF)
set(PXFER_UNITY_BATCH 8 CACHE STRING "Sources per batch when PXFER_UNITY is ON")

function(pxfer_unity target)
  if(PXFER_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${PXFER_UNITY_BATCH})
    # g++ takes a batch's own file for the "main file", so a coroutine of external linkage whose
    # frame holds a type from an anonymous namespace warns (-Wsubobject-linkage) there only.
    target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-subobject-linkage>)
  endif()
endfunction()
