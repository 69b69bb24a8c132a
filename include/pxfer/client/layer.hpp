#pragma once
// Every header of the client layer includes this first: the client: sessions, batches, namespace operations (src/client).
// pxfer_client defines PXFER_LAYER_CLIENT for itself and for every target that links it, so a header of
// this layer included from a lower layer (one that does not link pxfer_client) stops the build
// here. Layers link only downward (docs/architecture.md, src/CMakeLists.txt).
#ifndef PXFER_LAYER_CLIENT
#error "a header of the client layer is included by a target that does not link pxfer_client: layers only reach downward (docs/architecture.md)"
#endif
