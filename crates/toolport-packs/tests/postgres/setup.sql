-- The PostgreSQL the SQL pack's ignored tests query: a read-only role and a
-- small shop schema. Run as the superuser (`.ci/run`: su postgres -c psql).
-- The role can read the tables and nothing else; the pack additionally runs
-- every statement in a read-only transaction.
SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'toolport_demo' AND pid <> pg_backend_pid();
DROP DATABASE IF EXISTS toolport_demo;
DROP ROLE IF EXISTS toolport_ro;
CREATE ROLE toolport_ro LOGIN PASSWORD 'toolport_ro' NOSUPERUSER NOCREATEDB NOCREATEROLE;
ALTER ROLE toolport_ro SET default_transaction_read_only = on;
CREATE DATABASE toolport_demo;
REVOKE ALL ON DATABASE toolport_demo FROM PUBLIC;
GRANT CONNECT ON DATABASE toolport_demo TO toolport_ro;
\connect toolport_demo
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO toolport_ro;
CREATE TABLE customers (
    id integer PRIMARY KEY,
    name text NOT NULL,
    email text NOT NULL UNIQUE,
    country char(2) NOT NULL,
    created_at timestamptz NOT NULL,
    external_id uuid NOT NULL
);
CREATE TABLE products (
    id integer PRIMARY KEY,
    name text NOT NULL,
    category text NOT NULL,
    price numeric(10, 2) NOT NULL
);
CREATE TABLE orders (
    id integer PRIMARY KEY,
    customer_id integer NOT NULL REFERENCES customers(id),
    ordered_on date NOT NULL,
    status text NOT NULL
);
CREATE TABLE order_items (
    order_id integer NOT NULL REFERENCES orders(id),
    product_id integer NOT NULL REFERENCES products(id),
    quantity integer NOT NULL,
    PRIMARY KEY (order_id, product_id)
);
CREATE SEQUENCE order_seq;
CREATE VIEW order_totals AS
    SELECT o.id AS order_id, o.customer_id, sum(i.quantity * p.price) AS total
    FROM orders o JOIN order_items i ON i.order_id = o.id JOIN products p ON p.id = i.product_id
    GROUP BY o.id;
INSERT INTO customers
    SELECT g, 'Customer ' || g, 'c' || g || '@example.com', (ARRAY['GB', 'US', 'NL'])[g % 3 + 1],
           timestamptz '2025-01-01 00:00:00+00' + g * interval '1 day',
           ('00000000-0000-4000-8000-' || lpad(g::text, 12, '0'))::uuid
    FROM generate_series(1, 10) g;
INSERT INTO products VALUES (1, 'Keyboard', 'hardware', 129.00), (2, 'Trackball', 'hardware', 89.50),
    (3, 'TAOCP', 'books', 199.99), (4, 'Lamp', 'furniture', 39.05);
INSERT INTO orders SELECT g, g % 10 + 1, date '2025-03-01' + g, (ARRAY['placed', 'shipped', 'delivered'])[g % 3 + 1]
    FROM generate_series(1, 20) g;
INSERT INTO order_items SELECT g, g % 4 + 1, g % 3 + 1 FROM generate_series(1, 20) g;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO toolport_ro;
-- Usage, so that nextval() is stopped by the read-only transaction, not by a missing grant.
GRANT USAGE, SELECT ON SEQUENCE order_seq TO toolport_ro;
