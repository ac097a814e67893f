// `mainboard serve` as Prometheus and a user meet it: scrapes over a real socket, bad clients,
// shared readings, signals and exit codes. The fake NVIDIA libraries provide eight GPUs.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

std::string fixture_host(const std::string& name) {
  return std::string(MAINBOARD_FIXTURES) + "/hosts/" + name;
}

/// `mainboard serve` running in the background with the fake GPUs; stopped by SIGTERM at the end.
class Server {
 public:
  explicit Server(std::vector<std::string> args,
                  const std::string& sysroot = fixture_host("gpu-procs")) {
    std::vector<std::string> argv{MAINBOARD_CLI, "--sysroot", sysroot, "serve"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env{
        "MAINBOARD_FAKE_GPU_SCENARIO=" + std::string(MAINBOARD_FIXTURES) + "/gpus/h100x8.json",
        std::string("MAINBOARD_NVML_LIBRARY=") + MAINBOARD_FAKE_NVML,
        std::string("MAINBOARD_CUDA_LIBRARY=") + MAINBOARD_FAKE_CUDA, "PATH=/usr/bin:/bin"};
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
    std::vector<char*> cargv, cenv;
    for (auto& a : argv)
      cargv.push_back(a.data());
    cargv.push_back(nullptr);
    for (auto& e : env)
      cenv.push_back(e.data());
    cenv.push_back(nullptr);
    int rc = ::posix_spawn(&pid_, MAINBOARD_CLI, &actions, nullptr, cargv.data(), cenv.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipe_fds[1]);
    err_fd_ = pipe_fds[0];
    if (rc != 0) throw std::runtime_error("spawn");
    // The first line names the port: "mainboard serve: http://127.0.0.1:PORT/metrics ...".
    auto deadline = Clock::now() + std::chrono::seconds(20);
    while (stderr_.find('\n') == std::string::npos && Clock::now() < deadline && drain(200)) {
    }
    auto at = stderr_.find("http://127.0.0.1:");
    if (at != std::string::npos) port_ = std::atoi(stderr_.c_str() + at + 17);
  }
  ~Server() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (err_fd_ >= 0) ::close(err_fd_);
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  /// Sends `sig` (0: none, it exits by itself) and waits for the exit; its status (128 + signal
  /// when killed by one).
  int stop(int sig = SIGTERM) {
    if (sig) ::kill(pid_, sig);
    int status = 0;
    auto deadline = Clock::now() + std::chrono::seconds(10);
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    exited_ = true;
    while (drain(100)) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  const std::string& err() const { return stderr_; }

 private:
  bool drain(int timeout_ms) {
    pollfd p{err_fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return timeout_ms > 0 && !exited_;
    char buf[4096];
    ssize_t n = ::read(err_fd_, buf, sizeof buf);
    if (n <= 0) return false;
    stderr_.append(buf, static_cast<std::size_t>(n));
    return true;
  }
  pid_t pid_ = -1;
  int err_fd_ = -1;
  int port_ = 0;
  bool exited_ = false;
  std::string stderr_;
};

int connect_to(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// A connection from `source` (a loopback address such as 127.0.0.2: each is a different peer
/// to the server); -1 when refused or not made within 2 s.
int connect_from(int port, const char* source) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int error = 0;
  socklen_t length = sizeof error;
  pollfd p{fd, POLLOUT, 0};
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
      (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 &&
       (errno != EINPROGRESS || ::poll(&p, 1, 2000) != 1 ||
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0))) {
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

/// Whether the server has closed `fd` (or reset it): what it reads is the end, or an error.
bool closed_by_server(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  char buf[512];
  return ::recv(fd, buf, sizeof buf, MSG_DONTWAIT) <= 0;
}

/// The server's resident memory, bytes (0 when it cannot be read).
std::size_t resident_bytes(pid_t pid) {
  FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/status").c_str(), "r");
  if (!f) return 0;
  char line[256];
  std::size_t kib = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmRSS: %zu kB", &kib) == 1) break;
  std::fclose(f);
  return kib * 1024;
}

/// Everything the server sends until it closes the connection (or `timeout_s` passes).
std::string read_all(int fd, double timeout_s = 10) {
  std::string out;
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[8192];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

/// One raw request on a fresh connection (from `source`, when given); the whole response.
std::string raw_request(int port, const std::string& request, const char* source = nullptr) {
  int fd = source ? connect_from(port, source) : connect_to(port);
  if (fd < 0) return "";
  std::size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  auto out = read_all(fd);
  ::close(fd);
  return out;
}

struct Response {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

Response parse(const std::string& raw) {
  Response r;
  auto end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || end == std::string::npos) return r;
  r.status = std::atoi(raw.c_str() + 9);
  std::size_t at = raw.find("\r\n") + 2;
  while (at < end) {
    auto eol = raw.find("\r\n", at);
    auto line = raw.substr(at, eol - at);
    auto colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      for (auto& c : name)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      auto value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      r.headers[name] = value;
    }
    at = eol + 2;
  }
  r.body = raw.substr(end + 4);
  return r;
}

Response http_get(int port, const std::string& path, const std::string& extra = "",
                  const std::string& method = "GET", const char* source = nullptr) {
  return parse(raw_request(port,
                           method + " " + path + " HTTP/1.1\r\nHost: localhost\r\n" + extra +
                               "Connection: close\r\n\r\n",
                           source));
}

/// The value of the sample line that starts with `prefix`.
std::optional<double> sample(const std::string& body, const std::string& prefix) {
  auto at = body.find("\n" + prefix);
  if (at == std::string::npos) return std::nullopt;
  auto eol = body.find('\n', at + 1);
  auto line = body.substr(at + 1, eol - at - 1);
  return std::stod(line.substr(line.rfind(' ') + 1));
}

}  // namespace

TEST(Serve, ScrapesInBothFormatsAndStopsOnSigterm) {
  Server s({"--listen", "127.0.0.1:0"});
  ASSERT_GT(s.port(), 0) << s.err();
  auto m = http_get(s.port(), "/metrics");
  ASSERT_EQ(m.status, 200) << m.body;
  EXPECT_EQ(m.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(m.headers["content-length"], std::to_string(m.body.size()));
  EXPECT_EQ(sample(m.body, "mainboard_gpu_utilization_ratio{gpu=\"3\""), 0.97) << m.body;
  EXPECT_EQ(sample(m.body, "mainboard_scrapes_total"), 1);
  // OpenMetrics, as Prometheus asks for it.
  auto om = http_get(s.port(), "/metrics",
                     "Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;"
                     "q=0.5,*/*;q=0.1\r\n");
  ASSERT_EQ(om.status, 200);
  EXPECT_EQ(om.headers["content-type"],
            "application/openmetrics-text; version=1.0.0; charset=utf-8");
  EXPECT_TRUE(om.body.ends_with("# EOF\n"));
  EXPECT_NE(om.body.find("# TYPE mainboard_gpu_energy_joules counter"), std::string::npos);
  // HEAD: the headers alone.
  auto head = http_get(s.port(), "/metrics", "", "HEAD");
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
  auto health = http_get(s.port(), "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok\n");
  EXPECT_EQ(s.stop(SIGTERM), 0);
  EXPECT_NE(s.err().find("mainboard serve: stopping (TERM)"), std::string::npos) << s.err();
}

TEST(Serve, WithoutTheKernelLogXidsComeFromNvmlsEvents) {
  // The host as a user without CAP_SYSLOG sees it: no readable kernel log.
  auto root = std::filesystem::temp_directory_path() /
              ("mainboard-serve-nokmsg-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::copy(fixture_host("gpu-procs"), root, std::filesystem::copy_options::recursive);
  std::filesystem::remove(root / "dev/kmsg");
  {
    Server s({"--listen", "127.0.0.1:0"}, root.string());
    ASSERT_GT(s.port(), 0) << s.err();
    // The fake driver raises XID 79 on GPU 4 40 ms after serve began listening.
    const std::string gpu4 = "mainboard_gpu_xid_errors_total{gpu=\"4\"";
    std::optional<double> count;
    std::string body;
    for (auto deadline = Clock::now() + std::chrono::seconds(10); Clock::now() < deadline;) {
      body = http_get(s.port(), "/metrics").body;
      count = sample(body, gpu4);
      if (count == 1) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(count, 1) << body;
    EXPECT_NE(body.find("mainboard_reading_unavailable{unit=\"gpu6\",reading=\"xid\",reason=\"the "
                        "kernel log (/dev/kmsg) is not readable: No such file or directory; NVML "
                        "events: refused for this GPU\"} 1"),
              std::string::npos)
        << body;
    EXPECT_EQ(s.stop(SIGTERM), 0);
  }
  std::filesystem::remove_all(root);
}

TEST(Serve, BadClientsGetAnErrorAndTheServerKeepsServing) {
  Server s({"--listen", "127.0.0.1:0", "--client-timeout", "1"});
  ASSERT_GT(s.port(), 0) << s.err();
  EXPECT_EQ(http_get(s.port(), "/nothing").status, 404);
  auto post = http_get(s.port(), "/metrics", "Content-Length: 4\r\n", "POST");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.headers["allow"], "GET, HEAD");
  // Garbage instead of a request line: the connection is closed at once, nothing is served.
  for (const char* garbage : {"\x01\x02garbage\r\n\r\n", "GET\r\n\r\n"}) {
    auto start = Clock::now();
    auto answer = raw_request(s.port(), garbage);
    EXPECT_TRUE(answer.empty() || parse(answer).status == 400) << answer;
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 0.9)
        << "not closed at once";
  }
  // 64 KiB of headers: refused, not read into memory.
  std::string huge =
      "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(64 << 10, 'a') + "\r\n\r\n";
  EXPECT_EQ(parse(raw_request(s.port(), huge)).status, 431);  // Request Header Fields Too Large
  // A body larger than any request needs.
  auto big_body = http_get(s.port(), "/metrics", "Content-Length: 100000000\r\n");
  EXPECT_EQ(big_body.status, 413);
  // A client that connects and says nothing is cut off after --client-timeout, and others are
  // served meanwhile.
  int slow = connect_to(s.port());
  ASSERT_GE(slow, 0);
  auto start = Clock::now();
  EXPECT_EQ(http_get(s.port(), "/healthz").status, 200);
  auto rest = read_all(slow, 10);
  double held = std::chrono::duration<double>(Clock::now() - start).count();
  ::close(slow);
  EXPECT_LT(held, 5.0) << "the silent client was cut off: " << rest;
  EXPECT_EQ(http_get(s.port(), "/metrics").status, 200) << "still serving";
  EXPECT_EQ(s.stop(SIGINT), 0);
}

// A port scanner or a stuck proxy holds connections open and sends nothing (or half a
// request). With a thread per connection, 16 of them made a scrape take 9.7 s; the event loops
// answer a scrape at once however many there are, and a stop does not wait for them.
TEST(Serve, AThousandIdleConnectionsNeitherDelayAScrapeNorAStop) {
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = std::min<rlim_t>(files.rlim_max, 8192);
  ::setrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < 1100) GTEST_SKIP() << "needs 1100 descriptors, the hard limit is lower";
  // All from one address: a table of 8192, of which one address may hold 1024.
  Server s({"--listen", "127.0.0.1:0", "--min-interval", "60", "--client-timeout", "30",
            "--max-connections", "8192"});
  ASSERT_GT(s.port(), 0) << s.err();
  ASSERT_EQ(http_get(s.port(), "/metrics").status, 200);  // the reading, taken once
  std::vector<int> idle;
  for (int i = 0; i < 1000; ++i) {
    int fd = connect_to(s.port());
    ASSERT_GE(fd, 0) << "connection " << i << " refused";
    if (i % 2)  // half say nothing, half send the start of a request and stop
      ::send(fd, "GET /metrics HTTP/1.1\r\nHost:", 29, MSG_NOSIGNAL);
    idle.push_back(fd);
  }
  std::vector<double> ms;
  for (int i = 0; i < 5; ++i) {
    auto start = Clock::now();
    auto r = http_get(s.port(), "/metrics");
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    EXPECT_EQ(r.status, 200);
  }
  std::sort(ms.begin(), ms.end());
  EXPECT_LT(ms[2], 100.0) << "median scrape with 1000 idle connections open, ms";
  // Still open: nothing was dropped to make room.
  pollfd p{idle.front(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 0), 0) << "an idle connection was closed early";
  auto start = Clock::now();
  EXPECT_EQ(s.stop(SIGTERM), 0);
  double stop_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
#if defined(__SANITIZE_ADDRESS__)
  constexpr double kStopMs = 1000;  // the exit's own leak scan
#else
  constexpr double kStopMs = 100;
#endif
  EXPECT_LT(stop_ms, kStopMs) << "SIGTERM to exit with 1000 idle connections open, ms";
  for (int fd : idle)
    ::close(fd);
}

// Paths match exactly as sent: no case folding, no decoding that lets %00 cut the path short.
TEST(Serve, PathsMatchExactly) {
  Server s({"--listen", "127.0.0.1:0"});
  ASSERT_GT(s.port(), 0) << s.err();
  EXPECT_EQ(http_get(s.port(), "/metrics").status, 200);
  EXPECT_EQ(http_get(s.port(), "/metrics?name[]=up").status, 200);  // Prometheus's params
  for (const char* path : {"/METRICS", "/metrics%00", "/metrics%00.txt", "/metrics/", "//metrics",
                           "/metricsx", "/healthz/x", "/%6detrics"})
    EXPECT_EQ(http_get(s.port(), path).status, 404) << path;
  auto head = http_get(s.port(), "/healthz", "", "HEAD");
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
  // A raw NUL in the path, as %00 is: not the path before it.
  using namespace std::string_literals;
  for (const std::string& path :
       {"/metrics\0x"s, "/metrics\0"s, "/healthz\0"s, "/metrics\0?x=1"s, "/metrics?x\0=1"s})
    EXPECT_EQ(parse(raw_request(s.port(), "GET " + path +
                                              " HTTP/1.1\r\nHost: x\r\n"
                                              "Connection: close\r\n\r\n"))
                  .status,
              404)
        << "GET " << path.substr(0, path.find('\0')) << "\\0" << path.substr(path.find('\0') + 1);
  EXPECT_EQ(http_get(s.port(), "/metrics?x=1").status, 200) << "and a query is still fine";
  EXPECT_EQ(s.stop(), 0);
}

// 16 390 connections that each sent a header byte a second held the whole table: no scrape got
// in, and they stayed open (MHD's idle time-out restarts at every byte). Now a request not in
// within --client-timeout is cut off however it trickles, the oldest one still sending gives way
// to a newcomer when the table is nearly full, and the memory the flood took goes back.
TEST(Serve, SlowSendersAreCutOffAndScrapesStillGetIn) {
  constexpr int kSenders = 3000;
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = std::min<rlim_t>(files.rlim_max, 8192);
  ::setrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < kSenders + 200) GTEST_SKIP() << "needs 3200 descriptors";
  Server s({"--listen", "127.0.0.1:0", "--min-interval", "60", "--client-timeout", "2",
            "--max-connections", "2048"});
  ASSERT_GT(s.port(), 0) << s.err();
  ASSERT_EQ(http_get(s.port(), "/metrics").status, 200);  // the reading, taken once
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::size_t rss_before = resident_bytes(s.pid());

  // The senders, from eight addresses (one address holds at most an eighth of the table): each
  // sends a byte of an endless header every 500 ms. Opened over about 3 s, so that the table is
  // full for longer than the time-out.
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
  struct Sender {
    int fd;
    std::size_t sent;
    Clock::time_point next;
  };
  std::vector<Sender> senders;
  std::atomic<bool> flooding{true};
  std::vector<double> scrape_ms;
  std::vector<int> statuses;
  std::thread scraper([&] {  // from a ninth address, every 250 ms while the flood lasts
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    for (int i = 0; i < 40 && flooding; ++i) {
      auto start = Clock::now();
      statuses.push_back(http_get(s.port(), "/metrics", "", "GET", "127.0.0.10").status);
      scrape_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });
  auto trickle = [&] {
    auto now = Clock::now();
    for (auto& t : senders) {
      if (t.fd < 0 || now < t.next) continue;
      if (closed_by_server(t.fd)) {
        ::close(t.fd);
        t.fd = -1;
        continue;
      }
      char byte = t.sent < request.size() ? request[t.sent] : 'a';
      if (::send(t.fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1) ++t.sent;
      t.next = now + std::chrono::milliseconds(500);
    }
  };
  auto flood_start = Clock::now();
  int refused = 0;
  for (int i = 0; i < kSenders && Clock::now() - flood_start < std::chrono::seconds(20); ++i) {
    std::string source = "127.0.0." + std::to_string(2 + i % 8);
    int fd = connect_from(s.port(), source.c_str());
    if (fd < 0) {
      ++refused;
      continue;
    }
    senders.push_back({fd, 0, Clock::now()});
    if (i % 10 == 9) {
      trickle();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  auto last_opened = Clock::now();
  // Every sender is cut off a few seconds after the last one opened, however it trickles.
  std::size_t open = senders.size();
  while (open > 0 && Clock::now() - last_opened < std::chrono::seconds(15)) {
    trickle();
    open = std::count_if(senders.begin(), senders.end(), [](auto& t) { return t.fd >= 0; });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  double all_closed_s = std::chrono::duration<double>(Clock::now() - last_opened).count();
  flooding = false;
  scraper.join();
  for (auto& t : senders)
    if (t.fd >= 0) ::close(t.fd);
  EXPECT_EQ(open, 0u) << "senders still open 15 s after the last was opened";
  EXPECT_LT(all_closed_s, 10.0) << "s from the last opened to the last cut off";
  std::size_t most_sent = 0;
  for (auto& t : senders)
    most_sent = std::max(most_sent, t.sent);
  EXPECT_GT(most_sent, 1u) << "the senders did trickle";
  ASSERT_GE(statuses.size(), 3u) << "scrapes during the flood";
  for (int st : statuses)
    EXPECT_EQ(st, 200) << "a scrape during the flood";
  std::sort(scrape_ms.begin(), scrape_ms.end());
  EXPECT_LT(scrape_ms[scrape_ms.size() / 2], 100.0)
      << "median scrape during the flood, ms (of " << scrape_ms.size() << "; slowest "
      << scrape_ms.back() << ")";
#if !defined(__SANITIZE_ADDRESS__)  // ASan's quarantine keeps freed memory
  // The memory the flood took goes back once it is over.
  std::size_t rss_after = 0;
  for (auto deadline = Clock::now() + std::chrono::seconds(5); Clock::now() < deadline;) {
    rss_after = resident_bytes(s.pid());
    if (rss_after <= rss_before + (8u << 20)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_LE(rss_after, rss_before + (8u << 20))
      << "resident bytes after the flood; before: " << rss_before;
#endif
  EXPECT_EQ(http_get(s.port(), "/metrics").status, 200) << "still serving";
  std::printf(
      "%zu senders opened (%d refused), all cut off %.1f s after the last; scrapes: "
      "median %.1f ms, slowest %.1f ms of %zu; RSS %zu KiB before, %zu KiB after\n",
      senders.size(), refused, all_closed_s, scrape_ms[scrape_ms.size() / 2], scrape_ms.back(),
      scrape_ms.size(), rss_before >> 10, resident_bytes(s.pid()) >> 10);
  EXPECT_EQ(s.stop(), 0);
}

// One address cannot take the table: at most an eighth of --max-connections (at least 16).
// Past its share, its connection that has been sending its request longest is closed, so that
// a scraper that shares its address with a flood (127.0.0.1) still gets in.
TEST(Serve, OneAddressHoldsABoundedShare) {
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = std::min<rlim_t>(files.rlim_max, 4096);
  ::setrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < 300) GTEST_SKIP() << "needs 300 descriptors";
  Server s({"--listen", "127.0.0.1:0", "--client-timeout", "30", "--max-connections", "256"});
  ASSERT_GT(s.port(), 0) << s.err();
  std::vector<int> fds;
  for (int i = 0; i < 100; ++i) {
    int fd = connect_from(s.port(), "127.0.0.2");
    if (fd >= 0) fds.push_back(fd);
  }
  ASSERT_EQ(fds.size(), 100u);
  // The oldest are closed at once; the 32 newest stay open (the time-out is 30 s).
  auto held = [&] {
    return static_cast<std::size_t>(
        std::count_if(fds.begin(), fds.end(), [](int fd) { return !closed_by_server(fd); }));
  };
  for (auto deadline = Clock::now() + std::chrono::seconds(5);
       Clock::now() < deadline && held() > 32;)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(held(), 32u) << "connections from one address held open, of " << fds.size();
  EXPECT_FALSE(closed_by_server(fds.back())) << "the newest was kept";
  // The newest is served; so are another address and the same one.
  const std::string get = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(::send(fds.back(), get.data(), get.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(get.size()));
  EXPECT_EQ(parse(read_all(fds.back())).status, 200);
  EXPECT_EQ(http_get(s.port(), "/healthz", "", "GET", "127.0.0.3").status, 200);
  EXPECT_EQ(http_get(s.port(), "/metrics", "", "GET", "127.0.0.2").status, 200);
  for (int fd : fds)
    ::close(fd);
  EXPECT_EQ(s.stop(), 0);
}

TEST(Serve, ConcurrentScrapesShareOneReading) {
  Server s({"--listen", "127.0.0.1:0", "--min-interval", "60"});
  ASSERT_GT(s.port(), 0) << s.err();
  std::vector<std::thread> scrapers;
  std::vector<int> statuses(20);
  for (int i = 0; i < 20; ++i)
    scrapers.emplace_back([&, i] { statuses[i] = http_get(s.port(), "/metrics").status; });
  for (auto& t : scrapers)
    t.join();
  for (int st : statuses)
    EXPECT_EQ(st, 200);
  auto m = http_get(s.port(), "/metrics");
  EXPECT_EQ(sample(m.body, "mainboard_scrapes_total"), 21);
  EXPECT_EQ(sample(m.body, "mainboard_readings_total"), 1) << "one reading served all";
  EXPECT_EQ(s.stop(), 0);

  // Without a minimum interval each scrape reads afresh.
  Server fresh({"--listen", "127.0.0.1:0", "--min-interval", "0"});
  ASSERT_GT(fresh.port(), 0) << fresh.err();
  for (int i = 0; i < 3; ++i)
    http_get(fresh.port(), "/metrics");
  auto last = http_get(fresh.port(), "/metrics");
  EXPECT_EQ(sample(last.body, "mainboard_readings_total"), 4);
}

TEST(Serve, UsageErrorsAndABusyPort) {
  Server first({"--listen", "127.0.0.1:0"});
  ASSERT_GT(first.port(), 0) << first.err();
  Server second({"--listen", "127.0.0.1:" + std::to_string(first.port())});
  EXPECT_EQ(second.stop(0), 1) << second.err();
  EXPECT_NE(second.err().find("cannot listen on 127.0.0.1:" + std::to_string(first.port())),
            std::string::npos)
      << second.err();
  for (const char* bad : {"9471", "host:70000", "::1:9471"}) {
    Server s({"--listen", bad});
    EXPECT_EQ(s.stop(0), 2) << bad << ": " << s.err();
    EXPECT_NE(s.err().find("--listen"), std::string::npos) << s.err();
  }
  Server unknown({"--bogus"});
  EXPECT_EQ(unknown.stop(0), 2);
  Server tiny({"--listen", "127.0.0.1:0", "--max-connections", "8"});
  EXPECT_EQ(tiny.stop(0), 2) << tiny.err();
  EXPECT_NE(tiny.err().find("--max-connections: 8 is below 16"), std::string::npos) << tiny.err();
  EXPECT_EQ(first.stop(SIGHUP), 0);
}
