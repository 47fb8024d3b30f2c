#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolport_fuzz::target("origin")(data));
