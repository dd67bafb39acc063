// Rendering a config into a variant: self-contained CUDA source + compile options, named by hash.
#pragma once
#include <string>
#include <vector>

#include "family/family.hpp"

namespace kf {

struct Variant {
  std::string family;
  Config config;                     // empty for a reference variant
  Assignment defines;                // extra #defines beyond the config (diagnostics, switches)
  Shape specialization;              // the family's specialized dims only
  std::string source;                // #defines + template, with quoted #includes inlined and #line directives
  std::string entry;                 // extern "C" kernel name
  std::vector<std::string> options;  // NVRTC options, without --gpu-architecture and toolkit -I
  std::string arch_suffix;           // "" or "a" (sm_90a for wgmma)
  std::string hash;                  // content hash of source (less #line) + options + suffix (hex)
};

// Each param and specialized dim becomes a #define: an integer value v of NAME gives
// "#define KF_NAME v"; a string value s gives "#define KF_NAME_S 1" (NAME and S uppercased).
std::string render_defines(const Config& config, const Shape& specialization);
// Reads a template and inlines its quoted #includes (searched next to the including file,
// then in include_dirs), each file once. Throws SpecError for a missing file.
std::string inline_includes(const std::filesystem::path& file,
                            const std::vector<std::filesystem::path>& include_dirs);
// The source with every line starting "#line " removed: render adds such directives (so NVRTC
// names the template file and line), the variant hash and exported sources leave them out.
std::string strip_line_directives(const std::string& source);
// Extra defines (see family/user_config.hpp) render after the config's, in the same form; being
// part of the source they are part of the hash, so such a variant never shares a cache entry
// or a stored result with the plain one.
Variant render_variant(const Family& f, const Config& c, const Shape& s, const Assignment& defines = {});
Variant render_reference(const Family& f, const Shape& s);
// The shape's specialized dimensions (a specialized dimension left out is at its default); throws SpecError
// where one has no value.
Shape specialization_of(const Family& f, const Shape& shape);

}  // namespace kf
