#include "serve/metrics.hpp"

#include <fmt/format.h>

#include <chrono>
#include <exception>
#include <map>
#include <set>
#include <tuple>

#include "mainboard/machine.hpp"
#include "mainboard/version.hpp"

namespace mainboard::serve {

Scrape read(const Machine& machine) {
  auto start = std::chrono::steady_clock::now();
  Scrape r;
  r.memory = machine.memory();
  // Swap is read afresh, the DIMMs once. A probe never throws: one that fails is a reading
  // marked unavailable, so a scrape needs no guard of its own here.
  auto swap = machine.reading("swap");
  if (const auto* d = swap.diagnostic("swap"); d && d->status != ProbeStatus::ok) {
    r.swap_unavailable = d->reason;
  } else {
    r.swap_total_bytes = swap.memory_hardware.swap_total_bytes;
    r.swap_used_bytes = swap.memory_hardware.swap_used_bytes;
  }
  r.cgroup = machine.cgroup_memory();
  r.pressure = machine.pressure();
  r.energy = machine.reading("energy_counters").energy_counters;
  r.infiniband = machine.reading("infiniband").infiniband;
  r.network = machine.reading("network").network;
  r.temperatures = machine.reading("temperatures").temperatures;
  r.huge_pages = machine.reading("huge_pages").huge_pages;
  r.memory_errors = machine.reading("memory_errors").memory_errors;
  r.cpu = machine.cpu().reading();
  for (const auto& gpu : machine.gpus())
    r.gpus.push_back(gpu->gpu_snapshot());
  for (const auto& npu : machine.npus())
    r.npus.push_back(npu->npu_snapshot());
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

namespace {

constexpr double kMHz = 1e6;

/// The families every accelerator shares, under `prefix` (mainboard_gpu, mainboard_npu).
void expose_unit(const std::string& prefix, const std::string& unit, const Labels& id,
                 const UnitSnapshot& t, Exposition& out, Family& unavailable) {
  auto with = [&](std::initializer_list<std::pair<std::string, std::string>> more) {
    Labels l = id;
    l.insert(l.end(), more.begin(), more.end());
    return l;
  };
  auto missing = [&](const char* reading, const std::string& why) {
    unavailable.add(
        {{"unit", unit}, {"reading", reading}, {"reason", why.empty() ? "unknown" : why}}, 1);
  };
  if (const auto& reading = t.memory) {
    const Memory& m = *reading;
    out.gauge(prefix + "_memory_total_bytes", "Memory of the unit, in bytes.")
        .add(id, m.total_bytes);
    if (m.used_bytes)
      out.gauge(prefix + "_memory_used_bytes", "Memory in use, in bytes.").add(id, *m.used_bytes);
    if (m.free_bytes)
      out.gauge(prefix + "_memory_free_bytes", "Memory free, in bytes.").add(id, *m.free_bytes);
  } else {
    missing("memory", reading.reason());
  }
  const Utilization& u = t.utilization.or_empty();
  if (u.compute_pct)
    out.gauge(prefix + "_utilization_ratio",
              "Share of the last sample period the unit was busy (0 to 1).")
        .add(id, *u.compute_pct / 100.0);
  if (u.memory_pct)
    out.gauge(prefix + "_memory_controller_utilization_ratio",
              "Share of the last sample period the memory controller was busy (0 to 1).")
        .add(id, *u.memory_pct / 100.0);
  if (!t.utilization) missing("utilization", t.utilization.reason());
  for (const auto& c : t.clocks) {
    if (c.current_mhz)
      out.gauge(prefix + "_clock_hertz", "Current clock of each clock domain, in hertz.")
          .add(with({{"clock", c.domain}}), *c.current_mhz * kMHz);
    if (c.max_mhz)
      out.gauge(prefix + "_clock_max_hertz", "Highest clock of each clock domain, in hertz.")
          .add(with({{"clock", c.domain}}), *c.max_mhz * kMHz);
  }
  const Thermal& th = t.thermal.or_empty();
  if (th.temperature_c)
    out.gauge(prefix + "_temperature_celsius", "Temperature, in degrees Celsius.")
        .add(id, *th.temperature_c);
  if (th.slowdown_c)
    out.gauge(prefix + "_slowdown_temperature_celsius",
              "Temperature at which the clocks slow down, in degrees Celsius.")
        .add(id, *th.slowdown_c);
  if (th.shutdown_c)
    out.gauge(prefix + "_shutdown_temperature_celsius",
              "Temperature at which the unit shuts down, in degrees Celsius.")
        .add(id, *th.shutdown_c);
  for (const auto& reason : th.throttle_reasons)
    out.gauge(prefix + "_throttle_reason",
              "1 for each reason the clocks are held back now (no series when none is).")
        .add(with({{"reason", reason}}), 1);
  if (!t.thermal) missing("thermal", t.thermal.reason());
  const Energy& e = t.energy.or_empty();
  if (e.power_w) out.gauge(prefix + "_power_watts", "Power draw, in watts.").add(id, *e.power_w);
  if (e.power_limit_w)
    out.gauge(prefix + "_power_limit_watts", "Enforced power limit, in watts.")
        .add(id, *e.power_limit_w);
  if (e.energy_j)
    out.counter(prefix + "_energy_joules_total", "Energy used since the driver loaded, in joules.")
        .add(id, *e.energy_j);
  if (!t.energy) missing("energy", t.energy.reason());
}

Labels gpu_labels(const GpuInfo& info) {
  return {{"gpu", std::to_string(info.index)},
          {"uuid", info.uuid},
          {"name", info.label},
          {"pci_bus_id", info.pci_bus_id},
          {"vendor", info.vendor}};
}

void expose_gpu(const GpuSnapshot& g, Exposition& out, Family& unavailable) {
  const Labels id = gpu_labels(g.info);
  auto with = [&](std::initializer_list<std::pair<std::string, std::string>> more) {
    Labels l = id;
    l.insert(l.end(), more.begin(), more.end());
    return l;
  };
  out.gauge("mainboard_gpu_info", "1 for each GPU, with its identity in labels.")
      .add(with({{"architecture", g.info.architecture},
                 {"compute_capability", g.info.compute_capability},
                 {"driver", g.info.driver_version}}),
           1);
  expose_unit("mainboard_gpu", "gpu" + std::to_string(g.info.index), id, g.telemetry, out,
              unavailable);
  const PcieReading& p = g.pcie.or_empty();
  if (p.tx_kbps)
    out.gauge("mainboard_gpu_pcie_throughput_bytes_per_second",
              "PCIe throughput over the driver's last sample period, in bytes per second.")
        .add(with({{"direction", "transmit"}}), *p.tx_kbps * 1024.0);
  if (p.rx_kbps)
    out.gauge("mainboard_gpu_pcie_throughput_bytes_per_second", "")
        .add(with({{"direction", "receive"}}), *p.rx_kbps * 1024.0);
  if (p.link_gen)
    out.gauge("mainboard_gpu_pcie_link_generation", "PCIe link generation now.")
        .add(id, *p.link_gen);
  if (p.link_width)
    out.gauge("mainboard_gpu_pcie_link_width", "PCIe link width now, in lanes.")
        .add(id, *p.link_width);
  if (p.max_link_gen)
    out.gauge("mainboard_gpu_pcie_link_max_generation", "Highest PCIe link generation.")
        .add(id, *p.max_link_gen);
  if (p.max_link_width)
    out.gauge("mainboard_gpu_pcie_link_max_width", "Widest PCIe link, in lanes.")
        .add(id, *p.max_link_width);
  if (g.fan_speed_pct)
    out.gauge("mainboard_gpu_fan_speed_ratio", "Fan speed as a share of its maximum (0 to 1).")
        .add(id, *g.fan_speed_pct / 100.0);
  for (const auto& proc : g.processes)
    if (proc.used_memory_bytes)
      out.gauge("mainboard_gpu_process_memory_bytes",
                "GPU memory each process holds, in bytes: pid as this server's PID namespace "
                "knows it, host_pid the driver's where different, container_pid its own "
                "container's (empty labels: none).")
          .add(with({{"pid", std::to_string(proc.pid)},
                     {"process", proc.name},
                     {"host_pid", proc.host_pid ? std::to_string(*proc.host_pid) : ""},
                     {"container_pid",
                      proc.container_pid ? std::to_string(*proc.container_pid) : ""}}),
               *proc.used_memory_bytes);
  const GpuUnitActivity& a = g.unit_activity.or_empty();
  auto ratio = [&](const char* name, const char* help, const std::optional<double>& pct) {
    if (pct) out.gauge(name, help).add(id, *pct / 100.0);
  };
  ratio("mainboard_gpu_sm_active_ratio",
        "Share of SMs with at least one warp resident over the last window (GPM, 0 to 1).",
        a.sm_active_pct);
  ratio("mainboard_gpu_sm_occupancy_ratio",
        "Warps resident out of the SMs' capacity over the last window (GPM, 0 to 1).",
        a.sm_occupancy_pct);
  ratio("mainboard_gpu_tensor_active_ratio",
        "Share of time tensor cores were busy over the last window (GPM, 0 to 1).",
        a.tensor_active_pct);
  ratio("mainboard_gpu_dram_bandwidth_ratio",
        "DRAM bandwidth used as a share of the peak over the last window (GPM, 0 to 1).",
        a.dram_bandwidth_pct);
  if (!g.unit_activity)
    unavailable.add({{"unit", "gpu" + std::to_string(g.info.index)},
                     {"reading", "unit_activity"},
                     {"reason", g.unit_activity.reason()}},
                    1);
  if (!g.health) return;
  const GpuHealth& h = *g.health;
  for (const auto& [part, why] : h.unavailable)
    unavailable.add(
        {{"unit", "gpu" + std::to_string(g.info.index)}, {"reading", part}, {"reason", why.reason}},
        1);
  auto flag = [](bool b) { return b ? 1.0 : 0.0; };
  if (h.persistence_mode)
    out.gauge("mainboard_gpu_persistence_mode", "1 when the driver keeps the GPU initialized.")
        .add(id, flag(*h.persistence_mode));
  if (h.ecc_enabled)
    out.gauge("mainboard_gpu_ecc_enabled", "1 when ECC is on.").add(id, flag(*h.ecc_enabled));
  auto ecc = [&](const char* type, const char* period, const std::optional<std::uint64_t>& v) {
    if (v)
      out.counter("mainboard_gpu_ecc_errors_total",
                  "ECC errors: corrected or uncorrected, since the driver loaded (volatile) or "
                  "over the GPU's life (aggregate).")
          .add(with({{"type", type}, {"period", period}}), static_cast<double>(*v));
  };
  ecc("corrected", "volatile", h.ecc_corrected_volatile);
  ecc("uncorrected", "volatile", h.ecc_uncorrected_volatile);
  ecc("uncorrected", "aggregate", h.ecc_uncorrected_aggregate);
  if (h.remapped_rows_correctable)
    out.gauge("mainboard_gpu_remapped_rows", "Memory rows remapped, by the kind of error.")
        .add(with({{"cause", "correctable"}}), *h.remapped_rows_correctable);
  if (h.remapped_rows_uncorrectable)
    out.gauge("mainboard_gpu_remapped_rows", "")
        .add(with({{"cause", "uncorrectable"}}), *h.remapped_rows_uncorrectable);
  if (h.remap_pending)
    out.gauge("mainboard_gpu_row_remap_pending", "1 when a row remapping waits for a GPU reset.")
        .add(id, flag(*h.remap_pending));
  if (h.remap_failed)
    out.gauge("mainboard_gpu_row_remap_failed", "1 when a row remapping failed.")
        .add(id, flag(*h.remap_failed));
  if (h.retired_pages_pending)
    out.gauge("mainboard_gpu_retired_pages_pending",
              "1 when retired memory pages wait for a GPU reset.")
        .add(id, flag(*h.retired_pages_pending));
  if (h.xid_errors)
    out.counter("mainboard_gpu_xid_errors_total",
                "XIDs the driver logged for the GPU: since boot from the kernel log, or, where "
                "that is not readable, since serve started from NVML's events.")
        .add(id, *h.xid_errors);
  if (h.last_xid)
    out.gauge("mainboard_gpu_last_xid_code",
              "The code of the last XID counted, with its meaning in a label.")
        .add(with({{"meaning", h.last_xid->meaning}}), h.last_xid->code);
  for (const auto& l : h.links) {
    std::string link = std::to_string(l.link);
    out.gauge("mainboard_gpu_nvlink_up", "1 for an NVLink link that is up.")
        .add(with({{"link", link}}), flag(l.active));
    auto counter = [&](const char* family, const char* help, const char* label, const char* value,
                       const std::optional<std::uint64_t>& v) {
      if (v)
        out.counter(family, help)
            .add(with({{"link", link}, {label, value}}), static_cast<double>(*v));
    };
    constexpr const char* kData = "mainboard_gpu_nvlink_data_bytes_total";
    constexpr const char* kDataHelp =
        "Payload through an NVLink link since the driver loaded, in bytes.";
    counter(kData, kDataHelp, "direction", "transmit", l.tx_bytes);
    counter(kData, kDataHelp, "direction", "receive", l.rx_bytes);
    constexpr const char* kErrors = "mainboard_gpu_nvlink_errors_total";
    constexpr const char* kErrorsHelp =
        "NVLink errors since the driver loaded: replays, recoveries, CRC failures.";
    counter(kErrors, kErrorsHelp, "kind", "replay", l.replay_errors);
    counter(kErrors, kErrorsHelp, "kind", "recovery", l.recovery_errors);
    counter(kErrors, kErrorsHelp, "kind", "crc", l.crc_errors);
  }
}

/// InfiniBand ports and network interfaces under node_exporter's infiniband and netclass names
/// (its netdev collector's for the byte counters).
void expose_fabric(const Scrape& r, Exposition& out, Family& unavailable) {
  if (r.infiniband) {
    // The error counters of ports/N/counters, by node_exporter's names for them.
    static constexpr std::pair<const char*, const char*> kErrors[] = {
        {"symbol_error", "symbol_error_total"},
        {"link_error_recovery", "link_error_recovery_total"},
        {"link_downed", "link_downed_total"},
        {"port_rcv_errors", "port_errors_received_total"},
        {"port_rcv_remote_physical_errors", "port_receive_remote_physical_errors_total"},
        {"port_rcv_switch_relay_errors", "port_receive_switch_relay_errors_total"},
        {"port_xmit_discards", "port_discards_transmitted_total"},
        {"port_xmit_constraint_errors", "port_constraint_errors_transmitted_total"},
        {"port_rcv_constraint_errors", "port_constraint_errors_received_total"},
        {"local_link_integrity_errors", "local_link_integrity_errors_total"},
        {"excessive_buffer_overrun_errors", "excessive_buffer_overrun_errors_total"},
        {"VL15_dropped", "vl15_dropped_total"},
        // ports/N/hw_counters (RoCE transport errors)
        {"out_of_sequence", "out_of_sequence_packets_received_total"},
        {"packet_seq_err", "packet_sequence_errors_total"},
        {"local_ack_timeout_err", "local_ack_timeout_errors_total"},
        {"implied_nak_seq_err", "implied_nak_seq_errors_total"},
        {"rnr_nak_retry_err", "rnr_nak_retry_packets_received_total"},
        {"out_of_buffer", "out_of_buffer_drops_total"},
        {"rx_icrc_encapsulated", "rx_icrc_encapsulated_errors_total"},
        {"req_cqe_error", "req_cqes_errors_total"},
        {"resp_cqe_error", "resp_cqes_errors_total"},
        {"duplicate_request", "duplicate_requests_packets_total"},
    };
    for (const auto& d : r.infiniband->devices) {
      out.gauge("mainboard_infiniband_info",
                "1, with each InfiniBand or RoCE device's identity in labels.")
          .add({{"device", d.name},
                {"board_id", d.board_id},
                {"firmware_version", d.firmware},
                {"hca_type", d.hca_type}},
               1);
      for (const auto& p : d.ports) {
        Labels id{{"device", d.name}, {"port", std::to_string(p.port)}};
        if (p.state_id)
          out.gauge("mainboard_infiniband_state_id",
                    "State of the port (0: no change, 1: down, 2: init, 3: armed, 4: active, 5: "
                    "act defer).")
              .add(id, *p.state_id);
        if (p.physical_state_id)
          out.gauge("mainboard_infiniband_physical_state_id",
                    "Physical state of the port (0: no change, 1: sleep, 2: polling, 3: "
                    "disabled, 4: port configuration training, 5: link up, 6: link error "
                    "recovery, 7: phy test).")
              .add(id, *p.physical_state_id);
        if (p.rate_gbps)
          out.gauge("mainboard_infiniband_rate_bytes_per_second",
                    "The port's signalling rate as the kernel gives it, in bytes per second.")
              .add(id, *p.rate_gbps * 1e9 / 8);
        if (p.received_bytes)
          out.counter("mainboard_infiniband_port_data_received_bytes_total",
                      "Data received on the port, in bytes.")
              .add(id, static_cast<double>(*p.received_bytes));
        if (p.transmitted_bytes)
          out.counter("mainboard_infiniband_port_data_transmitted_bytes_total",
                      "Data transmitted on the port, in bytes.")
              .add(id, static_cast<double>(*p.transmitted_bytes));
        for (auto [counter, name] : kErrors)
          if (auto it = p.errors.find(counter); it != p.errors.end())
            out.counter(std::string("mainboard_infiniband_") + name,
                        std::string("The port's ") + counter +
                            " counter (ports/N/counters or "
                            "hw_counters).")
                .add(id, static_cast<double>(it->second));
      }
    }
  } else {
    unavailable.add(
        {{"unit", "host"}, {"reading", "infiniband"}, {"reason", r.infiniband.reason()}}, 1);
  }
  if (r.network) {
    for (const auto& i : r.network->interfaces) {
      Labels id{{"device", i.name}};
      out.gauge("mainboard_network_info",
                "1, with each physical network interface's driver, address and state in labels.")
          .add({{"device", i.name},
                {"driver", i.driver},
                {"address", i.address},
                {"operstate", i.operstate}},
               1);
      out.gauge("mainboard_network_up", "1 if the interface's operstate is up, 0 otherwise.")
          .add(id, i.operstate == "up" ? 1 : 0);
      if (i.speed_mbps)
        out.gauge("mainboard_network_speed_bytes",
                  "The interface's link speed, in bytes per second (no series: link down or "
                  "unknown).")
            .add(id, static_cast<double>(*i.speed_mbps) * 1e6 / 8);
      if (i.mtu)
        out.gauge("mainboard_network_mtu_bytes", "The interface's MTU, in bytes.").add(id, *i.mtu);
      if (i.received_bytes)
        out.counter("mainboard_network_receive_bytes_total", "Bytes received on the interface.")
            .add(id, static_cast<double>(*i.received_bytes));
      if (i.transmitted_bytes)
        out.counter("mainboard_network_transmit_bytes_total", "Bytes transmitted on the interface.")
            .add(id, static_cast<double>(*i.transmitted_bytes));
    }
  } else {
    unavailable.add({{"unit", "host"}, {"reading", "network"}, {"reason", r.network.reason()}}, 1);
  }
}

/// Temperatures (node_exporter's hwmon and thermal_zone collectors), static huge pages per size
/// and node (meminfo_numa's, per page size) and EDAC's error counters (its edac collector).
void expose_sensors_and_memory_health(const Scrape& r, Exposition& out, Family& unavailable) {
  if (const auto& t = r.temperatures) {
    std::set<std::tuple<std::string, std::string, std::string>> seen;
    for (const auto& x : t->sensors) {
      if (x.source == "thermal") {
        auto zone = x.sensor.substr(x.sensor.rfind('e') + 1);  // thermal_zone3 → 3
        out.gauge("mainboard_thermal_zone_temp", "Temperature of each thermal zone, in celsius.")
            .add({{"zone", zone}, {"type", x.chip}}, x.celsius);
        continue;
      }
      // hwmon chips of one driver (coretemp of each socket) differ by their device.
      if (!seen.emplace(x.chip, x.device, x.sensor).second) continue;
      Labels id{{"chip", x.chip}, {"device", x.device}, {"sensor", x.sensor}};
      out.gauge("mainboard_hwmon_temp_celsius", "Temperature of each hwmon sensor, in celsius.")
          .add(id, x.celsius);
      if (x.high_celsius)
        out.gauge("mainboard_hwmon_temp_max_celsius",
                  "High limit of each hwmon sensor (tempN_max), in celsius.")
            .add(id, *x.high_celsius);
      if (x.critical_celsius)
        out.gauge("mainboard_hwmon_temp_crit_celsius",
                  "Critical limit of each hwmon sensor (tempN_crit), in celsius.")
            .add(id, *x.critical_celsius);
      if (!x.label.empty()) {
        Labels labelled = id;
        labelled.emplace_back("label", x.label);
        out.gauge("mainboard_hwmon_sensor_label", "1, with each hwmon sensor's label.")
            .add(labelled, 1);
      }
    }
  } else {
    unavailable.add(
        {{"unit", "host"}, {"reading", "temperatures"}, {"reason", r.temperatures.reason()}}, 1);
  }
  if (const auto& h = r.huge_pages) {
    for (const auto& p : h->pools) {
      Labels id{{"size_bytes", std::to_string(p.page_bytes)}};
      std::string family = "mainboard_memory_hugepages";
      if (p.numa_node) {
        id.insert(id.begin(), {"node", std::to_string(*p.numa_node)});
        family = "mainboard_memory_numa_hugepages";
      }
      const char* where = p.numa_node ? " on each NUMA node" : "";
      out.gauge(family + "_pages",
                fmt::format("Static huge pages in the pool of each page size{}.", where))
          .add(id, static_cast<double>(p.total));
      out.gauge(family + "_free_pages",
                fmt::format("Free static huge pages of each page size{}.", where))
          .add(id, static_cast<double>(p.free));
      if (p.reserved)
        out.gauge(family + "_reserved_pages",
                  "Static huge pages promised to a mapping but not yet faulted in.")
            .add(id, static_cast<double>(*p.reserved));
      if (p.surplus)
        out.gauge(family + "_surplus_pages",
                  fmt::format("Static huge pages beyond the pool (overcommit){}.", where))
            .add(id, static_cast<double>(*p.surplus));
    }
  } else {
    unavailable.add(
        {{"unit", "host"}, {"reading", "huge_pages"}, {"reason", r.huge_pages.reason()}}, 1);
  }
  if (const auto& e = r.memory_errors) {
    for (const auto& c : e->controllers) {
      Labels id{{"controller", c.name.substr(c.name.rfind('c') + 1)}};  // mc0 → 0
      out.counter("mainboard_edac_correctable_errors_total",
                  "Corrected memory errors of each memory controller (EDAC ce_count).")
          .add(id, static_cast<double>(c.corrected));
      out.counter("mainboard_edac_uncorrectable_errors_total",
                  "Uncorrected memory errors of each memory controller (EDAC ue_count).")
          .add(id, static_cast<double>(c.uncorrected));
    }
  } else {
    unavailable.add(
        {{"unit", "host"}, {"reading", "memory_errors"}, {"reason", r.memory_errors.reason()}}, 1);
  }
}

}  // namespace

void expose(const Scrape& r, Exposition& out) {
  out.gauge("mainboard_build_info", "1, with the exporter's version in a label.")
      .add({{"version", kVersion}}, 1);
  // Declared first so it sits at the top of the exposition; filled as readings fail.
  Family& unavailable =
      out.gauge("mainboard_reading_unavailable",
                "1 for each reading a unit (host, gpu0, npu0, ...) could not give, with the "
                "reason in a label.");
  if (r.memory) {
    out.gauge("mainboard_memory_total_bytes", "Host memory, in bytes.")
        .add({}, r.memory->total_bytes);
    if (r.memory->free_bytes)
      out.gauge("mainboard_memory_available_bytes",
                "Host memory available to new work without swapping (MemAvailable), in bytes.")
          .add({}, *r.memory->free_bytes);
    if (r.memory->used_bytes)
      out.gauge("mainboard_memory_used_bytes",
                "Host memory in use (total less available), in bytes.")
          .add({}, *r.memory->used_bytes);
  } else {
    unavailable.add({{"unit", "host"}, {"reading", "memory"}, {"reason", r.memory.reason()}}, 1);
  }
  if (!r.swap_unavailable.empty())
    unavailable.add({{"unit", "host"}, {"reading", "swap"}, {"reason", r.swap_unavailable}}, 1);
  if (r.swap_total_bytes)
    out.gauge("mainboard_swap_total_bytes", "Swap space, in bytes.").add({}, *r.swap_total_bytes);
  if (r.swap_used_bytes)
    out.gauge("mainboard_swap_used_bytes", "Swap in use, in bytes.").add({}, *r.swap_used_bytes);
  if (!r.cgroup) {
    unavailable.add({{"unit", "host"}, {"reading", "cgroup_memory"}, {"reason", r.cgroup.reason()}},
                    1);
  } else {
    Labels cg{{"cgroup", r.cgroup->path}};
    if (r.cgroup->limit_bytes)
      out.gauge("mainboard_cgroup_memory_limit_bytes",
                "The memory cap of this server's control group, in bytes (no series: no cap).")
          .add(cg, *r.cgroup->limit_bytes);
    if (r.cgroup->usage_bytes)
      out.gauge("mainboard_cgroup_memory_usage_bytes",
                "Memory charged to this server's control group, in bytes.")
          .add(cg, *r.cgroup->usage_bytes);
  }
  // Pressure stall information as counters of seconds (a rate of them is the share of time), as
  // node_exporter gives it: waiting (some task waited) and stalled (every task did).
  if (r.pressure) {
    auto& waiting = out.counter("mainboard_pressure_waiting_seconds_total",
                                "Time in which at least one task waited for the resource (PSI "
                                "some), in seconds since boot.");
    auto& stalled = out.counter("mainboard_pressure_stalled_seconds_total",
                                "Time in which every non-idle task waited for the resource at "
                                "once (PSI full), in seconds since boot.");
    for (auto [name, p] :
         {std::pair{"cpu", &r.pressure->cpu}, std::pair{"memory", &r.pressure->memory},
          std::pair{"io", &r.pressure->io}}) {
      if (!*p) continue;
      waiting.add({{"resource", name}}, static_cast<double>((*p)->some.total_us) / 1e6);
      if ((*p)->full)
        stalled.add({{"resource", name}}, static_cast<double>((*p)->full->total_us) / 1e6);
    }
  } else {
    unavailable.add({{"unit", "host"}, {"reading", "pressure"}, {"reason", r.pressure.reason()}},
                    1);
  }
  expose_fabric(r, out, unavailable);
  expose_sensors_and_memory_health(r, out, unavailable);
  // RAPL counters as node_exporter's rapl collector names them: one family per domain
  // (package, dram, core, uncore, psys), `index` the package of "package-N" or else the count of
  // zones of that name before it, `path` the zone's directory.
  if (r.energy) {
    std::map<std::string, int> seen;
    for (const auto& c : r.energy->counters) {
      int index =
          c.domain == "package" && c.package ? static_cast<int>(*c.package) : seen[c.domain];
      ++seen[c.domain];
      out.counter("mainboard_rapl_" + c.domain + "_joules_total",
                  "RAPL " + c.domain + " energy counter, in joules (wraps at the zone's range).")
          .add({{"index", std::to_string(index)}, {"path", "/sys/class/powercap/" + c.zone}},
               static_cast<double>(c.energy_uj) / 1e6);
    }
  } else {
    unavailable.add({{"unit", "host"}, {"reading", "rapl"}, {"reason", r.energy.reason()}}, 1);
  }
  const auto& info = r.cpu.info;
  out.gauge("mainboard_cpu_info", "1, with the host CPU's identity in labels.")
      .add({{"model", info.label}, {"architecture", info.architecture}, {"vendor", info.vendor}},
           1);
  if (r.cpu.load_1m)
    out.gauge("mainboard_load1", "Load average over 1 minute.").add({}, *r.cpu.load_1m);
  else
    unavailable.add(
        {{"unit", "host"}, {"reading", "load"}, {"reason", "no readable /proc/loadavg"}}, 1);
  if (r.cpu.load_5m)
    out.gauge("mainboard_load5", "Load average over 5 minutes.").add({}, *r.cpu.load_5m);
  if (r.cpu.load_15m)
    out.gauge("mainboard_load15", "Load average over 15 minutes.").add({}, *r.cpu.load_15m);
  for (const auto& c : r.cpu.clocks) {
    if (c.current_mhz)
      out.gauge("mainboard_cpu_clock_hertz",
                "Current CPU clock of each frequency domain, in hertz.")
          .add({{"domain", c.domain}}, *c.current_mhz * kMHz);
    if (c.max_mhz)
      out.gauge("mainboard_cpu_clock_max_hertz",
                "Highest CPU clock of each frequency domain, in hertz.")
          .add({{"domain", c.domain}}, *c.max_mhz * kMHz);
  }
  for (const auto& g : r.gpus)
    expose_gpu(g, out, unavailable);
  for (const auto& n : r.npus) {
    Labels id{{"npu", std::to_string(n.info.index)},
              {"name", n.info.label},
              {"pci_bus_id", n.info.pci_bus_id},
              {"vendor", n.info.vendor}};
    Labels with = id;
    with.emplace_back("driver", n.info.driver);
    out.gauge("mainboard_npu_info", "1 for each NPU, with its identity in labels.").add(with, 1);
    expose_unit("mainboard_npu", "npu" + std::to_string(n.info.index), id, n.telemetry, out,
                unavailable);
  }
  out.gauge("mainboard_reading_duration_seconds", "How long the last reading took, in seconds.")
      .add({}, r.seconds);
}

void expose(const ExporterStats& s, Exposition& out) {
  out.counter("mainboard_scrapes_total", "Requests for /metrics answered.")
      .add({}, static_cast<double>(s.scrapes));
  out.counter("mainboard_readings_total",
              "Readings taken; scrapes within the minimum interval share one.")
      .add({}, static_cast<double>(s.readings));
  out.gauge("mainboard_reading_age_seconds", "Age of the reading this scrape serves, in seconds.")
      .add({}, s.reading_age_s);
}

}  // namespace mainboard::serve
