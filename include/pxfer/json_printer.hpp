#pragma once
// --json: newline-delimited JSON events on stdout, the same numbers as the text lines
// (docs/json.md describes every field).
#include <cstdio>
#include <string>

#include "pxfer/client.hpp"
#include "pxfer/error.hpp"

namespace pxfer {

class JsonPrinter final : public ProgressListener {
 public:
  explicit JsonPrinter(std::FILE* out) : out_(out) {}
  void on_start(const TransferSummary& summary) override;
  void on_interval(const IntervalReport& report) override;
  void on_finish(const IntervalReport& report, const TransferSummary& summary) override;
  void on_warning(const std::string& text) override;
  void on_queued(unsigned position, unsigned active, unsigned queued) override;
  void on_error(const Error& error);

 private:
  void emit(const std::string& line);
  std::FILE* out_;
  Clock::time_point start_ = Clock::now();
};

// The JSON text of each event, for tests and for other printers.
std::string json_interval(const IntervalReport& report);
std::string json_summary(const IntervalReport& report, const TransferSummary& summary);

}  // namespace pxfer
