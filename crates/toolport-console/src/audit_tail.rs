//! The last records of the audit file, read from its end: the file may be
//! large, the console wants a screenful.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

/// At most this much of the file's end is read.
const TAIL_BYTES: u64 = 256 * 1024;

/// The last `limit` records, newest first. A line that is not JSON (a torn
/// last line while the writer appends) is skipped.
pub(crate) fn tail(path: &Path, limit: usize) -> std::io::Result<Vec<Value>> {
    let mut file = std::fs::File::open(path)?;
    let length = file.metadata()?.len();
    let start = length.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::with_capacity((length - start) as usize);
    file.take(TAIL_BYTES).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    // Started mid-file: the first line is a fragment.
    if start > 0 && !lines.is_empty() {
        lines.remove(0);
    }
    Ok(lines
        .iter()
        .rev()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(Value::is_object)
        .take(limit)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_the_newest_whole_records_first() {
        let dir = std::env::temp_dir().join(format!("toolport-console-audit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("audit.jsonl");
        let mut text = String::new();
        for i in 0..20_000 {
            text.push_str(&format!(
                "{{\"n\":{i},\"tool\":\"echo\",\"pad\":\"{}\"}}\n",
                "x".repeat(20)
            ));
        }
        text.push_str("{\"n\": torn");
        std::fs::write(&path, &text).unwrap();
        let records = tail(&path, 5).unwrap();
        let numbers: Vec<i64> = records.iter().map(|r| r["n"].as_i64().unwrap()).collect();
        assert_eq!(numbers, vec![19_999, 19_998, 19_997, 19_996, 19_995]);
        assert!(
            tail(&path, 100_000).unwrap().len() < 20_000,
            "only the file's end is read"
        );
        std::fs::write(&path, "").unwrap();
        assert!(tail(&path, 5).unwrap().is_empty());
        assert!(tail(&dir.join("missing"), 5).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
