//! The link settings of `build.rs` hold: the binary stays position
//! independent (ASLR) and carries its relative relocations packed (RELR), so
//! the loader reads a few kilobytes of them instead of a megabyte
//! (docs/performance.md, "Idle RSS").
#![cfg(all(target_os = "linux", target_env = "gnu"))]

/// `e_type` of a position-independent executable.
const ET_DYN: u16 = 3;
/// `sh_type` of packed relative relocations.
const SHT_RELR: u32 = 19;

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(bytes[at..at + 2].try_into().expect("two bytes"))
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"))
}

/// The `sh_type` of every section of a little-endian ELF64 file.
fn section_types(elf: &[u8]) -> Vec<u32> {
    assert_eq!(&elf[..6], b"\x7fELF\x02\x01", "a little-endian ELF64 file");
    let table = usize::try_from(u64_at(elf, 0x28)).expect("offset fits");
    let entry_size = usize::from(u16_at(elf, 0x3a));
    let count = usize::from(u16_at(elf, 0x3c));
    (0..count).map(|i| u32_at(elf, table + i * entry_size + 4)).collect()
}

#[test]
fn the_binary_is_position_independent_with_packed_relocations() {
    let elf = std::fs::read(env!("CARGO_BIN_EXE_toolport")).expect("read the toolport binary");
    assert_eq!(u16_at(&elf, 0x10), ET_DYN, "toolport must stay a PIE (ASLR)");
    assert!(
        section_types(&elf).contains(&SHT_RELR),
        "toolport has no .relr.dyn: build.rs no longer packs relative relocations"
    );
}

/// `layout/start.ld` is what build.rs hands the linker for release builds:
/// one output section before `.text`, one input section pattern a line, in
/// names a linker script reads as they are (no quoting needed).
#[test]
fn the_start_up_layout_script_is_well_formed() {
    let script =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/layout/start.ld")).expect("read start.ld");
    let lines: Vec<&str> = script.lines().map(str::trim).filter(|l| !l.starts_with("/*")).collect();
    assert_eq!(
        lines[..4],
        ["SECTIONS", "{", ".text.start :", "{"],
        "an output section .text.start"
    );
    assert_eq!(
        lines[lines.len() - 3..],
        ["}", "}", "INSERT BEFORE .text;"],
        "inserted before .text"
    );
    let entries = &lines[4..lines.len() - 3];
    assert!(
        entries.len() > 1000,
        "only {} functions placed: regenerate with benches/layout/order.sh",
        entries.len()
    );
    for entry in entries {
        let section = entry
            .strip_prefix("*(.text.")
            .and_then(|rest| rest.strip_suffix(')'))
            .unwrap_or_else(|| panic!("not an input section description: {entry}"));
        assert!(
            !section.is_empty() && section.chars().all(|c| c.is_ascii_alphanumeric() || "_.$*".contains(c)),
            "a section name a linker script would misread: {entry}"
        );
    }
}
