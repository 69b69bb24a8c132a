#pragma once
// Every header of the core layer includes this first: the pure core: wire codec, plans, checksums, meters, policies, the report page; no sockets, no files.
// pxfer_core defines PXFER_LAYER_CORE for itself and for every target that links it, so a header of
// this layer included from a lower layer (one that does not link pxfer_core) stops the build
// here. Layers link only downward (docs/architecture.md, src/CMakeLists.txt).
#ifndef PXFER_LAYER_CORE
#error "a header of the core layer is included by a target that does not link pxfer_core: layers only reach downward (docs/architecture.md)"
#endif
