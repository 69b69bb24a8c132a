#pragma once
// Every header of the common layer includes this first: errors, units, URLs, log escaping: what every other layer uses.
// pxfer_common defines PXFER_LAYER_COMMON for itself and for every target that links it, so a header of
// this layer included from a lower layer (one that does not link pxfer_common) stops the build
// here. Layers link only downward (docs/architecture.md, src/CMakeLists.txt).
#ifndef PXFER_LAYER_COMMON
#error "a header of the common layer is included by a target that does not link pxfer_common: layers only reach downward (docs/architecture.md)"
#endif
