#pragma once
// Every header of the present layer includes this first: the printers of those events: progress lines, JSON, batch lines, report recording.
// pxfer_present defines PXFER_LAYER_PRESENT for itself and for every target that links it, so a header of
// this layer included from a lower layer (one that does not link pxfer_present) stops the build
// here. Layers link only downward (docs/architecture.md, src/CMakeLists.txt).
#ifndef PXFER_LAYER_PRESENT
#error "a header of the present layer is included by a target that does not link pxfer_present: layers only reach downward (docs/architecture.md)"
#endif
