#pragma once
// pxferd --emulate-disk-rate: one token bucket for every file write of the process, the puts it
// receives and the writes of a third-party pull it makes as a client of another server (both go
// through FileSink). Unset in every other process (the pxfer client, the gfal2 plugin).
#include "pxfer/io/layer.hpp"
#include "pxfer/core/rate_pacer.hpp"

namespace pxfer {

// Sets the rate in bytes per second (0: writes go unpaced again). The pacer lives as long as the
// process: a sink that took it never holds a dangling pointer.
void set_emulated_disk_rate(double bytes_per_second);
// The process's pacer, nullptr when none was set.
RatePacer* emulated_disk() noexcept;

}  // namespace pxfer
