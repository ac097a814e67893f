#pragma once
// `mainboard serve`: /metrics for Prometheus and /healthz over HTTP (libmicrohttpd, in event
// loops), each scrape answered from a fresh reading, never more than one reading per minimum
// interval.

#include <memory>
#include <string>

namespace mainboard {
class Machine;
}

namespace mainboard::serve {

struct ServerOptions {
  std::string listen = "127.0.0.1:9471";  ///< ADDR:PORT; port 0 picks a free one
  double min_interval_s = 1.0;            ///< scrapes closer together share one reading
  int threads = 8;                        ///< event loops (each watches many connections)
  /// A connection whose request headers are not all in this long after it connected (or after
  /// its previous answer) is closed, whether it is silent or trickling (whole seconds).
  int request_timeout_ms = 5000;
  std::size_t max_request_bytes = 16384;  ///< a larger request body is refused (413)
  /// Open at once. Near it, the connection that has been sending its request longest is closed
  /// for a newcomer; one address holds at most an eighth (at least 16).
  int max_connections = 4096;
};

/// The ADDR:PORT a user gave, checked and normalised ("HOST:PORT"); throws Error (a usage
/// error) when it is not "HOST:PORT", "[IPV6]:PORT" or ":PORT".
std::string listening_port(const std::string& listen);

class MetricsServer {
 public:
  /// Binds and starts serving; throws Error when the address cannot be bound.
  MetricsServer(const Machine& machine, const ServerOptions& options);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const;          ///< the port bound (the one picked, for port 0)
  std::string host() const;  ///< the address bound, as given

  struct Impl;  // defined in server.cpp only

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace mainboard::serve
