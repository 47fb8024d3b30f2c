//! Entry points for the fuzz targets (`fuzz/`) and their corpus replay:
//! not an API.

/// Checks `data` as SQL for both databases: refused or let through, never
/// a panic; nothing with a `;` between two statements is let through.
pub fn sql_guard(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for flavor in [crate::sql::guard::Flavor::Sqlite, crate::sql::guard::Flavor::Postgres] {
        let _ = crate::sql::guard::check(&text, flavor);
    }
}
