// Scrapes an exporter's /metrics as Prometheus does (HTTP/1.1, keep-alive, one connection per
// scraper) and reports latency percentiles, the server's CPU time per scrape and its resident
// memory, from /proc/PID. scripts/bench-serve.sh runs it against `mainboard serve` and, where
// it is installed, node_exporter.
//   serve_load PORT PID SCRAPES CONCURRENCY   → one JSON line on stdout
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

/// utime + stime of PID, in seconds.
double cpu_seconds(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i)
    if (i == 14 || i == 15) ticks += std::atof(field.c_str());
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

/// VmRSS of PID, in KiB.
long rss_kib(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return 0;
}

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
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

/// One GET /metrics on a kept-alive connection (reconnecting when the server closed it); the
/// status, or -1. Reads exactly Content-Length bytes of body, or a chunked body to its end.
int scrape(int& fd, int port) {
  static const std::string request =
      "GET /metrics HTTP/1.1\r\nHost: localhost\r\nAccept: text/plain;version=0.0.4\r\n"
      "User-Agent: serve_load\r\n\r\n";
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (fd < 0) fd = connect_to(port);
    if (fd < 0) return -1;
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
      ::close(fd);
      fd = -1;
      continue;
    }
    std::string got;
    char buf[65536];
    std::size_t header_end = std::string::npos;
    long long length = -1;
    bool chunked = false, closing = false;
    while (true) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, static_cast<std::size_t>(n));
      if (header_end == std::string::npos) {
        header_end = got.find("\r\n\r\n");
        if (header_end == std::string::npos) continue;
        std::string head = got.substr(0, header_end);
        for (auto& c : head)
          c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (auto at = head.find("content-length:"); at != std::string::npos)
          length = std::atoll(head.c_str() + at + 15);
        chunked = head.find("transfer-encoding: chunked") != std::string::npos;
        closing = head.find("connection: close") != std::string::npos;
      }
      std::size_t body = got.size() - header_end - 4;
      if (length >= 0 && body >= static_cast<std::size_t>(length)) break;
      if (chunked && got.ends_with("\r\n0\r\n\r\n")) break;
    }
    if (header_end == std::string::npos) {
      ::close(fd);
      fd = -1;
      continue;  // the server closed a kept-alive connection: once more on a new one
    }
    if (closing || (length < 0 && !chunked)) {
      ::close(fd);
      fd = -1;
    }
    return std::atoi(got.c_str() + 9);
  }
  return -1;
}

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: serve_load PORT PID SCRAPES CONCURRENCY\n");
    return 2;
  }
  int port = std::atoi(argv[1]);
  int pid = std::atoi(argv[2]);
  long scrapes = std::atol(argv[3]);
  int concurrency = std::max(1, std::atoi(argv[4]));
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(concurrency));
  std::atomic<long> failures{0};
  double cpu_before = cpu_seconds(pid);
  auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < concurrency; ++t)
    threads.emplace_back([&, t] {
      int fd = -1;
      long mine = scrapes / concurrency + (t < scrapes % concurrency ? 1 : 0);
      auto& out = latencies[static_cast<std::size_t>(t)];
      out.reserve(static_cast<std::size_t>(mine));
      for (long i = 0; i < mine; ++i) {
        auto t0 = Clock::now();
        int status = scrape(fd, port);
        out.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (status != 200) ++failures;
      }
      if (fd >= 0) ::close(fd);
    });
  for (auto& t : threads)
    t.join();
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  double cpu = cpu_seconds(pid) - cpu_before;
  std::vector<double> all;
  for (auto& v : latencies)
    all.insert(all.end(), v.begin(), v.end());
  double p50 = percentile(all, 50), p99 = percentile(all, 99);
  std::printf(
      "{\"scrapes\": %ld, \"concurrency\": %d, \"failures\": %ld, \"wall_s\": %.3f, "
      "\"p50_ms\": %.3f, \"p99_ms\": %.3f, \"cpu_ms_per_scrape\": %.4f, \"rss_kib\": %ld}\n",
      scrapes, concurrency, failures.load(), wall, p50, p99,
      scrapes ? cpu * 1000.0 / static_cast<double>(scrapes) : 0.0, rss_kib(pid));
  return failures.load() ? 1 : 0;
}
