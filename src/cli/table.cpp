#include "cli/table.hpp"

#include <cstdio>
#include <iostream>

namespace kf::cli {

namespace {

std::string render(const nlohmann::json& v, int precision) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_float()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", precision, v.get<double>());
    return buf;
  }
  return v.dump();
}

}  // namespace

void Table::add(nlohmann::json row, std::map<std::string, std::string> text) {
  rows_.push_back(std::move(row));
  text_.push_back(std::move(text));
}

std::string Table::cell(const Column& c, const std::string& s) const {
  const size_t w = static_cast<size_t>(std::max(c.width, 0));
  if (s.size() >= w) return s;
  return c.left ? s + std::string(w - s.size(), ' ') : std::string(w - s.size(), ' ') + s;
}

std::string Table::text() const {
  std::string out;
  auto line = [&](auto&& value_of) {
    std::string l;
    for (size_t i = 0; i < columns_.size(); ++i) l += (i ? " " : "") + cell(columns_[i], value_of(columns_[i]));
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line([](const Column& c) { return c.title; });
  for (size_t r = 0; r < rows_.size(); ++r)
    line([&](const Column& c) {
      if (auto it = text_[r].find(c.key); it != text_[r].end()) return it->second;
      return render(rows_[r].contains(c.key) ? rows_[r][c.key] : nlohmann::json(), c.precision);
    });
  return out;
}

void print_table(const Table& t, bool json, const std::string& heading, nlohmann::json envelope,
                 const std::string& rows_key) {
  if (json) {
    if (envelope.is_null()) {
      std::cout << t.json().dump(2) << std::endl;
      return;
    }
    envelope[rows_key] = t.json();
    std::cout << envelope.dump(2) << std::endl;
    return;
  }
  if (!heading.empty()) std::cout << heading << "\n";
  std::cout << t.text() << std::flush;
}

}  // namespace kf::cli
