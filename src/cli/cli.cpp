#include "cli/cli.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "core/log.hpp"
#include "mainboard/error.hpp"
#include "mainboard/version.hpp"

namespace mainboard::cli {

namespace {

template <class C, auto... Args>
std::unique_ptr<Command> make() {
  return std::make_unique<C>(Args...);
}

/// "mainboard profile run": the command the user was giving, for "run '… --help'".
std::string command_path(const CLI::App& app) {
  std::string path = app.get_name();
  const CLI::App* at = &app;
  for (int depth = 0; depth < 8; ++depth) {
    auto used = at->get_subcommands();
    if (used.empty()) break;
    at = used.front();
    path += " " + at->get_name();
  }
  return path;
}

/// The commands of a group, by name: "report, diff, perfetto, …".
std::string names_in(const CLI::App& group) {
  std::string names;
  for (const auto* sub : group.get_subcommands([](const CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

Exit usage(const std::string& message, const std::string& path) {
  return {2, "", "mainboard: error: " + message + "\n(run '" + path + " --help' for usage)\n"};
}

/// The global options, on the top level (and so, falling through, after any command's name);
/// `hidden` declares them again on a command that keeps unknown words for the command it runs.
void declare_globals(CLI::App& app, Global& g, bool hidden) {
  auto* sysroot = app.add_option("--sysroot", g.sysroot,
                                 "read the system from this directory instead of / (also "
                                 "MAINBOARD_SYSROOT)");
  auto* color = app.add_option("--color", g.color, "colour the output: auto, always or never")
                    ->check(one_of({"auto", "always", "never"}));
  auto* verbose = app.add_flag("-v,--verbose", g.verbose, "log what each probe does on stderr");
  if (hidden) {
    for (auto* o : {sysroot, color, verbose})
      o->group("");
    app.add_flag("--no-cache", g.no_cache)->group("");
    return;
  }
  sysroot->type_name("DIR");
  color->type_name("WHEN");
  app.add_option("--width", g.width, "columns for the schematic (default: the terminal's, or 80)")
      ->check(number(20, 400))
      ->type_name("N");
  app.add_flag("--no-cache", g.no_cache, "probe tool versions afresh, ignoring the on-disk cache");
}

/// A usage error for the sysroot asked for (--sysroot or MAINBOARD_SYSROOT), or "".
std::string check_sysroot(const Global& g) {
  std::string root = g.sysroot;
  const char* from = "--sysroot";
  if (root.empty())
    if (const char* env = std::getenv("MAINBOARD_SYSROOT"); env && *env) {
      root = env;
      from = "MAINBOARD_SYSROOT";
    }
  std::error_code ec;
  if (root.empty() || std::filesystem::is_directory(root, ec)) return "";
  return std::string(from) + " " + root +
         (std::filesystem::exists(root, ec) ? ": not a directory" : ": no such directory");
}

}  // namespace

const std::vector<CommandInfo>& commands() {
  static const std::vector<CommandInfo> table = {
      {"snapshot", "probe the whole machine; a summary, or --json", make<Snapshot>},
      {"toolchain", "compilers and build tools on PATH", make<Toolchain>},
      {"gpus", "GPUs and NPUs: identity and a telemetry reading each", make<Gpus>},
      {"topo",
       "how GPUs, NPUs, network adapters and NVMe drives reach each other on PCIe, as "
       "nvidia-smi topo -m prints it",
       make<Topo>},
      {"check", "is this node ready for a benchmark or a job: exit 0 ready, 1 not ready",
       make<Check>},
      {"fleet", "many nodes at once: grouped by what a job depends on, differences called out",
       make<Fleet>, false, true},
      {"serve", "metrics for Prometheus: /metrics (host, cgroup, every GPU and NPU) and /healthz",
       make<Serve>},
      {"top",
       "the machine live: each CPU, memory, the cgroup, pressure, every GPU and the processes "
       "on them, redrawn every interval (or JSON Lines)",
       make<Top>},
      {"busy", "exit 0 when GPU N is idle, 1 when it is busy, 2 when there is no such GPU",
       make<Busy, false>},
      {"wait-idle", "wait until GPU N is idle: exit 0 once idle, 1 at the timeout, 2 no such GPU",
       make<Busy, true>},
      {"meter",
       "run a command; report wall and CPU time, peak memory of its process tree and peak GPU "
       "memory (on stderr), and exit with its status",
       make<Meter>, true, true},
      {"gather",
       "copy what mainboard reads on this host into DIR (scrubbed of serial numbers and "
       "hostnames) so that --sysroot DIR reproduces it elsewhere",
       make<Gather>},
      {"profile", "sample programs; read, compare and export profiles", nullptr},
      {"profile report", "the report of a saved profile", make<ProfileReport>},
      {"profile diff", "change of every region from BASE to NEW", make<ProfileDiff>},
      {"profile perfetto", "export a profile as a Chrome/Perfetto trace", make<ProfilePerfetto>},
      {"profile merge",
       "merge the ranks' profiles of a distributed job into one, a process per rank on one time "
       "axis",
       make<ProfileMerge>},
      {"profile run",
       "run a command, sample its stacks (and collect its spans and, with --gpu, its GPU "
       "activity); exit with its status",
       make<ProfileRun>, true, true},
      {"profile attach", "sample the stacks of a running process", make<ProfileAttach>},
      {"profile top",
       "the functions a running program (PID) or a command started (-- CMD) spends its time in, "
       "live, as py-spy top",
       make<ProfileTop>, true, true},
      {"profile dump",
       "print one stack of every thread of a running process (its Python stacks when it runs "
       "CPython 3.9-3.13, like py-spy dump)",
       make<ProfileDump>},
  };
  return table;
}

std::variant<Parsed, Exit> parse(const std::vector<std::string>& arguments) {
  // What scripts ask most often, answered before the command table is built: CLI11 says it by
  // throwing, and the first exception pages in the unwinder's tables (about a millisecond).
  if (arguments.size() == 1 && arguments[0] == "--version")
    return Exit{0, std::string("mainboard ") + kVersion + "\n", ""};
  CLI::App app{"mainboard: what machine am I on, and what is it doing?"};
  app.name("mainboard");
  app.set_version_flag("--version", std::string("mainboard ") + kVersion);
  app.require_subcommand(0, 1);
  // Set before the commands are added: they inherit both. Global options are understood after
  // a command's name too (fallthrough).
  app.formatter(std::make_shared<Help>());
  app.fallthrough();
  Parsed parsed;
  declare_globals(app, parsed.global, false);

  // Every row on the parser; a command made with its defaults and its options bound to it only
  // when its name is one of the words given (before "--"): no other can be chosen, and declaring
  // every command's options was most of the start-up of a command that runs in milliseconds.
  // Help and the errors list the commands by name and description, which need no options.
  auto named = [&, end = std::find(arguments.begin(), arguments.end(), "--")](std::string_view w) {
    return std::find(arguments.begin(), end, w) != end;
  };
  struct Declared {
    const CommandInfo* info;
    CLI::App* app;
    std::unique_ptr<Command> command;
  };
  // Only the commands that can be chosen are on the parser at all (declaring all 25 was 0.3 M
  // of a warm snapshot's 3.3 M instructions): those named by a word, a named group's commands
  // (its errors list them) — or all, for help or when none is named (the errors list them).
  auto top_word = [](std::string_view path) { return path.substr(0, path.find(' ')); };
  bool help = false, any_named = false;
  for (auto it = arguments.begin(); it != arguments.end() && *it != "--"; ++it)
    help = help || *it == "--help" ||
           (it->size() > 1 && (*it)[0] == '-' && (*it)[1] != '-' && it->find('h') != it->npos);
  for (const auto& info : commands())
    any_named = any_named || named(top_word(info.path));
  bool everything = help || !any_named;
  std::vector<Declared> declared;
  std::vector<CLI::App*> groups;
  for (const auto& info : commands()) {
    if (!everything && info.make && !named(top_word(info.path))) continue;
    std::string path = info.path;
    CLI::App* parent = &app;
    if (auto space = path.rfind(' '); space != std::string::npos) {
      parent = app.get_subcommand(path.substr(0, space));
      path = path.substr(space + 1);
    }
    auto* cmd = parent->add_subcommand(path, info.help);
    if (!info.make) {  // a group: one of its commands is required, and an unknown one is named
      cmd->require_subcommand(0, 1);
      groups.push_back(cmd);
      continue;
    }
    if (!named(path)) continue;
    auto command = info.make();
    command->declare(*cmd);
    if (info.runs_a_command) {
      // It keeps what it does not know for the command it runs, so global options cannot fall
      // through to the top: it takes them itself.
      cmd->prefix_command();
      cmd->fallthrough(false);
      declare_globals(*cmd, parsed.global, true);
    }
    declared.push_back({&info, cmd, std::move(command)});
  }

  // "mainboard meter [options] -- CMD ARGS": everything after the first "--" is the command,
  // untouched by our option parser (it may have options of its own). Without "--", the first
  // word that is not an option starts it (prefix_command).
  std::vector<std::string> args = arguments;
  std::vector<std::string> after_dashes;
  if (auto dashes = std::find(args.begin(), args.end(), "--"); dashes != args.end()) {
    after_dashes.assign(dashes + 1, args.end());
    args.erase(dashes, args.end());
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order

  // A group given a word that is none of its commands: named, before any help is printed.
  // (The word falls through to the top level, which keeps it as left over.)
  auto unknown_in_group = [&]() -> std::optional<Exit> {
    for (auto* group : groups) {
      if (!*group || !group->get_subcommands().empty()) continue;
      for (const auto& word : app.remaining(true))
        if (!word.empty() && word[0] != '-')
          return usage("unknown command '" + group->get_name() + " " + word + "' (" +
                           group->get_name() + "'s commands: " + names_in(*group) + ")",
                       "mainboard " + group->get_name());
    }
    return std::nullopt;
  };
  // A first word that names no command ("mainboard bogus", "mainboard bogus --help"): named,
  // with the list, before any help is printed, so that a script asking "top --help" is told.
  auto unknown_command = [&]() -> std::optional<Exit> {
    if (!app.get_subcommands().empty()) return std::nullopt;
    for (const auto& word : app.remaining(true))
      if (!word.empty() && word[0] != '-')
        return usage("unknown command '" + word + "' (commands: " + names_in(app) + ")",
                     "mainboard");
    return std::nullopt;
  };
  auto unknown = [&]() -> std::optional<Exit> {
    if (auto in_group = unknown_in_group()) return in_group;
    return unknown_command();
  };
  std::ostringstream out, err;
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    if (auto u = unknown()) return *u;
    int code = app.exit(e, out, err);
    return Exit{code, out.str(), err.str()};
  } catch (const CLI::CallForAllHelp& e) {
    if (auto u = unknown()) return *u;
    int code = app.exit(e, out, err);
    return Exit{code, out.str(), err.str()};
  } catch (const CLI::CallForVersion& e) {
    int code = app.exit(e, out, err);
    return Exit{code, out.str(), err.str()};
  } catch (const CLI::ExtrasError& e) {
    if (auto u = unknown()) return *u;
    // "The following argument(s) was/were not expected: A B": in words of our own.
    std::string text = e.what();
    auto colon = text.find(": ");
    std::string what = colon == std::string::npos ? text : text.substr(colon + 2);
    bool option = !what.empty() && what[0] == '-';
    return usage((option ? "unknown option " : "unexpected argument ") + what, command_path(app));
  } catch (const CLI::ParseError& e) {
    return usage(e.what(), command_path(app));
  }
  if (auto u = unknown()) return *u;
  for (auto* group : groups)
    if (*group && group->get_subcommands().empty()) {
      std::string names = names_in(*group);
      return usage(group->get_name() + " needs a command: " + names,
                   "mainboard " + group->get_name());
    }

  auto chosen = std::find_if(declared.begin(), declared.end(),
                             [](const Declared& d) { return d.app->parsed(); });
  if (chosen == declared.end()) {
    if (!after_dashes.empty())
      return Exit{2, "",
                  "mainboard: error: only meter, profile run and fleet take arguments after --\n"};
    parsed.command = std::make_unique<View>();
  } else {
    const CommandInfo& info = *chosen->info;
    std::vector<std::string> rest;
    if (info.runs_a_command) {
      rest = chosen->app->remaining();
      // The first word that is not one of its options starts the command: one that looks like
      // an option is a mistake (a typo, an option of another command).
      if (!rest.empty() && rest[0].size() > 1 && rest[0][0] == '-')
        return usage("unknown option " + rest[0], command_path(app));
    }
    if (!after_dashes.empty() && !info.takes_dashes)
      return Exit{2, "",
                  "mainboard: error: only meter, profile run and fleet take arguments after --\n"};
    rest.insert(rest.end(), after_dashes.begin(), after_dashes.end());
    if (auto why = check_sysroot(parsed.global); !why.empty()) return usage(why, command_path(app));
    if (auto why = chosen->command->complete(*chosen->app, std::move(rest)); !why.empty())
      return usage(why, command_path(app));
    parsed.info = &info;
    parsed.command = std::move(chosen->command);
    return parsed;
  }
  if (auto why = check_sysroot(parsed.global); !why.empty()) return usage(why, command_path(app));
  return parsed;
}

int run(Parsed& parsed) {
  if (parsed.global.verbose) core::set_log_level(spdlog::level::debug);
  try {
    return parsed.command->run(parsed.global);
  } catch (const Interrupted& e) {
    std::fprintf(stderr, "mainboard: %s\n", e.what());
    return 128 + e.signal();  // as a shell reports a command a signal ended
  } catch (const CommandError& e) {
    print(std::string("mainboard: error: ") + e.what() + "\n", false, stderr);
    return e.exit_code();  // 127 or 126, as a shell
  } catch (const std::exception& e) {
    print(std::string("mainboard: error: ") + e.what() + "\n", false, stderr);
    return 1;
  }
}

}  // namespace mainboard::cli
