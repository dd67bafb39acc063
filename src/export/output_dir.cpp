#include "export/output_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace kf::exporter {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse_write(const std::string& what) { throw std::runtime_error("export: " + what); }

std::string error_text() { return std::strerror(errno); }

[[noreturn]] void refuse_link(const fs::path& p) {
  refuse_write(p.string() + " is a symbolic link; export does not write through links (remove it, or choose another --out)");
}

// rel's parts. Each must be a plain name: the names are the exporter's own, and this keeps a bug
// in one of them from becoming a path out of the folder.
std::vector<std::string> parts_of(const std::string& rel) {
  std::vector<std::string> parts;
  std::istringstream in(rel);
  for (std::string part; std::getline(in, part, '/');) parts.push_back(part);
  bool plain = !parts.empty() && rel.back() != '/';
  for (const auto& p : parts) plain = plain && !p.empty() && p != "." && p != "..";
  if (!plain) refuse_write("'" + rel + "' is not a relative path of plain names");
  return parts;
}

enum class Kind { None, File, Folder, Link, Other };

Kind kind_of(const struct stat& st) {
  if (S_ISLNK(st.st_mode)) return Kind::Link;
  if (S_ISREG(st.st_mode)) return Kind::File;
  if (S_ISDIR(st.st_mode)) return Kind::Folder;
  return Kind::Other;
}

// What is at p, without following a link there.
Kind kind_at(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) == 0) return kind_of(st);
  if (errno == ENOENT) return Kind::None;
  refuse_write("cannot inspect " + p.string() + ": " + error_text());
}

// "a/b/" -> "a/b", so walking up its parents meets each folder once.
fs::path normal_folder(const fs::path& p) {
  fs::path n = p.lexically_normal();
  if (!n.has_filename() && n.has_relative_path()) n = n.parent_path();
  return n;
}

// The descriptors and undo list of one commit. Everything is undone through descriptors opened
// without following links, so the undo removes what this commit made and nothing else.
class Commit {
 public:
  explicit Commit(const fs::path& root) : root_(root) {}
  ~Commit() {
    for (auto& [key, fd] : dirs_) ::close(fd);
  }

  void open_root() {
    std::vector<fs::path> missing;  // deepest first
    for (fs::path q = root_; !q.empty() && kind_at(q) == Kind::None; q = q.parent_path()) {
      missing.push_back(q);
      if (q == q.parent_path()) break;
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      if (::mkdir(it->c_str(), 0777) == 0) created_root_dirs_.push_back(*it);
      else if (errno != EEXIST) refuse_write("cannot create " + it->string() + ": " + error_text());
    }
    // --out itself may be a link to a folder: the user named it.
    const int fd = ::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) refuse_write("cannot open " + root_.string() + ": " + error_text());
    dirs_[""] = fd;
  }

  // The descriptor of the folder holding rel's file, creating folders as needed.
  int folder_of(const std::vector<std::string>& parts) {
    std::string key;
    int fd = dirs_.at("");
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      const std::string parent = key;
      key += "/" + parts[i];
      if (auto it = dirs_.find(key); it != dirs_.end()) {
        fd = it->second;
        continue;
      }
      const fs::path path = root_ / key.substr(1);
      if (::mkdirat(fd, parts[i].c_str(), 0777) == 0) created_dirs_.push_back({parent, parts[i]});
      else if (errno != EEXIST) refuse_write("cannot create " + path.string() + ": " + error_text());
      const int sub = ::openat(fd, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0 && errno == ELOOP) refuse_link(path);
      if (sub < 0) refuse_write("cannot open " + path.string() + " as a folder: " + error_text());
      dirs_[key] = sub;
      fd = sub;
    }
    folder_key_ = key;
    return fd;
  }

  // Writes content to a fresh temporary file beside name and renames it over name: rename
  // replaces whatever is at name (a link included) and never writes through it.
  // Returns whether a file was there before.
  bool write(int dir, const std::string& name, const std::string& content, const fs::path& path) {
    struct stat st {};
    const Kind before = ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? kind_of(st) : Kind::None;
    if (before == Kind::Link) refuse_link(path);
    if (before != Kind::None && before != Kind::File) refuse_write(path.string() + " exists and is not a regular file");
    std::string tmp;
    int fd = -1;
    for (int n = 0; fd < 0; ++n) {
      tmp = "." + name + ".kforge-tmp-" + std::to_string(::getpid()) + "-" + std::to_string(n);
      fd = ::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
      if (fd < 0 && (errno != EEXIST || n >= 100)) refuse_write("cannot write " + path.string() + ": " + error_text());
    }
    pending_ = {folder_key_, tmp};
    for (size_t done = 0; done < content.size();) {
      const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const std::string why = error_text();
        ::close(fd);
        refuse_write("cannot write " + path.string() + ": " + why);
      }
      done += static_cast<size_t>(n);
    }
    if (::close(fd) != 0) refuse_write("cannot write " + path.string() + ": " + error_text());
    if (::renameat(dir, tmp.c_str(), dir, name.c_str()) != 0) refuse_write("cannot write " + path.string() + ": " + error_text());
    pending_ = {};
    if (before == Kind::None) created_files_.push_back({folder_key_, name});
    return before == Kind::File;
  }

  // Removes what this commit created, newest first; what was there before stays.
  void undo() noexcept {
    const auto remove = [this](const Entry& e, int flags) {
      if (auto it = dirs_.find(e.folder); it != dirs_.end()) ::unlinkat(it->second, e.name.c_str(), flags);
    };
    if (!pending_.name.empty()) remove(pending_, 0);
    for (auto it = created_files_.rbegin(); it != created_files_.rend(); ++it) remove(*it, 0);
    for (auto it = created_dirs_.rbegin(); it != created_dirs_.rend(); ++it) remove(*it, AT_REMOVEDIR);
    for (auto it = created_root_dirs_.rbegin(); it != created_root_dirs_.rend(); ++it) ::rmdir(it->c_str());
  }

 private:
  struct Entry {
    std::string folder;  // key of dirs_: "" (the root) or "/runners"
    std::string name;
  };
  fs::path root_;
  std::map<std::string, int> dirs_;
  std::string folder_key_;
  Entry pending_;
  std::vector<Entry> created_files_, created_dirs_;
  std::vector<fs::path> created_root_dirs_;
};

}  // namespace

void OutputDir::add(const std::string& rel, std::string content) {
  parts_of(rel);
  staged_.push_back({rel, std::move(content)});
}

void OutputDir::add_copy(const std::string& rel, const fs::path& source) {
  std::ifstream in(source, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in || !bytes) refuse_write("cannot read " + source.string());
  add(rel, bytes.str());
}

OutputDir::Written OutputDir::commit() {
  const fs::path root = normal_folder(root_);
  // Refuse a link (or a file where a folder goes) before writing anything, so the common case
  // fails whole; write() checks again for what changes meanwhile.
  const Kind root_kind = kind_at(root);
  if (root_kind == Kind::Link && !fs::exists(root)) refuse_write(root.string() + " is a symbolic link to nothing");
  if (root_kind != Kind::None) {
    if (!fs::is_directory(root)) refuse_write(root.string() + " exists and is not a folder");
    for (const Staged& s : staged_) {
      const std::vector<std::string> parts = parts_of(s.rel);
      fs::path path = root;
      for (size_t i = 0; i < parts.size(); ++i) {
        path /= parts[i];
        const Kind k = kind_at(path);
        if (k == Kind::Link) refuse_link(path);
        if (k == Kind::None) break;
        if (i + 1 < parts.size() && k != Kind::Folder) refuse_write(path.string() + " exists and is not a folder");
        if (i + 1 == parts.size() && k != Kind::File) refuse_write(path.string() + " exists and is not a regular file");
      }
    }
  }
  Written out;
  Commit c(root);
  try {
    c.open_root();
    for (const Staged& s : staged_) {
      const std::vector<std::string> parts = parts_of(s.rel);
      const fs::path path = root / s.rel;
      if (c.write(c.folder_of(parts), parts.back(), s.content, path)) out.replaced.push_back(s.rel);
      out.files.push_back(path);
    }
  } catch (...) {
    c.undo();
    throw;
  }
  return out;
}

}  // namespace kf::exporter
