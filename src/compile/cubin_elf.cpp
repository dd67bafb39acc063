#include "compile/cubin_elf.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace kf {

namespace {

// .nv.info attribute ids (EIATTR_*) and formats (EIFMT_*) as the CUDA toolchain writes them.
constexpr uint8_t kFmtSval = 0x04;  // header followed by a u16-sized payload
constexpr uint8_t kAttrFrameSize = 0x11;
constexpr uint8_t kAttrMinStackSize = 0x12;
constexpr uint8_t kAttrMaxStackSize = 0x23;
constexpr uint8_t kAttrRegCount = 0x2f;

struct Section {
  std::string name;
  uint32_t type = 0;
  uint64_t offset = 0, size = 0;
  uint32_t link = 0, info = 0;
  uint64_t entsize = 0;
};

class Reader {
 public:
  explicit Reader(const std::string& b) : bytes_(b) {}
  bool has(uint64_t off, uint64_t n) const { return off <= bytes_.size() && n <= bytes_.size() - off; }
  template <class T>
  T get(uint64_t off) const {
    T v{};
    if (has(off, sizeof(T))) std::memcpy(&v, bytes_.data() + off, sizeof(T));
    return v;
  }
  std::string cstr(uint64_t off) const {
    if (off >= bytes_.size()) return "";
    const char* p = bytes_.data() + off;
    return std::string(p, strnlen(p, bytes_.size() - off));
  }

 private:
  const std::string& bytes_;
};

std::optional<std::vector<Section>> read_sections(const Reader& r) {
  if (!r.has(0, 64) || r.get<uint32_t>(0) != 0x464c457f) return std::nullopt;  // "\x7fELF"
  if (r.get<uint8_t>(4) != 2 || r.get<uint8_t>(5) != 1) return std::nullopt;     // 64-bit, LE
  const auto shoff = r.get<uint64_t>(0x28);
  const auto shentsize = r.get<uint16_t>(0x3a);
  const auto shnum = r.get<uint16_t>(0x3c);
  const auto shstrndx = r.get<uint16_t>(0x3e);
  if (shentsize < 64 || shstrndx >= shnum || !r.has(shoff, uint64_t{shentsize} * shnum))
    return std::nullopt;
  std::vector<Section> secs(shnum);
  std::vector<uint32_t> name_off(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint64_t h = shoff + uint64_t{i} * shentsize;
    name_off[i] = r.get<uint32_t>(h);
    secs[i].type = r.get<uint32_t>(h + 4);
    secs[i].offset = r.get<uint64_t>(h + 24);
    secs[i].size = r.get<uint64_t>(h + 32);
    secs[i].link = r.get<uint32_t>(h + 40);
    secs[i].info = r.get<uint32_t>(h + 44);
    secs[i].entsize = r.get<uint64_t>(h + 56);
  }
  for (uint16_t i = 0; i < shnum; ++i) secs[i].name = r.cstr(secs[shstrndx].offset + name_off[i]);
  return secs;
}

// Index of the entry's FUNC symbol in .symtab, or -1.
int64_t find_symbol(const Reader& r, const std::vector<Section>& secs, const std::string& entry) {
  for (const Section& s : secs) {
    if (s.type != 2 || s.entsize < 24 || s.link >= secs.size()) continue;  // SHT_SYMTAB
    const Section& strtab = secs[s.link];
    for (uint64_t i = 0; i < s.size / s.entsize; ++i) {
      const uint64_t e = s.offset + i * s.entsize;
      if (!r.has(e, 24)) break;
      const bool is_func = (r.get<uint8_t>(e + 4) & 0xf) == 2;  // STT_FUNC
      if (is_func && r.cstr(strtab.offset + r.get<uint32_t>(e)) == entry)
        return static_cast<int64_t>(i);
    }
  }
  return -1;
}

}  // namespace

std::optional<KernelInfo> parse_cubin_resources(const std::string& cubin, const std::string& entry) {
  const Reader r(cubin);
  const auto secs = read_sections(r);
  if (!secs) return std::nullopt;
  const int64_t sym = find_symbol(r, *secs, entry);
  if (sym < 0) return std::nullopt;

  // sm_90 and later reserve 1 KiB of shared memory per block for the system; when a cubin
  // declares that reservation, the entry's shared section includes it and ptxas does not.
  bool reserved_smem = false;
  for (const Section& s : *secs) reserved_smem = reserved_smem || s.name.rfind(".nv.shared.reserved.", 0) == 0;
  constexpr int kReservedSmem = 1024;

  KernelInfo info;
  for (const Section& s : *secs) {
    if (s.name == ".nv.shared." + entry) {
      info.smem_static = static_cast<int>(s.size);
      if (reserved_smem && info.smem_static >= kReservedSmem) info.smem_static -= kReservedSmem;
    }
    // Older layouts keep the register count in the top byte of the text section's sh_info.
    if (s.name == ".text." + entry && info.registers == 0)
      info.registers = static_cast<int>(s.info >> 24);
    if (s.name != ".nv.info" && s.name != ".nv.info." + entry) continue;
    uint64_t off = s.offset;
    const uint64_t end = s.offset + s.size;
    while (off + 4 <= end && r.has(off, 4)) {
      const auto fmt = r.get<uint8_t>(off);
      const auto attr = r.get<uint8_t>(off + 1);
      const uint64_t payload = fmt == kFmtSval ? r.get<uint16_t>(off + 2) : 0;
      // Per-function attributes in .nv.info carry (symbol index, value).
      if (fmt == kFmtSval && payload == 8 && r.get<uint32_t>(off + 4) == sym) {
        const int value = static_cast<int>(r.get<uint32_t>(off + 8));
        if (attr == kAttrRegCount) info.registers = value;
        if (attr == kAttrFrameSize || attr == kAttrMinStackSize || attr == kAttrMaxStackSize)
          info.stack_frame = std::max(info.stack_frame, value);
      }
      off += 4 + payload;
    }
  }
  return info;
}

}  // namespace kf
