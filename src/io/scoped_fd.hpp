#pragma once
// Owns a file descriptor for the length of a scope (the io layer's walks and namespace work open
// directories by descriptor, never by path, and close them on every way out).
#include "pxfer/io/layer.hpp"
#include <unistd.h>

namespace pxfer {

struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace pxfer
