-- The task table. Times are milliseconds since the Unix epoch; JSON values
-- are text; a lease is (lease_owner, lease_expires_at), both or neither.
CREATE TABLE tasks (
    id TEXT PRIMARY KEY NOT NULL,
    owner TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('submitted', 'working', 'input_required', 'auth_required',
                                           'completed', 'failed', 'cancelled', 'rejected')),
    status_message TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    ttl_ms INTEGER,
    expires_at INTEGER,
    poll_interval_ms INTEGER NOT NULL,
    input_requests TEXT,
    result TEXT,
    error TEXT,
    version INTEGER NOT NULL,
    lease_owner TEXT,
    lease_expires_at INTEGER,
    resumable INTEGER NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    context_id TEXT,
    metadata TEXT
) STRICT;
-- A principal's list, newest first, paged by (created_at, id).
CREATE INDEX tasks_by_owner ON tasks (owner, created_at DESC, id DESC);
-- The sweeper's range query.
CREATE INDEX tasks_by_expiry ON tasks (expires_at) WHERE expires_at IS NOT NULL;
-- Recovery's range query: only running tasks hold leases.
CREATE INDEX tasks_by_lease ON tasks (lease_expires_at) WHERE lease_expires_at IS NOT NULL;
