//! What a caller may name: a path relative to a root ([`PathArgs`], the
//! arguments the read, media and listing tools share), checked lexically
//! before the kernel sees it, and what kind of thing it turned out to be.
//! These checks only give clear messages for the obvious cases; containment
//! itself is enforced by the kernel when the path is opened beneath the
//! root's directory handle (see `sandbox.rs`).

use std::path::{Component, Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;

use super::error::FsError;

#[derive(Deserialize, JsonSchema)]
pub(crate) struct PathArgs {
    /// The path, relative to its root; "." for the root itself.
    pub(crate) path: String,
    /// The root's name (see list_roots); the first root when absent.
    pub(crate) root: Option<String>,
}

/// The longest path accepted, in bytes (Linux `PATH_MAX`).
pub(crate) const MAX_PATH_BYTES: usize = 4096;
/// The longest name of one component, in bytes (Linux `NAME_MAX`).
pub(crate) const MAX_NAME_BYTES: usize = 255;

/// Checks a caller's path and turns it into a relative path: `""` and `"."`
/// name the root itself. Absolute paths, `..` components, NUL bytes and
/// over-long paths or names are refused.
pub(crate) fn relative(path: &str) -> Result<PathBuf, FsError> {
    if path.contains('\0') {
        return Err(FsError::NulByte);
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(FsError::PathTooLong(path.len()));
    }
    let mut out = PathBuf::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(name) => {
                let len = name.as_encoded_bytes().len();
                if len > MAX_NAME_BYTES {
                    return Err(FsError::NameTooLong(len));
                }
                out.push(name);
            }
            Component::CurDir => {}
            Component::ParentDir => return Err(FsError::ParentDir(path.to_owned())),
            Component::RootDir | Component::Prefix(_) => return Err(FsError::Absolute(path.to_owned())),
        }
    }
    Ok(out)
}

/// The path as the kernel gets it: `.` for the root itself.
pub(crate) fn or_dot(path: &Path) -> &Path {
    if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    }
}

/// A relative path for display: `/`-separated, `.` for the root.
pub(crate) fn display(path: &Path) -> String {
    if path.as_os_str().is_empty() {
        ".".to_owned()
    } else {
        path.to_string_lossy().into_owned()
    }
}

/// What a directory entry is, as the tools report it.
pub(crate) fn kind_of(file_type: cap_std::fs::FileType) -> &'static str {
    if file_type.is_symlink() {
        "symlink"
    } else if file_type.is_dir() {
        "directory"
    } else if file_type.is_file() {
        "file"
    } else {
        "other"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_relative_paths_pass_and_are_normalised() {
        assert_eq!(relative("a/b.txt").unwrap(), PathBuf::from("a/b.txt"));
        assert_eq!(relative("./a//b/").unwrap(), PathBuf::from("a/b"));
        assert_eq!(relative("").unwrap(), PathBuf::new());
        assert_eq!(relative(".").unwrap(), PathBuf::new());
        // Only real `..` components are refused; names that merely contain dots are names.
        assert_eq!(relative("..a/b..").unwrap(), PathBuf::from("..a/b.."));
        assert_eq!(relative("%2e%2e/x").unwrap(), PathBuf::from("%2e%2e/x"));
    }

    #[test]
    fn hostile_paths_are_refused_with_their_reason() {
        assert!(matches!(relative("../etc/passwd"), Err(FsError::ParentDir(_))));
        assert!(matches!(relative("a/../../b"), Err(FsError::ParentDir(_))));
        assert!(matches!(relative("/etc/passwd"), Err(FsError::Absolute(_))));
        assert!(matches!(relative("a\0b"), Err(FsError::NulByte)));
        assert!(matches!(relative(&"a/".repeat(3000)), Err(FsError::PathTooLong(6000))));
        assert!(matches!(relative(&"n".repeat(256)), Err(FsError::NameTooLong(256))));
    }
}
