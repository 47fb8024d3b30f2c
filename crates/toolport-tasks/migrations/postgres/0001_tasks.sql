-- The task table. Times are milliseconds since the Unix epoch; JSON values
-- are jsonb; a lease is (lease_owner, lease_expires_at), both or neither.
CREATE TABLE tasks (
    id text PRIMARY KEY,
    owner text NOT NULL,
    status text NOT NULL CHECK (status IN ('submitted', 'working', 'input_required', 'auth_required',
                                           'completed', 'failed', 'cancelled', 'rejected')),
    status_message text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    ttl_ms bigint,
    expires_at bigint,
    poll_interval_ms bigint NOT NULL,
    input_requests jsonb,
    result jsonb,
    error jsonb,
    version bigint NOT NULL,
    lease_owner text,
    lease_expires_at bigint,
    resumable boolean NOT NULL,
    tool text NOT NULL,
    arguments jsonb NOT NULL,
    context_id text,
    metadata jsonb
);
-- A principal's list, newest first, paged by (created_at, id).
CREATE INDEX tasks_by_owner ON tasks (owner, created_at DESC, id DESC);
-- The sweeper's range query.
CREATE INDEX tasks_by_expiry ON tasks (expires_at) WHERE expires_at IS NOT NULL;
-- Recovery's range query: only running tasks hold leases.
CREATE INDEX tasks_by_lease ON tasks (lease_expires_at) WHERE lease_expires_at IS NOT NULL;
