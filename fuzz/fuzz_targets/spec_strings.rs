//! Fuzz target: see `iostack::testing::fuzz::spec_strings`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| iostack::testing::fuzz::spec_strings(data));
