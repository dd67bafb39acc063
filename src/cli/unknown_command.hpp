// A mistyped subcommand ("kforge serach"): CLI11 only says "A subcommand is required"; this
// names the word and the nearest command.
#pragma once
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kf::cli {

// "unknown command 'serach'; did you mean 'search'?" when the first word of args that is not an
// option (nor the value of one of app's options) names none of app's subcommands; nullopt
// otherwise (no such word, or a known command).
std::optional<std::string> unknown_command(const CLI::App& app, const std::vector<std::string>& args);

// Edits between two words (insert, delete, replace, swap two neighbours): "serach" -> "search" is 1.
size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace kf::cli
