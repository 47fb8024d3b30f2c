//! Link settings of the `toolport` binary.
//!
//! - Relative relocations are packed (`-z pack-relative-relocs`, DT_RELR,
//!   binutils 2.38+ and glibc 2.36+): the position-independent binary carried
//!   1.1 MB of them, which the loader reads at every start and which stayed
//!   resident. Packed, they are ~14 KB and idle RSS falls by ~1.5 MiB, with
//!   ASLR kept (a non-PIE link saved a little more but gives up ASLR).
//! - Release builds linked by LLD (rustc's default linker on x86_64 Linux
//!   since 1.90) put what the server runs to start, idle and answer its first
//!   requests together, before the rest of the code: `layout/start.ld` (made
//!   by `benches/layout/order.sh`) gathers those functions into a section of
//!   their own, by exact name and by patterns that survive a rebuild (exact
//!   names carry hashes that change when dependencies or the toolchain do).
//!   Spread over the whole binary, start-up touched pages in every corner of
//!   22 MB of code and kept ~8 MiB of it resident; together it is ~1.5 MiB.
//!   `TOOLPORT_LAYOUT=off` links without them: valgrind attributes code only
//!   inside `.text`, and the script that makes the files runs the binary
//!   under callgrind.
//! - `TOOLPORT_LINK_MAP=PATH` writes the linker's map of the binary to PATH:
//!   which function lies where, for the scripts that study its layout.

use std::path::Path;

fn main() {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    let script = Path::new(&var("CARGO_MANIFEST_DIR")).join("layout/start.ld");
    println!("cargo:rerun-if-changed={}", script.display());
    println!("cargo:rerun-if-env-changed=TOOLPORT_LINK_MAP");
    println!("cargo:rerun-if-env-changed=TOOLPORT_LAYOUT");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let wanted = var("TOOLPORT_LAYOUT") != "off";
    if wanted && var("PROFILE") == "release" && links_with_lld() && script.exists() {
        println!("cargo:rustc-link-arg-bins=-Wl,-T,{}", script.display());
    }
    if let Ok(path) = std::env::var("TOOLPORT_LINK_MAP") {
        println!("cargo:rustc-link-arg-bins=-Wl,-Map={path}");
    }
}

/// Whether rustc links this target with its own LLD, for which the script
/// was written and tried (GNU ld reads `.text.start` input sections into its
/// own `.text`): x86_64 Linux with glibc from rustc 1.90 on, unless the
/// build chose another linker.
fn links_with_lld() -> bool {
    let target = std::env::var("TARGET").unwrap_or_default();
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let linker_env = format!("CARGO_TARGET_{}_LINKER", target.to_uppercase().replace('-', "_"));
    let chosen_elsewhere =
        flags.contains("linker") || flags.contains("fuse-ld") || std::env::var_os(linker_env).is_some();
    target == "x86_64-unknown-linux-gnu" && !chosen_elsewhere && rustc_minor().is_some_and(|minor| minor >= 90)
}

/// The minor version of the rustc building this crate (`rustc 1.95.0 ...`).
fn rustc_minor() -> Option<u32> {
    let rustc = std::env::var("RUSTC").ok()?;
    let out = std::process::Command::new(rustc).arg("--version").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    text.split_whitespace().nth(1)?.split('.').nth(1)?.parse().ok()
}
