// Configs and extra #defines typed by a user (`export --config`, `bench --config`, `--define`),
// as opposed to configs a strategy proposes: partial configs are completed from the family's
// first default, and extra defines (diagnostics, experimental switches) are checked so they can
// never shadow a parameter or a specialized dimension.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "family/family.hpp"

namespace kf {

// "BLOCK_M=64,MMA=wgmma": parameters not named keep the value of the family's first default
// config (or the first value of their domain when the family has no defaults). Throws SpecError
// for an unknown parameter or a value outside its domain, std::invalid_argument for bad syntax.
Config parse_user_config(const Family& f, const std::string& text);

// Extra defines, each "NAME=VALUE" (several per argument, comma-separated). They render like
// parameters (NAME=3 -> "#define KF_NAME 3", NAME=fast -> "#define KF_NAME_FAST 1"), so a
// template tests them as it tests its parameters. Throws SpecError for a name that is not an
// identifier or that is a parameter or a dimension of the family (its define would clash).
Assignment parse_defines(const Family& f, const std::vector<std::string>& args);
// The checks of parse_defines on an already parsed set.
void check_defines(const Family& f, const Assignment& defines);

// A config with its own extra defines, as `bench --config` takes it: "CONFIG[;DEFINES]".
// CONFIG is "K=V,..." (completed as parse_user_config does) or "best[,K=V,...]": the shape's
// stored winner (from `best`, called only then; it throws when there is none) with overrides.
// DEFINES is "NAME=V,..." as for parse_defines.
struct UserVariant {
  std::string text;  // as given
  Config config;
  Assignment defines;
};
UserVariant parse_user_variant(const Family& f, const std::string& text, const std::function<Config()>& best);

}  // namespace kf
