#include "serve/server.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <string_view>
#include <thread>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <civetweb.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/text.hpp"
#include "mainboard/error.hpp"
#include "serve/metrics.hpp"

namespace mainboard::serve {

std::string listening_port(const std::string& listen) {
  auto colon = listen.rfind(':');
  auto bad = [&](const std::string& why) {
    return Error(
        fmt::format("--listen {}: {} (give ADDR:PORT, e.g. 127.0.0.1:9471, "
                    "0.0.0.0:9471, [::1]:9471)",
                    listen, why));
  };
  if (colon == std::string::npos) throw bad("no port");
  std::string host = listen.substr(0, colon);
  std::string port = listen.substr(colon + 1);
  auto number = core::parse_u64(port);
  if (!number || *number > 65535) throw bad("the port is not a number from 0 to 65535");
  if (host.empty()) return std::to_string(*number);  // every interface
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') throw bad("an IPv6 address goes in brackets");
    return host + ":" + std::to_string(*number);
  }
  if (host.find(':') != std::string::npos) throw bad("an IPv6 address goes in brackets");
  if (host == "localhost") host = "127.0.0.1";
  return host + ":" + std::to_string(*number);
}

/// A reading and its families as text, rendered once per format for every scrape it serves.
struct Taken {
  explicit Taken(Reading r) : reading(std::move(r)) {}
  Reading reading;
  const std::string& families(Format format) const {
    auto i = static_cast<std::size_t>(format);
    std::call_once(rendered[i], [&] {
      Exposition e;
      expose(reading, e);
      text[i] = e.text(format, false);
    });
    return text[i];
  }

 private:
  mutable std::once_flag rendered[2];
  mutable std::string text[2];
};

struct MetricsServer::Impl {
  const Machine& machine;
  ServerOptions options;
  std::string host;
  mg_context* ctx = nullptr;
  int port = 0;

  // One reading at a time; scrapes within the minimum interval, or while one is being taken,
  // share it.
  std::mutex mu;
  std::condition_variable cv;
  bool reading_now = false;
  std::uint64_t generation = 0;
  std::shared_ptr<const Taken> last;
  std::chrono::steady_clock::time_point last_at;
  std::uint64_t readings = 0;
  std::atomic<std::uint64_t> scrapes{0};

  Impl(const Machine& m, const ServerOptions& o) : machine(m), options(o) {}

  std::shared_ptr<const Taken> current(std::chrono::steady_clock::time_point& taken_at) {
    using clock = std::chrono::steady_clock;
    auto min = std::chrono::duration<double>(options.min_interval_s);
    std::unique_lock lock(mu);
    auto fresh = [&] { return last && clock::now() - last_at < min; };
    while (true) {
      if (fresh()) break;
      if (!reading_now) {
        reading_now = true;
        lock.unlock();
        std::shared_ptr<const Taken> r;
        std::exception_ptr failed;
        try {
          r = std::make_shared<const Taken>(read(machine));
        } catch (...) {
          failed = std::current_exception();
        }
        lock.lock();
        reading_now = false;
        ++generation;
        if (r) {
          last = r;
          last_at = clock::now();
          ++readings;
        }
        cv.notify_all();
        if (failed) std::rethrow_exception(failed);
        break;
      }
      // Another scrape is reading now: this one serves what it reads.
      auto waiting_for = generation;
      cv.wait(lock, [&] { return generation != waiting_for; });
      if (last) break;
    }
    taken_at = last_at;
    return last;
  }

  std::uint64_t readings_taken() {
    std::lock_guard lock(mu);
    return readings;
  }
};

namespace {

void respond(mg_connection* conn, int status, const char* type, std::string_view body,
             bool head = false, const char* allow = nullptr) {
  mg_response_header_start(conn, status);
  mg_response_header_add(conn, "Content-Type", type, -1);
  auto length = std::to_string(body.size());
  mg_response_header_add(conn, "Content-Length", length.c_str(), -1);
  mg_response_header_add(conn, "Cache-Control", "no-store", -1);
  if (allow) mg_response_header_add(conn, "Allow", allow, -1);
  mg_response_header_send(conn);
  if (!head && !body.empty()) mg_write(conn, body.data(), body.size());
}

/// GET and HEAD only; anything else is 405. A request that carries a body larger than the
/// limit is 413 (the headers' own limit is civetweb's).
bool method_allowed(mg_connection* conn, const ServerOptions& options, bool& head) {
  const mg_request_info* info = mg_get_request_info(conn);
  std::string_view method = info->request_method ? info->request_method : "";
  head = method == "HEAD";
  if (method != "GET" && !head) {
    respond(conn, 405, "text/plain; charset=utf-8",
            fmt::format("{} is not served here: GET /metrics or GET /healthz\n", method), false,
            "GET, HEAD");
    return false;
  }
  if (info->content_length > static_cast<long long>(options.max_request_bytes)) {
    respond(conn, 413, "text/plain; charset=utf-8", "request body too large\n");
    return false;
  }
  return true;
}

int metrics_handler(mg_connection* conn, void* data) {
  auto& self = *static_cast<MetricsServer::Impl*>(data);
  bool head = false;
  if (!method_allowed(conn, self.options, head)) return 405;
  const char* accept = mg_get_header(conn, "Accept");
  Format format = negotiate(accept ? accept : "");
  try {
    std::chrono::steady_clock::time_point taken_at;
    auto taken = self.current(taken_at);
    Exposition e;
    ExporterStats stats;
    stats.scrapes = ++self.scrapes;
    stats.readings = self.readings_taken();
    stats.reading_age_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - taken_at).count();
    expose(stats, e);
    respond(conn, 200, content_type(format), taken->families(format) + e.text(format), head);
    return 200;
  } catch (const std::exception& ex) {
    spdlog::warn("serve: reading failed: {}", ex.what());
    respond(conn, 500, "text/plain; charset=utf-8", fmt::format("reading failed: {}\n", ex.what()));
    return 500;
  }
}

int healthz_handler(mg_connection* conn, void* data) {
  auto& self = *static_cast<MetricsServer::Impl*>(data);
  bool head = false;
  if (!method_allowed(conn, self.options, head)) return 405;
  respond(conn, 200, "text/plain; charset=utf-8", "ok\n", head);
  return 200;
}

int not_found_handler(mg_connection* conn, void* data) {
  auto& self = *static_cast<MetricsServer::Impl*>(data);
  bool head = false;
  if (!method_allowed(conn, self.options, head)) return 405;
  respond(conn, 404, "text/plain; charset=utf-8",
          "not found: this server has /metrics and /healthz\n", head);
  return 404;
}

int log_message(const mg_connection*, const char* message) {
  spdlog::debug("serve: {}", message);
  return 1;  // logged here, not on civetweb's stderr
}

}  // namespace

MetricsServer::MetricsServer(const Machine& machine, const ServerOptions& options)
    : impl_(std::make_unique<Impl>(machine, options)) {
  std::string ports = listening_port(options.listen);
  impl_->host = options.listen.substr(0, options.listen.rfind(':'));
  if (impl_->host.empty()) impl_->host = "0.0.0.0";
  std::string threads = std::to_string(options.threads);
  std::string timeout = std::to_string(options.request_timeout_ms);
  std::string max_request = std::to_string(options.max_request_bytes);
  const char* config[] = {"listening_ports", ports.c_str(), "num_threads", threads.c_str(),
                          "request_timeout_ms", timeout.c_str(), "max_request_size",
                          max_request.c_str(),
                          // One request per connection: a kept-alive connection holds one of the
                          // worker threads, so a few busy clients would starve the rest; a
                          // scraper every few seconds reconnects anyway (civetweb closes idle
                          // connections after 0.5 s).
                          "enable_keep_alive", "no", "connection_queue", "64",
                          // headers and body leave together: no wait on the client's delayed ACK
                          "tcp_nodelay", "1", nullptr};
  static std::once_flag library;
  std::call_once(library, [] { mg_init_library(0); });
  mg_callbacks callbacks{};
  callbacks.log_message = log_message;
  mg_init_data init{};
  init.callbacks = &callbacks;
  init.user_data = impl_.get();
  init.configuration_options = config;
  char text[256] = {};
  unsigned code = 0;
  mg_error_data error{};
  error.code = &code;
  error.text = text;
  error.text_buffer_size = sizeof text;
  impl_->ctx = mg_start2(&init, &error);
  if (!impl_->ctx)
    throw Error(fmt::format("serve: cannot listen on {}: {}", options.listen,
                            text[0] ? text : "civetweb could not start"));
  mg_set_request_handler(impl_->ctx, "/metrics$", metrics_handler, impl_.get());
  mg_set_request_handler(impl_->ctx, "/healthz$", healthz_handler, impl_.get());
  mg_set_request_handler(impl_->ctx, "/", not_found_handler, impl_.get());
  mg_server_port bound[4] = {};
  int n = mg_get_server_ports(impl_->ctx, 4, bound);
  impl_->port = n > 0 ? bound[0].port : 0;
}

namespace {

/// Opens and closes one connection to the server, which wakes civetweb's listening thread from
/// its poll (a two-second quantum) so that a stop takes milliseconds.
void knock(const std::string& host, int port) {
  std::string address = host;
  if (address.size() > 2 && address.front() == '[') address = address.substr(1, address.size() - 2);
  if (address.empty() || address == "0.0.0.0") address = "127.0.0.1";
  if (address == "::") address = "::1";
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return;
  int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    (void)::connect(fd, found->ai_addr, found->ai_addrlen);
    ::close(fd);
  }
  ::freeaddrinfo(found);
}

}  // namespace

MetricsServer::~MetricsServer() {
  if (!impl_ || !impl_->ctx) return;
  std::thread waker([host = impl_->host, port = impl_->port] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    knock(host, port);
  });
  mg_stop(impl_->ctx);
  waker.join();
}

int MetricsServer::port() const {
  return impl_->port;
}

std::string MetricsServer::host() const {
  return impl_->host;
}

}  // namespace mainboard::serve
