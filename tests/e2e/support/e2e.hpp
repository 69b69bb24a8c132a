#pragma once
// Everything an end-to-end test needs: one include.
#include "support/files.hpp"
#include "support/net.hpp"
#include "support/output.hpp"
#include "support/process.hpp"
#include "support/served.hpp"
#include "support/temp_dir.hpp"
