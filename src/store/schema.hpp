// The database schema: its DDL, table-driven migrations, and the checks made when a file is
// opened. docs/schema.md explains each table and the choices behind them.
#pragma once
#include "store/sql.hpp"

namespace kf::schema {

// The newest schema version this build knows (the number of migrations).
int current_version();

// Makes db a usable kforge database, or throws StoreError naming the file:
//  - not SQLite / corrupt: "<file>: file is not a database", "<file>: database disk image is malformed";
//  - SQLite with tables but no kforge_meta: "<file>: not a kforge database (no kforge_meta table)";
//  - written by a newer kforge: "<file>: schema version N is newer than this kforge supports (M)".
// A new or empty file gets the schema; an older one is migrated. Sets WAL mode, synchronous,
// foreign keys and the busy timeout. A foreign or unreadable file is never modified.
// Before any of that, a write session's file gets PRAGMA quick_check: a damaged page anywhere
// is reported at once, "<file>: database is corrupt (quick_check: <first problem>)", instead
// of by whichever later query happens to reach it.
void open(sql::Db& db);
// For a read-only connection: classifies the file like open() (same errors) and writes
// nothing; an older schema version is read as it is and returned (the readers fill in what a
// later step added: evaluations.timing_method of schema 4 reads as NULL before it).
int open_read_only(sql::Db& db);

}  // namespace kf::schema
