# One version source: PROJECT_VERSION (CMakeLists.txt) and the git revision.
#   build/generated/pxfer/version.hpp  configure time: PXFER_VERSION, the hello agents
#   build/generated/revision.cpp       every build (cmake/Revision.cmake), only rewritten when the
#                                      revision changed: a commit relinks the binaries, it does not
#                                      recompile the files that include version.hpp.
configure_file(${PROJECT_SOURCE_DIR}/cmake/version.hpp.in ${PROJECT_BINARY_DIR}/generated/pxfer/version.hpp @ONLY)
set(PXFER_REVISION_CPP ${PROJECT_BINARY_DIR}/generated/revision.cpp)
add_custom_target(pxfer_revision
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUTPUT=${PXFER_REVISION_CPP}
          -P ${PROJECT_SOURCE_DIR}/cmake/Revision.cmake
  BYPRODUCTS ${PXFER_REVISION_CPP}
  VERBATIM)
add_library(pxfer_version STATIC ${PXFER_REVISION_CPP})
add_dependencies(pxfer_version pxfer_revision)
target_include_directories(pxfer_version PUBLIC ${PROJECT_BINARY_DIR}/generated)
