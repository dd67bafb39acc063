// The family spec draft of a T1 file: what maps onto a spec key is translated, the rest is
// named in the notes.
#include <cctype>
#include <fstream>
#include <sstream>

#include "importers/import.hpp"
#include "importers/t1.hpp"

namespace kf {

namespace {

using ojson = nlohmann::ordered_json;

class DraftBuilder {
 public:
  explicit DraftBuilder(const std::filesystem::path& path) : path_(path) {}

  T1Draft build(const ojson& t1) {
    const ojson& space = t1.at("ConfigurationSpace");
    const ojson& kernel = t1.at("KernelSpecification");
    const std::string entry = kernel.at("KernelName").get<std::string>();
    d_.spec["name"] = identifier(entry);
    d_.spec["description"] = "Draft from the T1 file " + path_.filename().string() + " (kernel " + entry + ")";
    d_.spec["template"] = kernel.at("KernelFile").get<std::string>();
    d_.spec["entry"] = entry;
    if (kernel.contains("CompilerOptions")) d_.spec["compile_options"] = kernel.at("CompilerOptions");
    params(space.at("TuningParameters"));
    if (space.contains("Conditions")) conditions(space.at("Conditions"));
    dims(kernel);
    arguments(kernel);
    launch(kernel);
    fixed_notes(t1, kernel);
    return std::move(d_);
  }

 private:
  static std::string identifier(const std::string& s) {
    std::string out;
    for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return out.empty() ? std::string("t1_family") : out;
  }

  // A T1 expression in kforge's language, or the Python text with a note when untranslatable.
  std::string expr(const ojson& text, const std::string& where) {
    const std::string python = text.is_string() ? text.get<std::string>() : text.dump();
    const std::string e = python_to_kforge_expr(python);
    if (e.empty()) d_.notes.push_back(where + ": '" + python + "' has no translation; rewrite it in kforge's expression language");
    return e.empty() ? python : e;
  }

  void params(const ojson& list) {
    ojson out = ojson::object(), defaults = ojson::object();
    bool all_defaults = true;
    for (const auto& p : list) {
      const std::string name = p.at("Name").get<std::string>();
      const std::string type = p.at("Type").get<std::string>();
      ojson values = t1_values(p.at("Values").get<std::string>());
      if (type == "float" || type == "bool") {
        d_.notes.push_back("parameter " + name + " is " + type + ": kforge parameters are integers or strings; its values are kept as written, check the template reads them so");
        for (auto& v : values) if (v.is_number_float()) v = v.dump();
      }
      out[name] = values;
      if (p.contains("Default")) defaults[name] = p.at("Default");
      else all_defaults = false;
    }
    d_.spec["params"] = out;
    if (all_defaults && !defaults.empty()) d_.spec["defaults"] = ojson::array({defaults});
    d_.notes.push_back("the template reads each parameter NAME as the macro KF_NAME upper-cased (Kernel Tuner defines NAME itself): add `#define NAME KF_NAME` lines at its top or rename");
  }

  void conditions(const ojson& list) {
    ojson out = ojson::array();
    for (size_t i = 0; i < list.size(); ++i)
      out.push_back(expr(list[i].at("Expression"), "condition " + std::to_string(i)));
    d_.spec["constraints"] = out;
  }

  // ProblemSize becomes dims problem_size_0.. (what ProblemSize[i] in expressions becomes) and
  // the default suite.
  void dims(const ojson& kernel) {
    ojson sizes = kernel.contains("ProblemSize") ? kernel.at("ProblemSize") : ojson::array();
    if (sizes.is_number_integer()) sizes = ojson::array({sizes});
    ojson dims = ojson::object(), shape = ojson::object();
    for (size_t i = 0; i < sizes.size(); ++i) {
      const std::string name = "problem_size_" + std::to_string(i);
      dims[name] = {{"type", "int"}, {"min", 1}, {"doc", "ProblemSize[" + std::to_string(i) + "] of the T1 file"}};
      if (sizes[i].is_number_integer()) shape[name] = sizes[i];
    }
    if (dims.empty()) d_.notes.push_back("no ProblemSize: add the problem's dims and the shapes to tune (suites)");
    d_.spec["dims"] = dims;
    d_.spec["suites"] = {{"default", ojson::array({shape})}};
  }

  static std::string dtype(const std::string& t1_type) {
    if (t1_type == "half") return "f16";
    if (t1_type == "float") return "f32";
    if (t1_type == "int32") return "i32";
    return "";
  }

  void arguments(const ojson& kernel) {
    ojson buffers = ojson::array(), args = ojson::array();
    if (!kernel.contains("Arguments")) d_.notes.push_back("no Arguments: add buffers and args");
    for (const auto& a : kernel.contains("Arguments") ? kernel.at("Arguments") : ojson::array()) {
      const std::string name = a.value("Name", "arg" + std::to_string(args.size()));
      const std::string type = a.at("Type").get<std::string>();
      const std::string memory = a.at("MemoryType").get<std::string>();
      if (memory == "Scalar") {
        const bool real = type == "float" || type == "double" || type == "half";
        args.push_back({{real ? "f32" : (type == "int64" || type == "uint64" ? "i64" : "i32"),
                         a.contains("FillValue") ? a.at("FillValue").dump() : std::string("0")}});
        continue;
      }
      if (memory != "Vector" || dtype(type).empty()) {
        d_.notes.push_back("argument " + name + " (" + memory + " " + type + ") has no kforge buffer type (f16, bf16, f32, i32 vectors): add it by hand");
        continue;
      }
      const std::string access = a.value("AccessType", std::string("ReadWrite"));
      ojson b = {{"name", name}, {"dtype", "'" + dtype(type) + "'"},
                 {"count", a.contains("Size") ? expr(a.at("Size"), "argument " + name + " Size") : std::string("1")},
                 {"role", access == "ReadOnly" ? "input" : "output"}};
      if (access == "ReadOnly") b["init"] = {{"lo", -1}, {"hi", 1}};
      if (access == "ReadWrite")
        d_.notes.push_back("argument " + name + " is ReadWrite: kforge fills outputs with NaN before each launch; make it an input or split it");
      if (a.value("FillType", std::string()) == "Constant" && access == "ReadOnly")
        d_.notes.push_back("argument " + name + ": constant fill " + a.value("FillValue", ojson(0)).dump() + " becomes kforge's seeded uniform fill in [lo, hi)");
      buffers.push_back(b);
      args.push_back({{"buffer", name}});
    }
    d_.spec["buffers"] = buffers;
    d_.spec["args"] = args;
  }

  void launch(const ojson& kernel) {
    const bool cuda_grid = kernel.value("GlobalSizeType", std::string("OpenCL")) == "CUDA";
    ojson grid = ojson::array(), block = ojson::array();
    for (const char* axis : {"X", "Y", "Z"}) {
      const ojson& local = kernel.at("LocalSize");
      const std::string l = local.contains(axis) ? expr(local.at(axis), std::string("LocalSize.") + axis) : "1";
      const ojson& global = kernel.at("GlobalSize");
      std::string g = global.contains(axis) ? expr(global.at(axis), std::string("GlobalSize.") + axis) : "1";
      // OpenCL-style sizes count threads; kforge's grid counts blocks, as CUDA-style sizes do.
      if (!cuda_grid) g = "ceil_div(" + g + ", " + l + ")";
      grid.push_back(g);
      block.push_back(l);
    }
    d_.spec["launch"] = {{"grid", grid}, {"block", block},
                         {"smem", std::to_string(kernel.value("SharedMemory", 0))}};
  }

  void fixed_notes(const ojson& t1, const ojson& kernel) {
    auto& n = d_.notes;
    n.push_back("no reference kernel: add \"reference\" (template, entry, args, launch); kforge gates every config against it before timing");
    n.push_back(kernel.contains("ReferenceArguments")
                    ? "ReferenceArguments compare against stored data; kforge compares against a reference kernel: set \"tolerance\" (max_abs, rel_l2) per dtype"
                    : "no tolerance: add \"tolerance\" {\"default\": {\"max_abs\", \"rel_l2\"}}");
    n.push_back("no cost model: add \"cost\" {\"flops\", \"bytes\"} over the dims, for TFLOP/s and GB/s");
    n.push_back("the template path is relative to the T1 file; a spec's paths are relative to the spec's folder, and its entry must be extern \"C\"");
    if (t1.contains("Search") || t1.contains("Budget"))
      n.push_back("Search and Budget are campaign options in kforge (search --strategy, --evals, --time), not part of a family");
  }

  std::filesystem::path path_;
  T1Draft d_;
};

}  // namespace

T1Draft t1_family_draft(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ImportError(path.string() + ": cannot open");
  std::stringstream buf;
  buf << in.rdbuf();
  const ojson j = ojson::parse(buf.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw ImportError(path.string() + ": not valid JSON");
  try {
    return DraftBuilder(path).build(j);
  } catch (const nlohmann::json::exception& e) {
    throw ImportError(path.string() + ": malformed T1 file: " + e.what());
  } catch (const ImportError& e) {
    throw ImportError(path.string() + ": " + e.what());
  }
}

}  // namespace kf
