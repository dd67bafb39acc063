// Schema migration steps that add a column are idempotent: a file that has the column but an
// older schema_version (a step interrupted between the two by an older build, a copy restored in
// between, two processes migrating the same file) migrates instead of failing with
// "duplicate column name".
#include "store_test_support.hpp"

#ifndef KFORGE_STORE_TEST_PG  // SQLite files only
TEST(SchemaColumns, AColumnAddedBeforeTheVersionBumpIsNotAddedTwice) {
  TempDb t;
  { Store s(t.path()); s.add_evaluation(ok_eval(config(64), 10.0)); }
  // The state an interrupted step 4 leaves: timing_method is there, the version still says 3.
  Raw(t.path()).exec("UPDATE kforge_meta SET value = '3' WHERE key = 'schema_version'");
  {
    Store s(t.path());  // migrates 3 -> current
    const auto all = s.evaluations("gemm");
    ASSERT_EQ(all.size(), 1u);
    ASSERT_TRUE(all[0].timing);
    EXPECT_DOUBLE_EQ(all[0].timing->median_us, 10.0);
  }
  Raw raw(t.path());
  EXPECT_EQ(raw.count("SELECT value FROM kforge_meta WHERE key = 'schema_version'"), kf::schema::current_version());
  EXPECT_EQ(raw.count("SELECT count(*) FROM pragma_table_info('evaluations') WHERE name = 'timing_method'"), 1);
}

// Step 5 re-run on a file that has the provenance column already: the column stays, each row's
// provenance stays (an imported row imported, a kforge row kforge).
TEST(SchemaColumns, TheProvenanceStepRunsAgainOnAFileThatHasItsColumn) {
  TempDb t;
  {
    Store s(t.path());
    s.add_evaluation(ok_eval(config(64), 10.0));
    EvaluationRecord imported = ok_eval(config(128), 1.0);
    imported.device = kf::imported_device("Some GPU");
    imported.provenance = kf::Provenance::Imported;
    s.add_evaluation(imported);
  }
  Raw(t.path()).exec("UPDATE kforge_meta SET value = '4' WHERE key = 'schema_version'");
  { Store s(t.path()); }  // migrates 4 -> current
  Raw raw(t.path());
  EXPECT_EQ(raw.count("SELECT value FROM kforge_meta WHERE key = 'schema_version'"), kf::schema::current_version());
  EXPECT_EQ(raw.count("SELECT count(*) FROM pragma_table_info('evaluations') WHERE name = 'provenance'"), 1);
  EXPECT_EQ(raw.count("SELECT count(*) FROM evaluations WHERE provenance = 'imported'"), 1);
  EXPECT_EQ(raw.count("SELECT count(*) FROM evaluations WHERE provenance = 'kforge'"), 1);
}
#endif
