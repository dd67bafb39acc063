// The export's output folder (`--out`). Files are staged in memory while the export is generated
// and written together by commit(), so an export that fails (a constraint, NVRTC, a bad name)
// writes nothing and creates no folder. commit() never writes through a symbolic link: a link
// where it would write a file or a subfolder (CMakeLists.txt, manifest.json, runners/, ...) is
// refused before anything is written, and each file is written to a fresh temporary name through
// directory descriptors opened with O_NOFOLLOW and renamed over its target, so a link that
// appears meanwhile is replaced, never followed. The folder named by --out may itself be a link:
// the user chose it. A commit that fails part way removes what it created (files and folders),
// and only that.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace kf::exporter {

class OutputDir {
 public:
  explicit OutputDir(std::filesystem::path root) : root_(std::move(root)) {}

  // Stages `content` for `rel`, a relative path of plain names ("x.cu", "runners/x_runner.cu").
  void add(const std::string& rel, std::string content);
  // Stages a copy of the file at `source`, read now (e.g. a cubin from the compile cache).
  void add_copy(const std::string& rel, const std::filesystem::path& source);

  struct Written {
    std::vector<std::filesystem::path> files;  // root / rel, in the order staged
    std::vector<std::string> replaced;         // the rels that held a file before
  };
  // Writes everything staged. Throws std::runtime_error ("export: ...", one line) for a link in
  // the way, something that is not a file or folder where one goes, or a failed write.
  Written commit();

 private:
  struct Staged {
    std::string rel;
    std::string content;
  };
  std::filesystem::path root_;
  std::vector<Staged> staged_;
};

}  // namespace kf::exporter
