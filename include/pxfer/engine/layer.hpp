#pragma once
// Every header of the engine layer includes this first: one transfer in either direction over N streams (src/transfer) and the events it reports.
// pxfer_engine defines PXFER_LAYER_ENGINE for itself and for every target that links it, so a header of
// this layer included from a lower layer (one that does not link pxfer_engine) stops the build
// here. Layers link only downward (docs/architecture.md, src/CMakeLists.txt).
#ifndef PXFER_LAYER_ENGINE
#error "a header of the engine layer is included by a target that does not link pxfer_engine: layers only reach downward (docs/architecture.md)"
#endif
