#pragma once
// Every header of the server layer includes this first: pxferd: control sessions, auth, admission, transfers, metrics (src/server).
// pxfer_server defines PXFER_LAYER_SERVER for itself and for every target that links it, so a header of
// this layer included from a lower layer (one that does not link pxfer_server) stops the build
// here. Layers link only downward (docs/architecture.md, src/CMakeLists.txt).
#ifndef PXFER_LAYER_SERVER
#error "a header of the server layer is included by a target that does not link pxfer_server: layers only reach downward (docs/architecture.md)"
#endif
