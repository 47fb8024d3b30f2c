//! Why a filesystem operation was refused or failed. Every message says
//! what happened and what to do instead, for the model reading it.

use std::io;

/// A refused or failed filesystem operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FsError {
    /// The path is absolute.
    #[error(
        "refused: {0:?} is an absolute path; give a path relative to a root (list_roots shows them), e.g. \"src/main.rs\""
    )]
    Absolute(String),
    /// The path has a `..` component.
    #[error("refused: {0:?} contains a `..` component; paths must stay inside their root")]
    ParentDir(String),
    /// The path has a NUL byte.
    #[error("refused: the path contains a NUL byte")]
    NulByte,
    /// The path is longer than the kernel allows.
    #[error("refused: the path is {0} bytes long; the limit is 4096")]
    PathTooLong(usize),
    /// A component is longer than the kernel allows.
    #[error("refused: a path component is {0} bytes long; the limit is 255")]
    NameTooLong(usize),
    /// The kernel found that resolving the path leaves the root (a symbolic
    /// link pointing out, or one swapped in while the path was opened).
    #[error("refused: {0:?} leads outside its root (through a symbolic link); only files inside the root can be used")]
    Escape(String),
    /// Too many symbolic links (a loop) while resolving the path.
    #[error("refused: {0:?} goes through a loop of symbolic links or too many of them")]
    SymlinkLoop(String),
    /// A regular file with more than one name: another name may be outside
    /// the root, so the file is treated as not contained.
    #[error(
        "refused: {path:?} has {links} hard links; a file with more than one name may be reachable from outside the root, so it is not opened"
    )]
    HardLinked {
        /// The path.
        path: String,
        /// Its link count.
        links: u64,
    },
    /// No configured root has that name.
    #[error("no root named {name:?}; the roots are: {known}")]
    UnknownRoot {
        /// The name asked for.
        name: String,
        /// The names there are.
        known: String,
    },
    /// The client's roots do not include the path.
    #[error("refused: {0:?} is outside the roots this client allows (its roots narrow what the server may touch)")]
    OutsideClientRoots(String),
    /// A write under a read-only root.
    #[error("refused: root {0:?} is read-only; writing works only under a root configured writable")]
    ReadOnly(String),
    /// Nothing at that path.
    #[error("{0:?} does not exist")]
    NotFound(String),
    /// Something already at that path.
    #[error("{0:?} already exists")]
    AlreadyExists(String),
    /// A directory where a file was wanted.
    #[error("{0:?} is a directory; use list_directory or directory_tree")]
    IsDirectory(String),
    /// Not a directory where one was wanted.
    #[error("{0:?} is not a directory")]
    NotDirectory(String),
    /// A FIFO, socket or device.
    #[error("refused: {0:?} is not a regular file (a FIFO, socket or device)")]
    NotRegular(String),
    /// Too large for the tool's cap.
    #[error("{path:?} is {size} bytes; the limit for this tool is {limit} bytes{hint}")]
    TooLarge {
        /// The path.
        path: String,
        /// Its size.
        size: u64,
        /// The cap.
        limit: u64,
        /// What to do instead.
        hint: &'static str,
    },
    /// Binary content where text was wanted.
    #[error("{0:?} is not UTF-8 text; use read_media for images and audio, or get_file_info")]
    NotText(String),
    /// A bad argument.
    #[error("{0}")]
    Invalid(String),
    /// Permission denied by the operating system.
    #[error("the operating system denied access to {0:?}")]
    Denied(String),
    /// Any other I/O failure.
    #[error("{path:?}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The failure.
        source: io::Error,
    },
}

impl FsError {
    /// Classifies an I/O error on `path`.
    pub(crate) fn io(path: &str, e: io::Error) -> FsError {
        let path = path.to_owned();
        match e.kind() {
            io::ErrorKind::NotFound => FsError::NotFound(path),
            io::ErrorKind::AlreadyExists => FsError::AlreadyExists(path),
            io::ErrorKind::IsADirectory => FsError::IsDirectory(path),
            io::ErrorKind::NotADirectory => FsError::NotDirectory(path),
            // cap-std reports a resolution that left the base directory
            // (`EXDEV` from `openat2(RESOLVE_BENEATH)`, or its own
            // component-by-component walk) as PermissionDenied without an OS
            // error code; a real EACCES carries one.
            io::ErrorKind::PermissionDenied if e.raw_os_error().is_none() => FsError::Escape(path),
            io::ErrorKind::PermissionDenied => FsError::Denied(path),
            _ if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => FsError::SymlinkLoop(path),
            _ => FsError::Io { path, source: e },
        }
    }
}
