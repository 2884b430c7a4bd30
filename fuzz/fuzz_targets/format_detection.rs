//! Fuzz target: see `iostack::testing::fuzz::format_detection`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| iostack::testing::fuzz::format_detection(data));
