-- The PostgreSQL the task store's ignored tests use: a role with a password
-- that owns a database of its own, as a deployment would configure it
-- (`[tasks] database = "postgres://..."`). Run as the superuser (`.ci/run`:
-- su postgres -c psql). The tests make a schema per test inside it.
SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'toolport_tasks' AND pid <> pg_backend_pid();
DROP DATABASE IF EXISTS toolport_tasks;
DROP ROLE IF EXISTS toolport_tasks;
CREATE ROLE toolport_tasks LOGIN PASSWORD 'toolport_tasks' NOSUPERUSER NOCREATEDB NOCREATEROLE;
CREATE DATABASE toolport_tasks OWNER toolport_tasks;
REVOKE ALL ON DATABASE toolport_tasks FROM PUBLIC;
