//! Containment: every file is reached through a directory handle of its root,
//! and every path is resolved by the kernel beneath that handle
//! (`openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` through cap-std), so
//! `..`, absolute paths and symbolic links that lead out fail when the file is
//! opened, and a link swapped in between a check and the open changes nothing:
//! there is no separate check. Metadata is read from the opened handle.
//!
//! Hard links cannot be told apart from the file's other names, so a regular
//! file with more than one link is refused (its other name may be outside).

use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, Metadata, MetadataExt, OpenOptions, OpenOptionsExt};
use toolport_protocol::roots::ListRootsResult;
use toolport_server::{RequestContext, ToolError};

use super::error::FsError;
use super::path::{display, or_dot, relative};
use super::uri;

/// One configured root, opened once.
#[derive(Debug)]
pub(crate) struct Root {
    /// The name tools address it by.
    pub(crate) name: String,
    /// Its canonical absolute path: for `file://` URIs and the watcher,
    /// never for access decisions.
    pub(crate) path: PathBuf,
    /// The handle every access goes through.
    pub(crate) dir: Dir,
    /// Whether the write tools may change it.
    pub(crate) writable: bool,
}

impl Root {
    /// Opens a root directory.
    pub(crate) fn open(name: String, path: &Path, writable: bool) -> io::Result<Root> {
        let canonical = std::fs::canonicalize(path)?;
        let dir = Dir::open_ambient_dir(&canonical, ambient_authority())?;
        Ok(Root {
            name,
            path: canonical,
            dir,
            writable,
        })
    }

    /// The `file://` URI of a path inside this root.
    pub(crate) fn uri(&self, relative: &Path) -> String {
        uri::file_uri(&self.path.join(relative))
    }
}

/// What one request may touch: parts of the configured roots.
#[derive(Debug, Clone)]
pub(crate) struct Access {
    grants: Vec<Grant>,
}

impl Access {
    /// The directories of `root` this request may use, relative to it
    /// (empty for all of it).
    pub(crate) fn bases(&self, root: &Arc<Root>) -> Vec<PathBuf> {
        self.grants
            .iter()
            .filter(|g| Arc::ptr_eq(&g.root, root))
            .map(|g| g.base.clone())
            .collect()
    }
}

/// A root, or a directory inside it that the client's roots narrowed it to.
#[derive(Debug, Clone)]
struct Grant {
    root: Arc<Root>,
    /// Relative to the root; empty for all of it.
    base: PathBuf,
}

/// The configured roots and how they are resolved.
#[derive(Debug)]
pub(crate) struct Sandbox {
    pub(crate) roots: Vec<Arc<Root>>,
    /// Whether the client's roots narrow access.
    pub(crate) honor_client_roots: bool,
}

impl Sandbox {
    /// Every configured root, for requests whose client declared no roots.
    pub(crate) fn everything(&self) -> Access {
        Access {
            grants: self
                .roots
                .iter()
                .map(|root| Grant {
                    root: root.clone(),
                    base: PathBuf::new(),
                })
                .collect(),
        }
    }

    /// What this request may touch: the configured roots, narrowed by the
    /// client's roots when it declares them. Never wider.
    pub(crate) async fn access(&self, cx: &RequestContext) -> Result<Access, ToolError> {
        if !self.honor_client_roots || !cx.client_capabilities().supports_roots() {
            return Ok(self.everything());
        }
        let listed = cx.roots("toolport.fs.roots").await?;
        Ok(self.narrow(&listed))
    }

    /// The configured roots as narrowed by the client's root list: a client
    /// root inside a configured root grants only that directory; one that
    /// contains a configured root grants that root; others grant nothing.
    pub(crate) fn narrow(&self, listed: &ListRootsResult) -> Access {
        let mut grants = Vec::new();
        for client_root in &listed.roots {
            let Some(client_path) = uri::file_path(&client_root.uri) else {
                continue;
            };
            for root in &self.roots {
                // Components, not strings: `/srv/a` does not contain `/srv/ab`.
                if let Ok(inside) = client_path.strip_prefix(&root.path) {
                    grants.push(Grant {
                        root: root.clone(),
                        base: inside.to_owned(),
                    });
                } else if root.path.starts_with(&client_path) {
                    grants.push(Grant {
                        root: root.clone(),
                        base: PathBuf::new(),
                    });
                }
            }
        }
        Access { grants }
    }

    /// The root named `name`, or the first one.
    pub(crate) fn root(&self, name: Option<&str>) -> Result<Arc<Root>, FsError> {
        match name {
            None | Some("") => Ok(self.roots[0].clone()),
            Some(name) => self
                .roots
                .iter()
                .find(|r| r.name == name)
                .cloned()
                .ok_or_else(|| FsError::UnknownRoot {
                    name: name.to_owned(),
                    known: self.names(),
                }),
        }
    }

    fn names(&self) -> String {
        self.roots
            .iter()
            .map(|r| r.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Resolves a caller's path in a root into something to open.
    pub(crate) fn target(&self, access: &Access, root: Option<&str>, path: &str) -> Result<Target, FsError> {
        let root = self.root(root)?;
        let rel = relative(path)?;
        self.target_in(access, root, rel)
    }

    /// The same for a path already relative to a known root.
    pub(crate) fn target_in(&self, access: &Access, root: Arc<Root>, rel: PathBuf) -> Result<Target, FsError> {
        let grant = access
            .grants
            .iter()
            .filter(|g| Arc::ptr_eq(&g.root, &root) && rel.starts_with(&g.base))
            // The widest grant that covers the path.
            .min_by_key(|g| g.base.components().count())
            .ok_or_else(|| FsError::OutsideClientRoots(display(&rel)))?;
        Ok(Target {
            root,
            base: grant.base.clone(),
            rel,
        })
    }

    /// The root and relative path of a `file://` URI, if it lies under a root.
    pub(crate) fn locate(&self, uri_path: &Path) -> Option<(Arc<Root>, PathBuf)> {
        self.roots.iter().find_map(|root| {
            uri_path
                .strip_prefix(&root.path)
                .ok()
                .map(|rest| (root.clone(), rest.to_owned()))
        })
    }
}

/// A path inside a root, allowed for this request, not opened yet.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) root: Arc<Root>,
    /// The granted directory, relative to the root.
    base: PathBuf,
    /// The path, relative to the root.
    pub(crate) rel: PathBuf,
}

/// Opening a FIFO for reading would block until a writer came.
fn nonblocking() -> i32 {
    rustix::fs::OFlags::NONBLOCK.bits() as i32
}

impl Target {
    /// The path for messages: relative to its root.
    pub(crate) fn display(&self) -> String {
        display(&self.rel)
    }

    /// Its `file://` URI.
    pub(crate) fn uri(&self) -> String {
        self.root.uri(&self.rel)
    }

    /// The granted directory, opened beneath the root; and the path relative to it.
    fn base(&self) -> Result<(Dir, &Path), FsError> {
        let within = self
            .rel
            .strip_prefix(&self.base)
            .expect("a target lies inside its grant");
        let dir = if self.base.as_os_str().is_empty() {
            self.root.dir.try_clone()
        } else {
            self.root.dir.open_dir(&self.base)
        }
        .map_err(|e| self.fail(e))?;
        Ok((dir, within))
    }

    pub(crate) fn fail(&self, e: io::Error) -> FsError {
        FsError::io(&self.display(), e)
    }

    /// Opens a regular file for reading; its metadata comes from the handle.
    pub(crate) fn open_file(&self) -> Result<(File, Metadata), FsError> {
        let (dir, within) = self.base()?;
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(nonblocking());
        let file = dir.open_with(or_dot(within), &options).map_err(|e| self.fail(e))?;
        let meta = file.metadata().map_err(|e| self.fail(e))?;
        self.check_regular(&meta)?;
        Ok((file, meta))
    }

    /// Opens a regular file no larger than `cap` bytes; `hint` ends the
    /// refusal of a larger one (what to use instead).
    pub(crate) fn open_file_capped(&self, cap: u64, hint: &'static str) -> Result<(File, Metadata), FsError> {
        let (file, meta) = self.open_file()?;
        if meta.len() > cap {
            return Err(FsError::TooLarge {
                path: self.display(),
                size: meta.len(),
                limit: cap,
                hint,
            });
        }
        Ok((file, meta))
    }

    /// Refuses directories, special files and files with several names.
    pub(crate) fn check_regular(&self, meta: &Metadata) -> Result<(), FsError> {
        if meta.is_dir() {
            return Err(FsError::IsDirectory(self.display()));
        }
        if !meta.is_file() {
            return Err(FsError::NotRegular(self.display()));
        }
        if meta.nlink() > 1 {
            return Err(FsError::HardLinked {
                path: self.display(),
                links: meta.nlink(),
            });
        }
        Ok(())
    }

    /// Opens a directory.
    pub(crate) fn open_dir(&self) -> Result<Dir, FsError> {
        let (dir, within) = self.base()?;
        if within.as_os_str().is_empty() {
            return Ok(dir);
        }
        dir.open_dir(within).map_err(|e| self.fail(e))
    }

    /// Metadata of the path itself (a symbolic link is not followed).
    pub(crate) fn symlink_metadata(&self) -> Result<Metadata, FsError> {
        let (dir, within) = self.base()?;
        dir.symlink_metadata(or_dot(within)).map_err(|e| self.fail(e))
    }

    /// The parent directory (opened beneath the grant) and the final name,
    /// for creating, replacing and renaming.
    pub(crate) fn parent(&self) -> Result<(Dir, PathBuf), FsError> {
        let (dir, within) = self.base()?;
        let name = within
            .file_name()
            .ok_or_else(|| FsError::Invalid(format!("{:?} names no file inside the root", self.display())))?;
        let parent = within.parent().unwrap_or(Path::new(""));
        let parent = if parent.as_os_str().is_empty() {
            dir
        } else {
            dir.open_dir(parent).map_err(|e| self.fail(e))?
        };
        Ok((parent, PathBuf::from(name)))
    }

    /// Creates the directory and any missing parents; `false` if it was there.
    pub(crate) fn create_dir_all(&self) -> Result<bool, FsError> {
        let (dir, within) = self.base()?;
        if within.as_os_str().is_empty() || dir.is_dir(within) {
            return Ok(false);
        }
        dir.create_dir_all(within).map_err(|e| self.fail(e))?;
        Ok(true)
    }

    /// Refuses writes under a read-only root.
    pub(crate) fn writable(&self) -> Result<(), FsError> {
        if self.root.writable {
            Ok(())
        } else {
            Err(FsError::ReadOnly(self.root.name.clone()))
        }
    }
}

/// Reads `len` bytes at `offset` of an opened file.
pub(crate) fn read_range(file: &mut File, offset: u64, len: u64) -> io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(offset))?;
    let mut buf = Vec::with_capacity(len.min(1 << 24) as usize);
    file.take(len).read_to_end(&mut buf)?;
    Ok(buf)
}

/// A cheap validator for caches in front of reads: changes whenever the
/// file's identity, size, modification or status-change time change, without
/// reading its contents.
pub(crate) fn etag(meta: &Metadata) -> String {
    format!(
        "\"{:x}-{:x}-{:x}.{:x}-{:x}.{:x}\"",
        meta.ino(),
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec()
    )
}
