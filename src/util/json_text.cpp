#include "util/json_text.hpp"

#include <algorithm>
#include <fstream>
#include <unordered_map>
#include <vector>

namespace kf {

namespace {

// A SAX listener that builds nothing: it keeps the path to the value being read, so that the
// parser's error can be placed in the document.
class Locator {
 public:
  using json = nlohmann::json;

  bool null() { return value(); }
  bool boolean(bool) { return value(); }
  bool number_integer(json::number_integer_t) { return value(); }
  bool number_unsigned(json::number_unsigned_t) { return value(); }
  bool number_float(json::number_float_t, const json::string_t&) { return value(); }
  bool string(json::string_t&) { return value(); }
  bool binary(json::binary_t&) { return value(); }
  bool start_object(size_t) {
    stack_.push_back({false, 0, {}, false});
    return true;
  }
  bool key(json::string_t& k) {
    stack_.back().key = k;
    stack_.back().has_key = true;
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    return value();
  }
  bool start_array(size_t) {
    stack_.push_back({true, 0, {}, false});
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    return value();
  }
  bool parse_error(size_t position, const std::string&, const nlohmann::detail::exception& ex) {
    position_ = position;
    message_ = ex.what();
    pointer_ = pointer();
    return false;
  }

  size_t position() const { return position_; }
  const std::string& message() const { return message_; }
  const std::string& error_pointer() const { return pointer_; }

 private:
  struct Frame {
    bool array;
    size_t index;
    std::string key;
    bool has_key;
  };

  // A value ended: the next one in an array has the next index; an object waits for a key.
  bool value() {
    if (!stack_.empty()) {
      if (stack_.back().array) ++stack_.back().index;
      else stack_.back().has_key = false;
    }
    return true;
  }

  std::string pointer() const {
    std::string out;
    for (const Frame& f : stack_) {
      if (f.array) {
        out += "/" + std::to_string(f.index);
      } else if (f.has_key) {
        out += "/";
        for (char c : f.key) out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
      } else {
        break;
      }
    }
    return out;
  }

  std::vector<Frame> stack_;
  size_t position_ = 0;
  std::string message_, pointer_;
};

}  // namespace

std::string one_line(std::string s, size_t max_chars) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  if (s.size() > max_chars) s = s.substr(0, max_chars) + "... (cut short)";
  return s;
}

std::string read_bounded(const std::filesystem::path& path, size_t max_bytes, const std::string& limit_doc,
                         const std::string& name) {
  const std::string shown = name.empty() ? path.string() : name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw JsonFileError(shown + ": cannot read the file");
  const auto too_large = [&] {
    const std::string size = max_bytes >= (1u << 20) ? std::to_string(max_bytes >> 20) + " MiB"
                                                     : std::to_string(max_bytes) + " bytes";
    return JsonFileError(shown + ": the file is larger than " + size + " (" + limit_doc + ")");
  };
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes) throw too_large();
  // Read in pieces, never past the bound: a file that grows, or a pipe without end, stops there.
  std::string bytes;
  if (!ec) bytes.reserve(static_cast<size_t>(size));
  std::vector<char> piece(size_t{1} << 16);
  while (in.read(piece.data(), static_cast<std::streamsize>(piece.size())) || in.gcount() > 0) {
    bytes.append(piece.data(), static_cast<size_t>(in.gcount()));
    if (bytes.size() > max_bytes) throw too_large();
  }
  return bytes;
}

namespace {

// Builds an ordered_json from SAX events, with an index of the keys of each large object.
class OrderedBuilder {
 public:
  using J = nlohmann::ordered_json;

  bool null() { return put(J(nullptr)); }
  bool boolean(bool v) { return put(J(v)); }
  bool number_integer(J::number_integer_t v) { return put(J(v)); }
  bool number_unsigned(J::number_unsigned_t v) { return put(J(v)); }
  bool number_float(J::number_float_t v, const J::string_t&) { return put(J(v)); }
  bool string(J::string_t& v) { return put(J(std::move(v))); }
  bool binary(J::binary_t& v) { return put(J::binary(std::move(v))); }
  bool start_object(size_t) {
    frames_.push_back({slot(J::object()), {}});
    return true;
  }
  bool key(J::string_t& k) {
    Frame& f = frames_.back();
    auto& fields = static_cast<J::object_t::Container&>(f.node->get_ref<J::object_t&>());
    // A handful of keys are searched; past that an index answers (built once, then kept up).
    constexpr size_t kIndexFrom = 16;
    if (f.index.empty() && fields.size() >= kIndexFrom)
      for (size_t i = 0; i < fields.size(); ++i) f.index.emplace(fields[i].first, i);
    size_t at = fields.size();
    if (f.index.empty()) {
      for (size_t i = 0; i < fields.size() && at == fields.size(); ++i)
        if (fields[i].first == k) at = i;
    } else if (auto it = f.index.find(k); it != f.index.end()) {
      at = it->second;
    }
    if (at == fields.size()) {
      if (!f.index.empty()) f.index.emplace(k, at);
      fields.emplace_back(std::move(k), nullptr);
    }
    pending_ = &fields[at].second;
    return true;
  }
  bool end_object() {
    frames_.pop_back();
    return true;
  }
  bool start_array(size_t) {
    frames_.push_back({slot(J::array()), {}});
    return true;
  }
  bool end_array() {
    frames_.pop_back();
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

  J& result() { return root_; }

 private:
  struct Frame {
    J* node;
    std::unordered_map<std::string, size_t> index;  // objects of many keys: key -> place
  };

  // Puts a value where the next one goes (the root, an array's end, the slot a key made); the
  // node on the frame stack stays put, since only the innermost open node grows.
  J* slot(J&& v) {
    if (frames_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    J* node = frames_.back().node;
    if (node->is_array()) {
      auto& items = node->get_ref<J::array_t&>();
      items.push_back(std::move(v));
      return &items.back();
    }
    *pending_ = std::move(v);
    return pending_;
  }
  bool put(J&& v) {
    slot(std::move(v));
    return true;
  }

  J root_;
  std::vector<Frame> frames_;
  J* pending_ = nullptr;
};

// "at line L, column C" of the character at `end` (columns as nlohmann counts them: the
// characters read on that line).
std::string place(const std::string& text, size_t end) {
  end = std::min(end, text.size());
  const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(end), '\n'));
  const size_t line_start = end == 0 ? std::string::npos : text.rfind('\n', end - 1);
  const size_t column = end - (line_start == std::string::npos ? 0 : line_start + 1);
  return "at line " + std::to_string(line) + ", column " + std::to_string(column);
}

}  // namespace

std::optional<nlohmann::ordered_json> parse_ordered(const std::string& text) {
  OrderedBuilder b;
  if (!nlohmann::ordered_json::sax_parse(text, &b)) return std::nullopt;
  return std::move(b.result());
}

std::string json_nesting_problem(const std::string& text) {
  size_t depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        // The field: where a parser of the text up to here stands.
        Locator loc;
        nlohmann::json::sax_parse(text.substr(0, i), &loc);
        const std::string at = loc.error_pointer().empty() ? "" : " (at " + loc.error_pointer() + ")";
        return "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels " + place(text, i + 1) + at;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return "";
}

std::string json_problem(const std::string& text) {
  if (std::string deep = json_nesting_problem(text); !deep.empty()) return deep;
  Locator loc;
  if (nlohmann::json::sax_parse(text, &loc)) return "";
  std::string msg = loc.message();
  // Drop nlohmann's "[json.exception.parse_error.101] " prefix.
  if (auto close = msg.find("] "); msg.rfind("[json.exception", 0) == 0 && close != std::string::npos)
    msg = msg.substr(close + 2);
  const std::string at = loc.error_pointer().empty() ? "" : " (at " + loc.error_pointer() + ")";
  // "parse error at line 3, column 7: ..." already places itself; the others (a number
  // overflow) get the line and column of where the parser stopped.
  if (msg.rfind("parse error at line", 0) == 0) {
    if (auto colon = msg.find(": "); colon != std::string::npos) return one_line(msg.substr(0, colon) + at + msg.substr(colon));
    return one_line(msg + at);
  }
  return one_line(msg + " " + place(text, loc.position()) + at);
}

}  // namespace kf
