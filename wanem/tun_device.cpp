#include "tun_device.hpp"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>

#include "errors.hpp"

namespace wanem {

FileDescriptor open_tun_device(const std::string& name) {
  FileDescriptor fd(::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    throw SetupError(std::string("cannot open /dev/net/tun: ") + std::strerror(errno) +
                     " (run as root on a kernel with TUN support: modprobe tun)");
  }
  ifreq request{};
  request.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::strncpy(request.ifr_name, name.c_str(), IFNAMSIZ - 1);
  if (::ioctl(fd.get(), TUNSETIFF, &request) != 0) {
    throw SetupError("cannot create TUN device " + name + ": " + std::strerror(errno) +
                     " (needs root / CAP_NET_ADMIN)");
  }
  return fd;
}

}  // namespace wanem
