// Where each evaluation comes from (evaluations.provenance, schema 5): kforge's own records, whose ok means
// the gate passed, apart from other tools' imported ones, which never rank as a winner; the migration that adds
// the column, on a copy of the shipped results.db and on a file holding imported rows.
#include "store/store_copy.hpp"
#include "store_test_support.hpp"

namespace {

const DeviceKey kImported = kf::imported_device("Some GPU");

EvaluationRecord imported_eval(const Config& c, double median) {
  EvaluationRecord e = ok_eval(c, median, kImported);
  e.provenance = kf::Provenance::Imported;
  return e;
}

// The shipped database of the repository (tests/../results.db).
fs::path shipped_db() { return fs::path(KFORGE_TEST_DIR) / ".." / "results.db"; }

// Turns a file of the current schema back into one of schema 4: no provenance column.
void make_schema_four(const fs::path& p) {
  Raw raw(p);
  raw.exec("ALTER TABLE evaluations DROP COLUMN provenance");
  raw.exec("UPDATE kforge_meta SET value = '4' WHERE key = 'schema_version'");
}

int64_t schema_version(const fs::path& p) {
  return Raw(p).count("SELECT value FROM kforge_meta WHERE key = 'schema_version'");
}

}  // namespace

TEST(StoreProvenance, ImportedRecordsRoundTripAndNeverRankUnlessAsked) {
  TempDb t;
  Store s(t.path());
  s.add_evaluation(ok_eval(config(64), 10.0));
  s.add_evaluation(imported_eval(config(128), 1.0));  // faster, but never gated here
  const auto all = s.evaluations("gemm");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].provenance, kf::Provenance::Kforge);
  EXPECT_TRUE(all[0].gate_passed());
  EXPECT_EQ(all[1].provenance, kf::Provenance::Imported);
  EXPECT_FALSE(all[1].gate_passed());

  const auto top = s.top("gemm", kShape, std::nullopt, 5);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_DOUBLE_EQ(top[0].timing->median_us, 10.0);
  EXPECT_DOUBLE_EQ(s.best("gemm", kShape, std::nullopt)->timing->median_us, 10.0);
  EXPECT_FALSE(s.best("gemm", kShape, kImported).has_value());
  const auto seeds = s.top("gemm", kShape, std::nullopt, 5, kf::RecordsFrom::KforgeAndImported);
  ASSERT_EQ(seeds.size(), 2u);
  EXPECT_DOUBLE_EQ(seeds[0].timing->median_us, 1.0);
}

TEST(StoreProvenance, AnUnmeasuredRecordIsNotStored) {
  TempDb t;
  Store s(t.path());
  EvaluationRecord e = ok_eval(config(64), 10.0);
  e.provenance = kf::Provenance::Unmeasured;
  try {
    s.add_evaluation(e);
    ADD_FAILURE() << "stored a record nobody measured";
  } catch (const StoreError& ex) {
    EXPECT_NE(std::string(ex.what()).find("never measured"), std::string::npos) << ex.what();
  }
  EXPECT_TRUE(s.evaluations("gemm").empty());
}

// The shipped results.db (schema 4, kforge's own records only): migrated once, every row kept and kforge's,
// the winners unchanged; opening it again writes nothing.
TEST(StoreProvenance, TheShippedDatabaseMigratesOnceAndKeepsItsWinners) {
  ASSERT_TRUE(fs::exists(shipped_db())) << shipped_db();
  TempDb t;
  fs::copy_file(shipped_db(), t.path());
  const int64_t rows = Raw(t.path()).count("SELECT count(*) FROM evaluations");
  ASSERT_GT(rows, 0);
  const std::vector<std::string> families{"gemm", "sdpa_fwd", "sdpa_basic", "faulty"};
  std::map<std::string, int64_t> winners_before;  // "family shape" -> the winner's id
  {
    Store old(t.path(), Store::Access::ReadOnly);  // read as it is: provenance by the migration's rule
    for (const auto& f : families) {
      for (const auto& e : old.evaluations(f)) EXPECT_EQ(e.provenance, kf::Provenance::Kforge);
      for (const auto& s : old.shapes(f))
        if (auto b = old.best(f, s, std::nullopt)) winners_before[f + " " + kf::to_string(s)] = b->id;
    }
  }
  ASSERT_GE(winners_before.size(), 4u);
  { Store s(t.path()); }
  EXPECT_EQ(schema_version(t.path()), kf::schema::current_version());
  EXPECT_EQ(Raw(t.path()).count("SELECT count(*) FROM evaluations"), rows);
  EXPECT_EQ(Raw(t.path()).count("SELECT count(*) FROM evaluations WHERE provenance = 'kforge'"), rows);
  const std::string migrated = read_bytes(t.path());
  { Store again(t.path()); }  // the current version: nothing to do
  EXPECT_EQ(read_bytes(t.path()) == migrated, true) << "opening a migrated file again changed it";
  std::map<std::string, int64_t> winners_after;
  Store s(t.path(), Store::Access::ReadOnly);
  for (const auto& f : families)
    for (const auto& sh : s.shapes(f))
      if (auto b = s.best(f, sh, std::nullopt)) winners_after[f + " " + kf::to_string(sh)] = b->id;
  EXPECT_EQ(winners_after, winners_before);
}

// Rows `import --store` wrote before schema 5 (on its device key) are imported: read so from the old file,
// marked so by the migration, and kept so by a copy (`kforge db migrate`).
TEST(StoreProvenance, ImportsOfAnOlderFileBecomeImported) {
  TempDb t;
  {
    Store s(t.path());
    s.add_evaluation(ok_eval(config(64), 10.0));
    s.add_evaluation(imported_eval(config(128), 1.0));
  }
  make_schema_four(t.path());
  {
    Store old(t.path(), Store::Access::ReadOnly);
    const auto all = old.evaluations("gemm");
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[1].provenance, kf::Provenance::Imported);
    EXPECT_DOUBLE_EQ(old.best("gemm", kShape, std::nullopt)->timing->median_us, 10.0);
  }
  const fs::path copy = t.path("copy.db");
  kf::copy_store(t.path().string(), copy.string());
  EXPECT_EQ(Raw(copy).count("SELECT count(*) FROM evaluations WHERE provenance = 'imported'"), 1);
  { Store s(t.path()); }
  EXPECT_EQ(Raw(t.path()).count("SELECT count(*) FROM evaluations WHERE provenance = 'imported'"), 1);
  EXPECT_EQ(Raw(t.path()).count("SELECT count(*) FROM evaluations WHERE provenance = 'kforge'"), 1);
  Store s(t.path(), Store::Access::ReadOnly);
  EXPECT_DOUBLE_EQ(s.best("gemm", kShape, std::nullopt)->timing->median_us, 10.0);
}
