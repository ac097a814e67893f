// `mainboard serve`: metrics for Prometheus until SIGINT, SIGTERM or SIGHUP.
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "cli/commands.hpp"
#include "mainboard/error.hpp"

namespace mainboard::cli {

void Serve::declare(CLI::App& cmd) {
  cmd.add_option("--listen", options.listen,
                 "ADDR:PORT to listen on (0.0.0.0:PORT for every interface; port 0 picks one)")
      ->capture_default_str()
      ->type_name("ADDRESS");
  cmd.add_option("--min-interval", options.min_interval_s,
                 "scrapes closer together than this share one reading")
      ->capture_default_str()
      ->check(number(0, 3600))
      ->type_name("S");
  cmd.add_option("--client-timeout", client_timeout_s,
                 "a connection whose request is not complete this long after it connected "
                 "(or after its previous answer) is closed, however slowly it sends "
                 "(whole seconds)")
      ->capture_default_str()
      ->check(number(1, 3600))
      ->type_name("S");
  cmd.add_option("--max-connections", options.max_connections,
                 "connections open at once; near it the one that has been sending its request "
                 "longest is closed for a newcomer, and one address holds at most an eighth")
      ->capture_default_str()
      ->check(number(16, 1 << 20))
      ->type_name("N");
}

std::string Serve::complete(const CLI::App&, std::vector<std::string>) {
  try {
    serve::listening_port(options.listen);
  } catch (const Error& e) {
    return e.what();
  }
  options.request_timeout_ms = static_cast<int>(client_timeout_s * 1000);
  return "";
}

/// Exit 0 when stopped by a signal, 1 when the address cannot be bound.
int Serve::run(const Global& g) {
  // Blocked before the server's threads start, so they inherit the mask and this thread alone
  // takes the signal, in sigwait.
  sigset_t stop;
  sigemptyset(&stop);
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    sigaddset(&stop, sig);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  // Every connection is a descriptor: the soft limit (often 1024) would refuse clients long
  // before the server's own limit, so it is raised to the hard one, as Go's servers do.
  if (rlimit files{}; ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = std::min<rlim_t>(files.rlim_max, 1u << 20);
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  auto machine_opts = machine_options(g);
  machine_opts.listen_for_xids = true;
  Machine machine(machine_opts);
  machine.gpus();  // found now, so that XIDs are counted from the start, not the first scrape
  serve::MetricsServer server(machine, options);
  std::string host = server.host();
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  std::fprintf(stderr, "mainboard serve: http://%s:%d/metrics (Ctrl-C to stop)\n", host.c_str(),
               server.port());
  std::fflush(stderr);
  int sig = 0;
  sigwait(&stop, &sig);
  std::fprintf(stderr, "mainboard serve: stopping (%s)\n", sigabbrev_np(sig));
  return 0;
}

}  // namespace mainboard::cli
