// CubinCache: <dir>/<hash>-<arch>.cubin holds the code, <dir>/<hash>-<arch>.json the metadata
// (written last, so it marks a complete entry). Failed compiles have only the .json: the same
// source and options give the same error, so a rerun need not call NVRTC again.
#include <atomic>
#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <nlohmann/json.hpp>
#include <nvrtc.h>
#include <unistd.h>

#include "compile/compiler.hpp"
#include "compile/cubin_elf.hpp"
#include "util/hash.hpp"

namespace kf {

namespace {

// Bump when the metadata layout or the seal changes: old entries become misses. (3: the seal
// covers the info.)
constexpr int kFormat = 3;

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

// Hashes are hex and arches like "sm_90a"; anything else must not become part of a path.
bool safe_name(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::optional<std::string> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return ss.str();
}

// Writes to a private temporary next to the target, then renames: readers see the old
// entry or the whole new one, never a torn file.
void write_atomic(const std::filesystem::path& target, const std::string& bytes) {
  static std::atomic<uint64_t> counter{0};
  std::filesystem::path tmp = target;
  tmp += ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "." +
         std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw std::runtime_error("cubin cache: cannot write " + tmp.string());
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error("cubin cache: cannot rename into " + target.string());
  }
}

nlohmann::json info_json(const KernelInfo& i) {
  return {{"registers", i.registers},       {"smem_static", i.smem_static},
          {"stack_frame", i.stack_frame},   {"spill_stores", i.spill_stores},
          {"spill_loads", i.spill_loads},   {"compile_ms", i.compile_ms}};
}

KernelInfo info_from_json(const nlohmann::json& j) {
  KernelInfo i;
  i.registers = j.at("registers").get<int>();
  i.smem_static = j.at("smem_static").get<int>();
  i.stack_frame = j.at("stack_frame").get<int>();
  i.spill_stores = j.at("spill_stores").get<int>();
  i.spill_loads = j.at("spill_loads").get<int>();
  i.compile_ms = j.at("compile_ms").get<double>();
  return i;
}

// Binds the cubin's bytes (or a failure's log) and the resource info stored beside them to the
// key they are stored under: the registers, shared memory and spills decide which configs are
// launchable and are recorded with every evaluation, so an edited info must not be trusted.
// The info is sealed in its canonical JSON form (info_json), as put writes it and lookup reads it.
std::string seal(const std::string& hash, const std::string& arch, const std::string& entry,
                 bool ok, const std::string& log, const KernelInfo& info, const std::string& cubin_bytes) {
  return content_hash("kforge-cubin-cache-seal\n" + hash + "\n" + arch + "\n" + entry + "\n" +
                      nvrtc_version() + "\n" + (ok ? "ok\n" : "failed\n") + info_json(info).dump() + "\n" +
                      log + "\n" + cubin_bytes);
}

}  // namespace

CubinCache::CubinCache(std::filesystem::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw std::runtime_error("cubin cache: cannot create " + dir_.string() + ": " + ec.message());
}

std::optional<CompiledKernel> CubinCache::lookup(const std::string& hash, const std::string& arch,
                                                 const std::string& entry) const {
  if (!safe_name(hash) || !safe_name(arch)) return std::nullopt;
  const std::string stem = hash + "-" + arch;
  const auto meta_text = read_file(dir_ / (stem + ".json"));
  if (!meta_text) return std::nullopt;
  // Any damage (truncation, garbage, a cubin that does not match) is a miss: the caller
  // recompiles and overwrites the entry.
  try {
    const auto j = nlohmann::json::parse(*meta_text);
    if (j.at("format").get<int>() != kFormat || j.at("hash").get<std::string>() != hash ||
        j.at("arch").get<std::string>() != arch || j.at("nvrtc").get<std::string>() != nvrtc_version() ||
        j.at("entry").get<std::string>() != entry)
      return std::nullopt;
    CompiledKernel k;
    k.hash = hash;
    k.arch = arch;
    k.entry = entry;
    k.ok = j.at("ok").get<bool>();
    k.log = j.at("log").get<std::string>();
    k.info = info_from_json(j.at("info"));
    k.from_cache = true;
    if (k.ok) {
      k.cubin_path = dir_ / (stem + ".cubin");
      const auto cubin = read_file(k.cubin_path);
      if (!cubin || cubin->size() != j.at("cubin_size").get<size_t>() ||
          j.at("seal").get<std::string>() != seal(hash, arch, entry, true, k.log, k.info, *cubin) ||
          !parse_cubin_resources(*cubin, entry))
        return std::nullopt;
    } else if (j.at("seal").get<std::string>() != seal(hash, arch, entry, false, k.log, k.info, "")) {
      return std::nullopt;
    }
    return k;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

CompiledKernel CubinCache::put(CompiledKernel k, const std::string& cubin_bytes) {
  if (!safe_name(k.hash) || !safe_name(k.arch))
    throw std::runtime_error("cubin cache: bad key '" + k.hash + "-" + k.arch + "'");
  const std::string stem = k.hash + "-" + k.arch;
  nlohmann::json j = {{"format", kFormat}, {"hash", k.hash},  {"arch", k.arch},
                      {"entry", k.entry},  {"ok", k.ok},      {"log", k.log},
                      {"info", info_json(k.info)}, {"nvrtc", nvrtc_version()}};
  // The log is sealed as it will be read back (invalid UTF-8 is replaced when written).
  const auto as_stored = nlohmann::json::parse(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  const std::string log_as_stored = as_stored.at("log").get<std::string>();
  const KernelInfo info_as_stored = info_from_json(as_stored.at("info"));  // (a double read back is the same double)
  if (k.ok) {
    k.cubin_path = dir_ / (stem + ".cubin");
    write_atomic(k.cubin_path, cubin_bytes);
    j["cubin_size"] = cubin_bytes.size();
    j["seal"] = seal(k.hash, k.arch, k.entry, true, log_as_stored, info_as_stored, cubin_bytes);
  } else {
    k.cubin_path.clear();
    j["seal"] = seal(k.hash, k.arch, k.entry, false, log_as_stored, info_as_stored, "");
  }
  // Invalid UTF-8 in a log must not make the entry unwritable.
  write_atomic(dir_ / (stem + ".json"),
               j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return k;
}

}  // namespace kf
