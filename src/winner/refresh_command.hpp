// The refresh command a message names: re-gates and re-times a shape's stored winners on a GPU.
#pragma once
#include <string>

#include "family/family.hpp"
#include "store/store.hpp"

namespace kf {

// The command that refreshes one shape, for messages, with the database it reads (and the spec
// folder, unless it is ./search_spaces), each word shell-quoted so it can be pasted as it is:
// "kforge --db 'my runs/r.db' --spec-dir /specs refresh --family F --shape S".
std::string refresh_command(const Store& store, const Family& family, const Shape& shape);

}  // namespace kf
