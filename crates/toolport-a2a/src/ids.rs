//! Fresh ids for messages, artifacts, contexts and push configurations.

/// A random id in the UUID v4 layout (what A2A clients usually send).
pub fn fresh() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS random source is available");
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// RFC 3339 UTC with milliseconds for `millis` since the epoch.
pub(crate) fn timestamp(millis: i64) -> String {
    toolport_server::audit::rfc3339(std::time::Duration::from_millis(millis.max(0) as u64))
}

#[cfg(test)]
mod tests {
    #[test]
    fn fresh_ids_are_uuid_v4_shaped_and_differ() {
        let (a, b) = (super::fresh(), super::fresh());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(a.as_bytes()[14], b'4');
    }
}
