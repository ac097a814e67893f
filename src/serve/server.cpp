#include "serve/server.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <string_view>
#include <thread>

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "core/dynamic_library.hpp"
#include "core/text.hpp"
#include "mainboard/error.hpp"
#include "serve/metrics.hpp"

namespace mainboard::serve {

namespace {

// libmicrohttpd, loaded when a server starts instead of linked: it brings GnuTLS and eight more
// libraries (about 5 ms of every other command's start-up) that nothing but `serve` uses.
// clang-format off
#define MAINBOARD_MHD_FUNCTIONS(X)                                                              \
  X(MHD_start_daemon) X(MHD_stop_daemon) X(MHD_create_response_from_buffer)                     \
  X(MHD_create_response_from_iovec) X(MHD_add_response_header) X(MHD_queue_response)            \
  X(MHD_destroy_response) X(MHD_lookup_connection_value)
// clang-format on

struct Microhttpd {
  MAINBOARD_MHD_FUNCTIONS(MAINBOARD_FUNCTION_SLOT)
  std::string error;  // why it cannot be used; empty when every function was found
  core::DynamicLibrary file;
};

const Microhttpd& mhd() {
  // Never closed: a connection may still be served while the process ends.
  static const Microhttpd& table = *[] {
    auto* t = new Microhttpd;
    std::string error;
    t->file = core::DynamicLibrary::open({"libmicrohttpd.so.12"}, &error);
    if (!t->file) {
      t->error = "libmicrohttpd.so.12 not loaded (" + error + ")";
      return t;
    }
    std::string missing;
#define MAINBOARD_BIND_MHD(name) core::bind_function(t->file, t->name, #name, missing);
    MAINBOARD_MHD_FUNCTIONS(MAINBOARD_BIND_MHD)
#undef MAINBOARD_BIND_MHD
    if (!missing.empty()) t->error = t->file.path() + " lacks " + missing;
    return t;
  }();
  return table;
}

}  // namespace

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
  explicit Taken(Scrape r) : reading(std::move(r)) {}
  Scrape reading;
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
  MHD_Daemon* daemon = nullptr;
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

/// The response to one request: MHD copies the body, so it lives only for this call.
MHD_Result respond(MHD_Connection* conn, unsigned status, const char* type, std::string_view body,
                   const char* allow = nullptr) {
  MHD_Response* r = mhd().MHD_create_response_from_buffer(
      body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  if (!r) return MHD_NO;
  mhd().MHD_add_response_header(r, "Content-Type", type);
  mhd().MHD_add_response_header(r, "Cache-Control", "no-store");
  if (allow) mhd().MHD_add_response_header(r, "Allow", allow);
  MHD_Result ok = mhd().MHD_queue_response(conn, status, r);
  mhd().MHD_destroy_response(r);
  return ok;
}

constexpr const char* kText = "text/plain; charset=utf-8";

/// A scrape's body without a copy of the families (a few hundred KiB for eight GPUs): the
/// response points into the shared reading, held until MHD has sent it, then its own few lines.
MHD_Result respond_metrics(MHD_Connection* conn, const char* type,
                           std::shared_ptr<const Taken> taken, Format format, std::string tail) {
  struct Held {
    std::shared_ptr<const Taken> taken;
    std::string tail;
  };
  auto* held = new Held{std::move(taken), std::move(tail)};
  const std::string& families = held->taken->families(format);
  MHD_IoVec parts[2] = {{families.data(), families.size()}, {held->tail.data(), held->tail.size()}};
  MHD_Response* r = mhd().MHD_create_response_from_iovec(
      parts, 2, [](void* cls) { delete static_cast<Held*>(cls); }, held);
  if (!r) {
    delete held;
    return MHD_NO;
  }
  mhd().MHD_add_response_header(r, "Content-Type", type);
  mhd().MHD_add_response_header(r, "Cache-Control", "no-store");
  MHD_Result ok = mhd().MHD_queue_response(conn, 200, r);
  mhd().MHD_destroy_response(r);
  return ok;
}

/// Every request, once its headers are in: MHD calls this from one of its event-loop threads,
/// which also watch every other connection, so nothing here waits on a client. HEAD is GET
/// without the body (MHD leaves the body out). A body, if any, is never read: the answer is
/// queued at once and the connection closed after it.
MHD_Result on_request(void* cls, MHD_Connection* conn, const char* url, const char* method,
                      const char* /*version*/, const char* /*upload_data*/,
                      std::size_t* /*upload_data_size*/, void** /*request_state*/) {
  auto& self = *static_cast<MetricsServer::Impl*>(cls);
  std::string_view m = method ? method : "";
  if (m != "GET" && m != "HEAD")
    return respond(conn, 405, kText,
                   fmt::format("{} is not served here: GET /metrics or GET /healthz\n", m),
                   "GET, HEAD");
  if (const char* length =
          mhd().MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length")) {
    auto n = core::parse_u64(length);
    if (!n || *n > self.options.max_request_bytes)
      return respond(conn, 413, kText, "request body too large\n");
  }
  // The path exactly as sent (no percent-decoding, see kept_as_sent): /metrics, not /METRICS,
  // not /metrics%00.
  std::string_view path = url ? url : "";
  if (path == "/healthz") return respond(conn, 200, kText, "ok\n");
  if (path != "/metrics")
    return respond(conn, 404, kText, "not found: this server has /metrics and /healthz\n");
  const char* accept = mhd().MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");
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
    return respond_metrics(conn, content_type(format), std::move(taken), format, e.text(format));
  } catch (const std::exception& ex) {
    spdlog::warn("serve: reading failed: {}", ex.what());
    return respond(conn, 500, kText, fmt::format("reading failed: {}\n", ex.what()));
  }
}

/// MHD decodes %XX in the path in place by default, so "/metrics%00" became "/metrics" as a C
/// string; the path is matched as sent instead (the two paths served need no decoding).
std::size_t kept_as_sent(void*, MHD_Connection*, char* s) {
  return std::strlen(s);
}

void log_message(void*, const char* format, va_list args) {
  char text[512];
  std::vsnprintf(text, sizeof text, format, args);
  std::string_view line = text;
  while (!line.empty() && line.back() == '\n')
    line.remove_suffix(1);
  spdlog::debug("serve: {}", line);  // logged here, not on the library's stderr
}

/// The listening socket, bound here rather than by MHD so that the error names the address and
/// says why, and so that an IPv6 or IPv4 address works the same.
int bind_listener(const std::string& listen) {
  listening_port(listen);  // a usage error for a malformed ADDR:PORT
  auto colon = listen.rfind(':');
  std::string host = listen.substr(0, colon), port = listen.substr(colon + 1);
  if (!host.empty() && host.front() == '[') host = host.substr(1, host.size() - 2);
  if (host == "localhost") host = "127.0.0.1";
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE | (host.empty() ? 0 : AI_NUMERICHOST);
  if (host.empty()) hints.ai_family = AF_INET;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found);
      rc != 0)
    throw Error(fmt::format("serve: cannot listen on {}: {}", listen, ::gai_strerror(rc)));
  int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int e = errno;
  if (fd >= 0) {
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (found->ai_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0 || ::listen(fd, 1024) != 0) {
      e = errno;
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) throw Error(fmt::format("serve: cannot listen on {}: {}", listen, std::strerror(e)));
  return fd;
}

}  // namespace

MetricsServer::MetricsServer(const Machine& machine, const ServerOptions& options)
    : impl_(std::make_unique<Impl>(machine, options)) {
  if (!mhd().error.empty())
    throw Error(fmt::format("serve: cannot start the HTTP server: {}", mhd().error));
  impl_->host = options.listen.substr(0, options.listen.rfind(':'));
  if (impl_->host.empty()) impl_->host = "0.0.0.0";
  int fd = bind_listener(options.listen);
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0)
    impl_->port =
        ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                          : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  // Event loops (epoll), not a thread per connection: an idle connection (a port scanner, a
  // stuck proxy) costs a few kilobytes and nothing else, and never delays a scrape; it is closed
  // after --client-timeout without a complete request. The loops are a small pool, so that a
  // scrape that takes a reading does not hold up the others.
  unsigned timeout_s =
      static_cast<unsigned>(std::max(1, (options.request_timeout_ms + 999) / 1000));
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
  impl_->daemon = mhd().MHD_start_daemon(
      flags, 0, nullptr, nullptr, &on_request, impl_.get(), MHD_OPTION_LISTEN_SOCKET, fd,
      MHD_OPTION_THREAD_POOL_SIZE, static_cast<unsigned>(std::max(1, options.threads)),
      MHD_OPTION_CONNECTION_TIMEOUT, timeout_s, MHD_OPTION_CONNECTION_LIMIT,
      static_cast<unsigned>(options.max_connections), MHD_OPTION_CONNECTION_MEMORY_LIMIT,
      static_cast<std::size_t>(options.max_request_bytes + 16384), MHD_OPTION_UNESCAPE_CALLBACK,
      &kept_as_sent, nullptr, MHD_OPTION_EXTERNAL_LOGGER, &log_message, nullptr, MHD_OPTION_END);
  if (!impl_->daemon) {
    ::close(fd);
    throw Error(
        fmt::format("serve: cannot listen on {}: the HTTP server could not start", options.listen));
  }
}

MetricsServer::~MetricsServer() {
  // Wakes every loop at once (an eventfd), closes every connection, idle ones included: a stop
  // takes milliseconds whatever the clients do. MHD closes the listening socket it was given.
  if (impl_ && impl_->daemon) mhd().MHD_stop_daemon(impl_->daemon);
}

int MetricsServer::port() const {
  return impl_->port;
}

std::string MetricsServer::host() const {
  return impl_->host;
}

}  // namespace mainboard::serve
