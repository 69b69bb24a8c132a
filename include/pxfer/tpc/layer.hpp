#pragma once
// Every header of the tpc layer includes this first: third-party copy, above both the client and the server (src/tpc).
// pxfer_tpc defines PXFER_LAYER_TPC for itself and for every target that links it, so a header of
// this layer included from a lower layer (one that does not link pxfer_tpc) stops the build
// here. Layers link only downward (docs/architecture.md, src/CMakeLists.txt).
#ifndef PXFER_LAYER_TPC
#error "a header of the tpc layer is included by a target that does not link pxfer_tpc: layers only reach downward (docs/architecture.md)"
#endif
