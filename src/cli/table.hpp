// One way for a command to print its rows: aligned text columns, or (--json) the same rows as
// JSON, so a command never keeps a printf and a JSON builder in step by hand.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kf::cli {

class Table {
 public:
  struct Column {
    std::string title;
    std::string key;     // the row's JSON field shown in this column
    int width = 10;      // 0: no padding (a last, free-length column)
    bool left = false;   // left-aligned instead of right
    int precision = 2;   // digits after the point for real numbers
  };
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

  // A row: all of `row` goes to JSON; a column shows text[key] when given, else row[key]
  // rendered by type (missing or null: "-", reals with the column's precision).
  void add(nlohmann::json row, std::map<std::string, std::string> text = {});
  std::string text() const;  // header line, then one line per row
  const nlohmann::json& json() const { return rows_; }

 private:
  std::string cell(const Column& c, const std::string& s) const;
  std::vector<Column> columns_;
  nlohmann::json rows_ = nlohmann::json::array();
  std::vector<std::map<std::string, std::string>> text_;
};

// Text: `heading` (if any) and the table. JSON: the rows under `rows_key` of `envelope`, or the
// bare array when envelope is null.
void print_table(const Table& t, bool json, const std::string& heading = "", nlohmann::json envelope = nullptr,
                 const std::string& rows_key = "rows");

}  // namespace kf::cli
