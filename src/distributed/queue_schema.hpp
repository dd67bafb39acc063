// The tables of the distributed work queue (dist_campaigns, dist_agents, dist_work), created by
// WorkQueue on first use. PostgreSQL only: they are not part of the SQLite schema, since a
// database file is never shared between machines.
#pragma once

namespace kf {

inline constexpr const char* kQueueSchema = R"sql(
CREATE TABLE IF NOT EXISTS dist_campaigns (
  campaign_id  BIGINT PRIMARY KEY REFERENCES campaigns(id),
  family       TEXT NOT NULL,
  options_json TEXT NOT NULL,
  device_json  TEXT,
  state        TEXT NOT NULL,
  heartbeat    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS dist_agents (
  id          TEXT PRIMARY KEY,
  device_json TEXT NOT NULL,
  device_key  TEXT NOT NULL,
  gpus        BIGINT NOT NULL,
  state       TEXT NOT NULL,
  started_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  heartbeat   TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS dist_work (
  id            BIGSERIAL PRIMARY KEY,
  campaign_id   BIGINT NOT NULL REFERENCES campaigns(id),
  family        TEXT NOT NULL,
  shape_key     TEXT NOT NULL,
  shape_json    TEXT NOT NULL,
  config_json   TEXT NOT NULL,
  variant_hash  TEXT NOT NULL,
  device_key    TEXT NOT NULL,
  state         TEXT NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'leased', 'done', 'abandoned', 'withdrawn')),
  claims        BIGINT NOT NULL DEFAULT 0,
  lease_agent   TEXT,
  lease_token   TEXT,
  lease_expires TIMESTAMPTZ,
  attempt_id    BIGINT REFERENCES attempts(id),
  evaluation_id BIGINT REFERENCES evaluations(id),
  error         TEXT NOT NULL DEFAULT '',
  delivered     BOOLEAN NOT NULL DEFAULT FALSE,
  created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  finished_at   TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS dist_work_claim ON dist_work (device_key, state, id);
CREATE INDEX IF NOT EXISTS dist_work_finished ON dist_work (campaign_id, shape_key, state) WHERE NOT delivered;
)sql";

}  // namespace kf
