#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolport_fuzz::target("request_state")(data));
