#pragma once
// Every header of the io layer includes this first: files (src/io) and sockets, TLS and framing (src/net).
// pxfer_io defines PXFER_LAYER_IO for itself and for every target that links it, so a header of
// this layer included from a lower layer (one that does not link pxfer_io) stops the build
// here. Layers link only downward (docs/architecture.md, src/CMakeLists.txt).
#ifndef PXFER_LAYER_IO
#error "a header of the io layer is included by a target that does not link pxfer_io: layers only reach downward (docs/architecture.md)"
#endif
