//! The demo database a bare `toolport serve` queries: a small shop
//! (customers, products, orders, order items), made once on first run.
//! This is the only place the pack writes to a database, and it writes a
//! new file nobody else can see until it is complete.

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::SqlError;

/// The demo database's file name.
pub const DEMO_FILE: &str = "demo.sqlite";

const SCHEMA: &str = "
CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    country TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE products (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    category TEXT NOT NULL,
    price_cents INTEGER NOT NULL CHECK (price_cents > 0)
);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    ordered_at TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('placed', 'shipped', 'delivered', 'cancelled'))
);
CREATE TABLE order_items (
    order_id INTEGER NOT NULL REFERENCES orders(id),
    product_id INTEGER NOT NULL REFERENCES products(id),
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (order_id, product_id)
);
CREATE INDEX orders_by_customer ON orders(customer_id);
CREATE VIEW order_totals AS
    SELECT o.id AS order_id, o.customer_id, SUM(i.quantity * p.price_cents) AS total_cents
    FROM orders o JOIN order_items i ON i.order_id = o.id JOIN products p ON p.id = i.product_id
    GROUP BY o.id;
";

const CUSTOMERS: &[(&str, &str)] = &[
    ("Ada Lovelace", "GB"),
    ("Grace Hopper", "US"),
    ("Alan Turing", "GB"),
    ("Edsger Dijkstra", "NL"),
    ("Barbara Liskov", "US"),
    ("Donald Knuth", "US"),
    ("Margaret Hamilton", "US"),
    ("Niklaus Wirth", "CH"),
    ("Frances Allen", "US"),
    ("Tim Berners-Lee", "GB"),
];

const PRODUCTS: &[(&str, &str, i64)] = &[
    ("Mechanical keyboard", "hardware", 12900),
    ("Trackball", "hardware", 8900),
    ("27\" monitor", "hardware", 32900),
    ("USB-C hub", "hardware", 4900),
    ("The Art of Computer Programming", "books", 19900),
    ("Structure and Interpretation of Computer Programs", "books", 5900),
    ("Standing desk", "furniture", 54900),
    ("Desk lamp", "furniture", 3900),
];

const STATUSES: &[&str] = &["placed", "shipped", "delivered", "delivered", "cancelled"];

/// Fills a fresh database with the demo schema and deterministic rows.
fn fill(connection: &Connection) -> rusqlite::Result<()> {
    connection.execute_batch(SCHEMA)?;
    let tx = connection.unchecked_transaction()?;
    for (i, (name, country)) in CUSTOMERS.iter().enumerate() {
        let id = i as i64 + 1;
        let email = format!("{}@example.com", name.to_lowercase().replace([' ', '-'], "."));
        let created = format!("2024-{:02}-{:02}", i % 12 + 1, i * 3 % 28 + 1);
        tx.execute(
            "INSERT INTO customers (id, name, email, country, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            rusqlite::params![id, name, email, country, created],
        )?;
    }
    for (i, (name, category, price)) in PRODUCTS.iter().enumerate() {
        tx.execute(
            "INSERT INTO products (id, name, category, price_cents) VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params![i as i64 + 1, name, category, price],
        )?;
    }
    for order in 1..=20i64 {
        let customer = (order * 7) % CUSTOMERS.len() as i64 + 1;
        let status = STATUSES[(order as usize) % STATUSES.len()];
        let date = format!("2025-{:02}-{:02}", order % 12 + 1, (order * 5) % 28 + 1);
        tx.execute(
            "INSERT INTO orders (id, customer_id, ordered_at, status) VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params![order, customer, date, status],
        )?;
        for k in 0..(order % 3 + 1) {
            let product = (order + k * 3) % PRODUCTS.len() as i64 + 1;
            tx.execute(
                "INSERT INTO order_items (order_id, product_id, quantity) VALUES (?1, ?2, ?3)",
                rusqlite::params![order, product, k + 1],
            )?;
        }
    }
    tx.commit()
}

/// Makes `dir/demo.sqlite` unless it exists; returns its path. The file is
/// built under a temporary name and renamed into place, so an interrupted
/// first run leaves no half-made database behind.
pub fn create_demo_database(dir: &Path) -> Result<PathBuf, SqlError> {
    let path = dir.join(DEMO_FILE);
    if path.is_file() {
        return Ok(path);
    }
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        SqlError::Setup(format!(
            "cannot create the demo database in {}: {what}: {e}",
            dir.display()
        ))
    };
    std::fs::create_dir_all(dir).map_err(|e| fail("making the directory", &e))?;
    let temp = dir.join(format!(".{DEMO_FILE}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    let made = Connection::open(&temp).and_then(|c| {
        fill(&c)?;
        c.close().map_err(|(_, e)| e)
    });
    if let Err(e) = made {
        let _ = std::fs::remove_file(&temp);
        return Err(fail("filling it", &e));
    }
    std::fs::rename(&temp, &path).map_err(|e| fail("moving it into place", &e))?;
    Ok(path)
}
