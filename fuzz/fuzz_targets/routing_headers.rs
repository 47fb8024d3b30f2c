#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolport_fuzz::target("routing_headers")(data));
