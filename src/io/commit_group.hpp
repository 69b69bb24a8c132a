#pragma once
// Many small files made durable together (issue 12.3, "group the durability work"). A file alone
// costs fdatasync + rename + fsync of its directory, and on a journalling file system each fsync
// is a journal commit of its own: grouped, a 10,000-file put -r into ext4 here took a third less
// time (docs/performance.md section 15). A group keeps the same order for every file (its
// data durable before it takes its final name, the name durable before the file is reported done)
// but pays for the journal and each directory once per group:
//   add():     the bytes are written and verified; their write-back starts now (sync_file_range);
//   commit():  fdatasync each file (the first commits the journal for all; the rest mostly find
//              their data written), rename each onto its final name, fsync each directory once.
// A partial file never appears under its final name, and nothing is reported done before its
// name is durable. A group dropped without commit() removes its temporaries, as a FileSink does.
#include "pxfer/io/layer.hpp"
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "pxfer/common/error.hpp"
#include "io/file_io.hpp"

namespace pxfer {

class CommitGroup {
 public:
  // What became of one file of the group, in the order the files were added.
  struct Outcome {
    std::unique_ptr<FileSink> sink;  // placed() and path() stay readable
    std::optional<Error> error;      // none: durable under its final name
  };

  void add(std::unique_ptr<FileSink> sink);
  std::size_t size() const { return sinks_.size(); }
  bool empty() const { return sinks_.empty(); }
  // Commits every file added since the last commit; one file's failure (its final name taken
  // meanwhile, a full disk) fails that file alone.
  std::vector<Outcome> commit();

 private:
  std::vector<std::unique_ptr<FileSink>> sinks_;
};

}  // namespace pxfer
