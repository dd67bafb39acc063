// `kforge db migrate`: copies every kforge table of one database into another (SQLite file to
// PostgreSQL and back), ids kept, in one transaction on the destination.
#pragma once
#include <cstddef>
#include <map>
#include <string>

namespace kf {

// Rows copied per table. Throws StoreError (one line) when either side cannot be opened, or
// the destination already holds results (it must be new or empty: nothing is merged).
std::map<std::string, size_t> copy_store(const std::string& from, const std::string& to);

}  // namespace kf
