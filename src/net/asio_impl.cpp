// Asio's implementation, compiled once for the whole project (BOOST_ASIO_SEPARATE_COMPILATION):
// every other file includes only declarations, which keeps rebuilds short.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
