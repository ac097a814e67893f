#include "serve/server.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <list>
#include <mutex>
#include <string_view>
#include <thread>
#include <unordered_map>

#include <arpa/inet.h>
#include <malloc.h>
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
  X(MHD_destroy_response) X(MHD_lookup_connection_value) X(MHD_get_connection_info)
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

// Named, not anonymous: MetricsServer::Impl holds one (a type of an anonymous namespace in a
// member is an error once a unity build puts this file in another).
namespace slow_senders {

/// Cuts off the connections still sending their request. MHD's own time-out is for idleness and
/// restarts at every byte, so a client that trickles a header byte a second held its connection
/// for ever, and 16 000 of them filled the table: no scrape got in. The guard watches every
/// connection from MHD's notifications and closes one (a shutdown of its socket, which MHD then
/// sees as the client's close) whose request headers are not all in within --client-timeout of
/// its start or of its previous answer, however it trickles. Near --max-connections the oldest
/// one still sending its request gives way to a newcomer, so a scrape always gets in.
class Guard {
 public:
  using Clock = std::chrono::steady_clock;

  /// One connection, MHD's "socket context" from its start to its close.
  struct Connection {
    int fd = -1;
    Clock::time_point since;  // connected, or answered (keep-alive): the request is due by then
    bool sending = true;      // its request headers are not all in yet
    bool cut = false;         // shut down here; MHD closes it on its next look
    std::list<Connection*>::iterator at;       // in `sending_`, oldest first, while `sending`
    std::string peer;                          // its address, as bytes
    std::list<Connection*>::iterator at_peer;  // in its peer's `sending`, while `sending`
    // The request line as MHD logged it, before anything cut it short (its connection's loop
    // only: no lock).
    const char* uri = nullptr;
    std::size_t uri_length = 0;
  };

  Guard(std::chrono::milliseconds timeout, std::size_t max_connections)
      : timeout_(timeout),
        share_(std::max<std::size_t>(16, max_connections / 8)),
        // A few slots kept free for newcomers: MHD refuses at accept when the table is full,
        // and each of its loops holds an equal share of the table.
        high_water_(max_connections - std::max<std::size_t>(1, max_connections / 16)) {}
  ~Guard() { stop(); }

  void start() {
    thread_ = std::thread([this] { watch(); });
  }
  void stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  void started(Connection* c) {
    std::lock_guard lock(mu_);
    ++open_;
    peak_ = std::max(peak_, open_);
    Peer& peer = peers_[c->peer];
    ++peer.open;
    send_from_now(c);
    // One address holds at most an eighth of the table: past it, its connection that has been
    // sending its request longest makes room (the newcomer itself when all its others are
    // being answered). Not a refusal at accept: a scraper that shares its address with a
    // flood (every local client is 127.0.0.1) still gets in.
    if (peer.open - peer.cut > share_) cut(peer.sending.front());
    // The table is nearly full: the connection that has been sending its request longest
    // (silent or trickling, never one being answered) makes room.
    while (open_ - cut_ > high_water_ && !c->cut && sending_.front() != c)
      cut(sending_.front());
  }

  void closed(Connection* c) {
    std::lock_guard lock(mu_);
    auto peer = peers_.find(c->peer);
    if (c->sending) {
      sending_.erase(c->at);
      peer->second.sending.erase(c->at_peer);
    }
    if (c->cut) {
      --cut_;
      --peer->second.cut;
    }
    if (--peer->second.open == 0) peers_.erase(peer);
    --open_;
  }

  /// Its request headers are all in.
  void headers_in(Connection* c) {
    std::lock_guard lock(mu_);
    if (c->sending) stop_sending(c);
  }

  /// Answered: a keep-alive connection owes its next request from now.
  void answered(Connection* c) {
    std::lock_guard lock(mu_);
    if (!c->sending && !c->cut) send_from_now(c);
  }

 private:
  struct Peer {
    std::size_t open = 0, cut = 0;
    std::list<Connection*> sending;  // oldest first
  };

  void send_from_now(Connection* c) {
    c->sending = true;
    c->since = Clock::now();
    c->at = sending_.insert(sending_.end(), c);
    auto& peer = peers_[c->peer].sending;
    c->at_peer = peer.insert(peer.end(), c);
  }

  void stop_sending(Connection* c) {
    sending_.erase(c->at);
    peers_[c->peer].sending.erase(c->at_peer);
    c->sending = false;
  }

  /// Under mu_: MHD closes a connection's socket only after its "closed" notification, which
  /// waits for this lock, so the descriptor is still the connection's.
  void cut(Connection* c) {
    ::shutdown(c->fd, SHUT_RDWR);
    c->cut = true;
    ++cut_;
    ++peers_[c->peer].cut;
    stop_sending(c);
  }

  void watch() {
    auto tick = std::clamp<Clock::duration>(timeout_ / 8, std::chrono::milliseconds(20),
                                            std::chrono::milliseconds(250));
    std::unique_lock lock(mu_);
    while (!wake_.wait_for(lock, tick, [&] { return stopping_; })) {
      auto due = Clock::now() - timeout_;
      while (!sending_.empty() && sending_.front()->since <= due)
        cut(sending_.front());
      // A flood has passed: the memory its connections took goes back to the system (the
      // allocator keeps freed memory in each loop's arena otherwise: 130 MB after 16 000).
      if (peak_ >= open_ + 256 && open_ <= peak_ / 2) {
        peak_ = open_;
        lock.unlock();
        ::malloc_trim(0);
        lock.lock();
      }
    }
  }

  const Clock::duration timeout_;
  const std::size_t share_;  // of the table, for one address
  const std::size_t high_water_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::list<Connection*> sending_;  // oldest first
  std::unordered_map<std::string, Peer> peers_;
  std::size_t open_ = 0, cut_ = 0, peak_ = 0;
  std::thread thread_;
};

}  // namespace slow_senders

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
  slow_senders::Guard guard;

  Impl(const Machine& m, const ServerOptions& o)
      : machine(m),
        options(o),
        guard(std::chrono::milliseconds(std::max(1, o.request_timeout_ms)),
              static_cast<std::size_t>(std::max(16, o.max_connections))) {}

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

/// Each connection's memory, its request headers in it (about 16 KiB of headers: 431).
constexpr std::size_t kConnectionMemory = 16384;

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

slow_senders::Guard::Connection* guarded(MHD_Connection* conn) {
  const MHD_ConnectionInfo* info =
      mhd().MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return info ? static_cast<slow_senders::Guard::Connection*>(info->socket_context) : nullptr;
}

/// A connection's start and close, from the loop that accepted it.
void on_connection(void* cls, MHD_Connection* conn, void** context,
                   MHD_ConnectionNotificationCode code) {
  auto& guard = static_cast<MetricsServer::Impl*>(cls)->guard;
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    auto* c = new slow_senders::Guard::Connection;
    if (const MHD_ConnectionInfo* info =
            mhd().MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD))
      c->fd = info->connect_fd;
    if (const MHD_ConnectionInfo* info =
            mhd().MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        info && info->client_addr) {
      const sockaddr* a = info->client_addr;
      if (a->sa_family == AF_INET) {
        const auto& in = reinterpret_cast<const sockaddr_in*>(a)->sin_addr;
        c->peer.assign(reinterpret_cast<const char*>(&in), sizeof in);
      } else if (a->sa_family == AF_INET6) {
        const auto& in6 = reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr;
        c->peer.assign(reinterpret_cast<const char*>(&in6), sizeof in6);
      }
    }
    *context = c;
    guard.started(c);
  } else if (auto* c = static_cast<slow_senders::Guard::Connection*>(*context)) {
    guard.closed(c);
    delete c;
    *context = nullptr;
  }
}

/// A request line, as sent, before MHD cuts it at the query or decodes it: how long it is up to
/// its first NUL, for on_request to see whether the path it gets is the whole path.
void* on_request_line(void*, const char* uri, MHD_Connection* conn) {
  if (auto* c = guarded(conn)) {
    c->uri = uri;
    c->uri_length = std::strlen(uri);
  }
  return nullptr;
}

/// A request answered (or failed): a keep-alive connection owes its next request from now.
void on_completed(void* cls, MHD_Connection* conn, void**, MHD_RequestTerminationCode code) {
  if (code != MHD_REQUEST_TERMINATED_COMPLETED_OK) return;  // closed, not kept
  if (auto* c = guarded(conn)) static_cast<MetricsServer::Impl*>(cls)->guard.answered(c);
}

/// Whether `url` is the whole path as sent. MHD ends the path at the space before the version,
/// so a raw NUL in it ("GET /metrics\0x HTTP/1.1") ended it early as a C string and the request
/// was served as /metrics; the request line as logged must reach the version.
bool whole_path(MHD_Connection* conn, const char* url, const char* version) {
  const slow_senders::Guard::Connection* c = guarded(conn);
  return c && url && version && c->uri == url &&
         reinterpret_cast<std::uintptr_t>(url) + c->uri_length + 1 ==
             reinterpret_cast<std::uintptr_t>(version);
}

/// Every request, once its headers are in: MHD calls this from one of its event-loop threads,
/// which also watch every other connection, so nothing here waits on a client. HEAD is GET
/// without the body (MHD leaves the body out). A body, if any, is never read: the answer is
/// queued at once and the connection closed after it.
MHD_Result on_request(void* cls, MHD_Connection* conn, const char* url, const char* method,
                      const char* version, const char* /*upload_data*/,
                      std::size_t* /*upload_data_size*/, void** /*request_state*/) {
  auto& self = *static_cast<MetricsServer::Impl*>(cls);
  if (auto* c = guarded(conn)) self.guard.headers_in(c);
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
  // not /metrics%00, not /metrics and a raw NUL.
  std::string_view path = whole_path(conn, url, version) ? url : "";
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
  // after --client-timeout without a complete request, however slowly it sends (the guard). The
  // loops are a small pool, so that a scrape that takes a reading does not hold up the others.
  // One address holds at most an eighth of the table (the guard, too).
  unsigned timeout_s =
      static_cast<unsigned>(std::max(1, (options.request_timeout_ms + 999) / 1000));
  auto max_connections = static_cast<unsigned>(std::max(16, options.max_connections));
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
  impl_->guard.start();
  impl_->daemon = mhd().MHD_start_daemon(
      flags, 0, nullptr, nullptr, &on_request, impl_.get(), MHD_OPTION_LISTEN_SOCKET, fd,
      MHD_OPTION_THREAD_POOL_SIZE, static_cast<unsigned>(std::max(1, options.threads)),
      MHD_OPTION_CONNECTION_TIMEOUT, timeout_s, MHD_OPTION_CONNECTION_LIMIT, max_connections,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, kConnectionMemory, MHD_OPTION_NOTIFY_CONNECTION,
      &on_connection, impl_.get(), MHD_OPTION_URI_LOG_CALLBACK, &on_request_line, impl_.get(),
      MHD_OPTION_NOTIFY_COMPLETED, &on_completed, impl_.get(), MHD_OPTION_UNESCAPE_CALLBACK,
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
