# One place for the warning set, applied per target so that third-party code is not affected.
add_library(pxfer_warnings INTERFACE)
target_compile_options(pxfer_warnings INTERFACE -Wall -Wextra -Wshadow=local -Wnon-virtual-dtor
  # g++ 12 reports Asio's coroutine frame allocator (aligned_new/aligned_delete pairs it cannot
  # see through) as mismatched; the pairing is correct, the warning is a known false positive.
  -Wno-mismatched-new-delete)
