//! The audit key: 32 random bytes, kept hex-encoded in a file of mode 0600.
//! Every record's MAC is HMAC-SHA256 under it, so nobody without the key can
//! rewrite the stream and recompute its chain.

use std::fmt;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

pub(crate) type HmacSha256 = Hmac<Sha256>;

/// Fewest key bytes accepted.
const KEY_BYTES: usize = 32;

/// The key audit records are signed with. Its bytes are never logged:
/// `Debug` shows only its id.
#[derive(Clone)]
pub struct AuditKey {
    bytes: Vec<u8>,
}

impl fmt::Debug for AuditKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditKey")
            .field("id", &self.id())
            .finish_non_exhaustive()
    }
}

impl AuditKey {
    /// A key from its bytes (at least 32).
    pub fn from_bytes(bytes: &[u8]) -> io::Result<AuditKey> {
        if bytes.len() < KEY_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("an audit key needs at least {KEY_BYTES} bytes"),
            ));
        }
        Ok(AuditKey { bytes: bytes.to_vec() })
    }

    /// A new random key.
    pub fn generate() -> AuditKey {
        let mut bytes = vec![0u8; KEY_BYTES];
        getrandom::fill(&mut bytes).expect("the OS random source is available");
        AuditKey { bytes }
    }

    /// Reads a key file: at least 32 bytes, hex-encoded (whitespace around
    /// it is ignored). A file others may read is used, with a warning.
    pub fn load(path: &Path) -> io::Result<AuditKey> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| io::Error::new(e.kind(), format!("the audit key {}: {e}", path.display())))?;
        let bytes = unhex(text.trim()).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the audit key {} must hold at least {KEY_BYTES} bytes as hex (64 hex digits)",
                    path.display()
                ),
            )
        })?;
        if let Ok(meta) = std::fs::metadata(path)
            && meta.permissions().mode() & 0o077 != 0
        {
            tracing::warn!(path = %path.display(), "the audit key file can be read by others; chmod 600 it");
        }
        AuditKey::from_bytes(&bytes).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
    }

    /// Reads the key file, or creates it (mode 0600, a new random key) when
    /// there is none. Two processes creating it at once end with one key:
    /// the file is written aside and linked into place, never seen half written.
    pub fn load_or_create(path: &Path) -> io::Result<AuditKey> {
        match AuditKey::load(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            other => return other,
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let key = AuditKey::generate();
        let aside = path.with_extension(format!("new-{}", std::process::id()));
        {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&aside)?;
            file.write_all(hex(&key.bytes).as_bytes())?;
            file.write_all(b"\n")?;
            file.sync_all()?;
        }
        let linked = std::fs::hard_link(&aside, path);
        let _ = std::fs::remove_file(&aside);
        match linked {
            Ok(()) => {
                tracing::info!(path = %path.display(), id = %key.id(), "created an audit key");
                Ok(key)
            }
            // Another process made it first: use that one.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => AuditKey::load(path),
            Err(e) => Err(e),
        }
    }

    /// A short public name of the key (not derived by hashing the key
    /// alone, so it says nothing about the key): lets `audit verify` tell
    /// "another key" from "tampered".
    pub fn id(&self) -> String {
        let mut mac = self.mac();
        mac.update(b"toolport audit key id");
        hex(&mac.finalize().into_bytes()[..8])
    }

    pub(crate) fn mac(&self) -> HmacSha256 {
        <HmacSha256 as KeyInit>::new_from_slice(&self.bytes).expect("HMAC takes any key length")
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_created_key_is_private_reloads_the_same_and_never_shows_its_bytes() {
        let dir = std::env::temp_dir().join(format!("toolport-key-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("audit.key");
        let key = AuditKey::load_or_create(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let again = AuditKey::load_or_create(&path).unwrap();
        assert_eq!(again.id(), key.id());
        assert_eq!(AuditKey::load(&path).unwrap().bytes, key.bytes);
        assert!(!format!("{key:?}").contains(&hex(&key.bytes)));
        assert_eq!(key.id().len(), 16);
        assert_ne!(AuditKey::generate().id(), key.id());
        std::fs::write(&path, "not hex").unwrap();
        assert!(AuditKey::load(&path).unwrap_err().to_string().contains("64 hex digits"));
        std::fs::write(&path, "abcd").unwrap();
        assert!(AuditKey::load(&path).is_err(), "too short");
        assert_eq!(
            AuditKey::load(&dir.join("none")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
