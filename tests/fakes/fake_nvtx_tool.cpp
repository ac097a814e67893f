// A fake NVTX tool (what Nsight Systems injects through NVTX_INJECTION64_PATH): it takes over
// nvtxRangePushA and nvtxRangePop and records them, so a test can see what the span bridge sent.
#include <nvtx3/nvToolsExt.h>

#include <mutex>
#include <string>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {

std::mutex g_mutex;
std::string g_log;

int NVTX_API push(const char* message) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_log += std::string("push ") + (message ? message : "(null)") + "\n";
  return 0;
}

int NVTX_API pop() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_log += "pop\n";
  return 0;
}

}  // namespace

FAKE_API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (!callbacks) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) || !table) return 0;
  if (size <= NVTX_CBID_CORE_RangePop) return 0;
  *table[NVTX_CBID_CORE_RangePushA] = reinterpret_cast<NvtxFunctionPointer>(&push);
  *table[NVTX_CBID_CORE_RangePop] = reinterpret_cast<NvtxFunctionPointer>(&pop);
  return 1;
}

/// Everything pushed and popped so far, a line each.
FAKE_API const char* fake_nvtx_log() {
  static std::string copy;
  std::lock_guard<std::mutex> lock(g_mutex);
  copy = g_log;
  return copy.c_str();
}
