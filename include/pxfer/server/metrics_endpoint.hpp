#pragma once
// A small HTTP endpoint for Prometheus (pxferd --metrics-listen): GET /metrics answers with what
// `render` returns, anything else 404. One thread of its own serving up to
// limits::metrics_connections scrapers at once, each with limits::metrics_request_deadline for its
// whole request and answer: a slow scraper delays no other, and nothing here slows the transfers.
// Boost.Beast, already on every build machine with Boost; prometheus-cpp is not packaged in Debian 12.
#include "pxfer/server/layer.hpp"
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "pxfer/common/url.hpp"

namespace pxfer {

class MetricsEndpoint {
 public:
  // Binds `listen` (throws Error(network) when it cannot) and starts serving.
  MetricsEndpoint(const Endpoint& listen, std::function<std::string()> render);
  ~MetricsEndpoint();  // stops and joins
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;
  std::string address() const;  // "127.0.0.1:9752", the bound port with port 0

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pxfer
