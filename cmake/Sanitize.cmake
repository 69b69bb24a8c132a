# -DPXFER_SANITIZE=ON: AddressSanitizer + UndefinedBehaviorSanitizer on every target (tools/test.sh
# builds this in its own directory, build-asan, and runs the unit tests and some e2e tests in it).
# Any UBSan report aborts, so a sanitizer finding fails the test that triggered it.
option(PXFER_SANITIZE "Build with -fsanitize=address,undefined" OFF)
if(PXFER_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
