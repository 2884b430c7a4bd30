//! Fuzz target: see `iostack::testing::fuzz::experiment`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| iostack::testing::fuzz::experiment(data));
