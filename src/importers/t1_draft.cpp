// The family spec draft of a T1 file: what maps onto a spec key is translated, the rest is
// named in the notes.
#include <cctype>

#include "importers/import.hpp"
#include "importers/t1.hpp"
#include "util/json_text.hpp"

namespace kf {

namespace {

using ojson = nlohmann::ordered_json;

class DraftBuilder {
 public:
  explicit DraftBuilder(const std::filesystem::path& path) : path_(path) {}

  T1Draft build(const ojson& t1) {
    const ojson& space = object(t1, "ConfigurationSpace", "");
    const ojson& kernel = object(t1, "KernelSpecification", "");
    const std::string k = "KernelSpecification";
    const std::string entry = text(kernel, "KernelName", k);
    d_.spec["name"] = identifier(entry);
    d_.spec["description"] = "Draft from the T1 file " + path_.filename().string() + " (kernel " + entry + ")";
    d_.spec["template"] = text(kernel, "KernelFile", k);
    d_.spec["entry"] = entry;
    if (kernel.contains("CompilerOptions")) d_.spec["compile_options"] = kernel.at("CompilerOptions");
    params(list(space, "TuningParameters", "ConfigurationSpace"));
    if (space.contains("Conditions")) conditions(list(space, "Conditions", "ConfigurationSpace"));
    dims(kernel);
    arguments(kernel);
    launch(kernel);
    fixed_notes(t1, kernel);
    for (std::string& note : d_.notes) note = one_line(note);  // they quote the file, which may say anything
    return std::move(d_);
  }

 private:
  // Typed access that names the field in its error: "<where>/<key>: expected ..., got ...".
  static const ojson& member(const ojson& obj, const char* key, const std::string& where) {
    const std::string at = where.empty() ? std::string(key) : where + "/" + key;
    if (!obj.is_object()) throw ImportError((where.empty() ? std::string("the file") : where) + ": expected an object, got " + obj.type_name());
    if (!obj.contains(key)) throw ImportError(at + ": missing");
    return obj.at(key);
  }
  static const ojson& object(const ojson& obj, const char* key, const std::string& where) {
    const ojson& v = member(obj, key, where);
    if (!v.is_object()) throw ImportError(where + (where.empty() ? "" : "/") + key + ": expected an object, got " + v.type_name());
    return v;
  }
  static const ojson& list(const ojson& obj, const char* key, const std::string& where) {
    const ojson& v = member(obj, key, where);
    if (!v.is_array()) throw ImportError(where + (where.empty() ? "" : "/") + key + ": expected a list, got " + v.type_name());
    return v;
  }
  static std::string text(const ojson& obj, const char* key, const std::string& where) {
    const ojson& v = member(obj, key, where);
    if (!v.is_string()) throw ImportError(where + (where.empty() ? "" : "/") + key + ": expected a string, got " + v.type_name());
    return v.get<std::string>();
  }
  // An optional string field, `fallback` when absent.
  static std::string text_or(const ojson& obj, const char* key, const std::string& where, const std::string& fallback) {
    return obj.is_object() && obj.contains(key) ? text(obj, key, where) : fallback;
  }

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
    for (size_t i = 0; i < list.size(); ++i) {
      const ojson& p = list[i];
      const std::string where = "ConfigurationSpace/TuningParameters/" + std::to_string(i);
      const std::string name = text(p, "Name", where);
      const std::string type = text(p, "Type", where);
      ojson values;
      try {
        values = t1_values(text(p, "Values", where));
      } catch (const ImportError& e) {
        throw ImportError(where + "/Values (" + name + "): " + e.what());
      }
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
      out.push_back(expr(member(list[i], "Expression", "ConfigurationSpace/Conditions/" + std::to_string(i)),
                         "condition " + std::to_string(i)));
    d_.spec["constraints"] = out;
  }

  // ProblemSize becomes dims problem_size_0.. (what ProblemSize[i] in expressions becomes) and
  // the default suite.
  void dims(const ojson& kernel) {
    ojson sizes = kernel.contains("ProblemSize") ? kernel.at("ProblemSize") : ojson::array();
    if (sizes.is_number_integer()) sizes = ojson::array({sizes});
    if (!sizes.is_array())
      throw ImportError("KernelSpecification/ProblemSize: expected an integer or a list, got " + std::string(sizes.type_name()));
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
    const ojson none = ojson::array();
    const ojson& all = kernel.contains("Arguments") ? list(kernel, "Arguments", "KernelSpecification") : none;
    for (size_t i = 0; i < all.size(); ++i) {
      const ojson& a = all[i];
      const std::string where = "KernelSpecification/Arguments/" + std::to_string(i);
      const std::string name = text_or(a, "Name", where, "arg" + std::to_string(args.size()));
      const std::string type = text(a, "Type", where);
      const std::string memory = text(a, "MemoryType", where);
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
      const std::string access = text_or(a, "AccessType", where, "ReadWrite");
      ojson b = {{"name", name}, {"dtype", "'" + dtype(type) + "'"},
                 {"count", a.contains("Size") ? expr(a.at("Size"), "argument " + name + " Size") : std::string("1")},
                 {"role", access == "ReadOnly" ? "input" : "output"}};
      if (access == "ReadOnly") b["init"] = {{"lo", -1}, {"hi", 1}};
      if (access == "ReadWrite")
        d_.notes.push_back("argument " + name + " is ReadWrite: kforge fills outputs with NaN before each launch; make it an input or split it");
      if (text_or(a, "FillType", where, "") == "Constant" && access == "ReadOnly")
        d_.notes.push_back("argument " + name + ": constant fill " + a.value("FillValue", ojson(0)).dump() + " becomes kforge's seeded uniform fill in [lo, hi)");
      buffers.push_back(b);
      args.push_back({{"buffer", name}});
    }
    d_.spec["buffers"] = buffers;
    d_.spec["args"] = args;
  }

  void launch(const ojson& kernel) {
    const std::string k = "KernelSpecification";
    const bool cuda_grid = text_or(kernel, "GlobalSizeType", k, "OpenCL") == "CUDA";
    ojson grid = ojson::array(), block = ojson::array();
    const ojson& local = object(kernel, "LocalSize", k);
    const ojson& global = object(kernel, "GlobalSize", k);
    if (kernel.contains("SharedMemory") && !kernel.at("SharedMemory").is_number_integer())
      throw ImportError(k + "/SharedMemory: expected an integer, got " + kernel.at("SharedMemory").type_name());
    for (const char* axis : {"X", "Y", "Z"}) {
      const std::string l = local.contains(axis) ? expr(local.at(axis), std::string("LocalSize.") + axis) : "1";
      std::string g = global.contains(axis) ? expr(global.at(axis), std::string("GlobalSize.") + axis) : "1";
      // OpenCL-style sizes count threads; kforge's grid counts blocks, as CUDA-style sizes do.
      if (!cuda_grid) g = "ceil_div(" + g + ", " + l + ")";
      grid.push_back(g);
      block.push_back(l);
    }
    d_.spec["launch"] = {{"grid", grid}, {"block", block},
                         {"smem", std::to_string(kernel.value("SharedMemory", int64_t{0}))}};
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
  ojson j;
  try {
    j = parse_json_file_text<ojson>(read_bounded(path, kMaxT1Bytes, "the bound of T1 files, README.md"), path.string());
  } catch (const JsonFileError& e) {
    throw ImportError(e.what());
  }
  if (!j.is_object()) throw ImportError(path.string() + ": expected a JSON object, got " + j.type_name());
  try {
    return DraftBuilder(path).build(j);
  } catch (const nlohmann::json::exception& e) {
    throw ImportError(path.string() + ": malformed T1 file: " + one_line(e.what()));
  } catch (const ImportError& e) {
    throw ImportError(path.string() + ": " + one_line(e.what()));
  } catch (const std::invalid_argument& e) {  // a value's conversion (space/value.hpp)
    throw ImportError(path.string() + ": " + one_line(e.what()));
  }
}

}  // namespace kf
